CREATE TABLE `socket_tickets` (
	`ticket_hash` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`user_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`session_id`) REFERENCES `auth_sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `socket_tickets_session` ON `socket_tickets` (`session_id`);--> statement-breakpoint
CREATE INDEX `socket_tickets_expires` ON `socket_tickets` (`expires_at`);