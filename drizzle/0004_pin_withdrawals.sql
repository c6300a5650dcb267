CREATE TABLE `pin_locks` (
	`user_id` text PRIMARY KEY NOT NULL,
	`failures` integer NOT NULL,
	`locks` integer NOT NULL,
	`locked_until` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `pin_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`consumed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `pin_sessions_user` ON `pin_sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `user_pins` (
	`user_id` text PRIMARY KEY NOT NULL,
	`pin_hash` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `withdrawals` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`asset` text NOT NULL,
	`amount` text NOT NULL,
	`destination_address` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`status` text NOT NULL,
	`signature` text,
	`failure_reason` text,
	`pin_session_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `withdrawals_user_key` ON `withdrawals` (`user_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `withdrawals_status` ON `withdrawals` (`status`);