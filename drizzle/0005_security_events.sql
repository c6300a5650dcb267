CREATE TABLE `security_events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`user_id` text,
	`source` text NOT NULL,
	`kind` text NOT NULL,
	`level` text NOT NULL,
	`details` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`received_at` integer NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `security_events_id_unique` ON `security_events` (`id`);--> statement-breakpoint
CREATE INDEX `security_events_user` ON `security_events` (`user_id`);