CREATE TABLE `outbox_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`user_id` text,
	`topic` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_events_id_unique` ON `outbox_events` (`id`);--> statement-breakpoint
CREATE INDEX `outbox_events_user_seq` ON `outbox_events` (`user_id`,`seq`);--> statement-breakpoint
CREATE INDEX `outbox_events_created_at` ON `outbox_events` (`created_at`);