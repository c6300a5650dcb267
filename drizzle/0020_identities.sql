CREATE TABLE `device_codes` (
	`device_code_hash` text PRIMARY KEY NOT NULL,
	`user_code` text NOT NULL,
	`status` text NOT NULL,
	`user_id` text,
	`interval_s` integer NOT NULL,
	`last_polled_at` integer,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_codes_user_code_unique` ON `device_codes` (`user_code`);--> statement-breakpoint
CREATE INDEX `device_codes_expires` ON `device_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `identities` (
	`provider` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`email` text,
	`linked_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `subject`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `identities_user_provider` ON `identities` (`user_id`,`provider`);--> statement-breakpoint
CREATE TABLE `login_exchange_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`created` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `login_exchange_codes_expires` ON `login_exchange_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oidc_login_flows` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`redirect` text NOT NULL,
	`create` integer NOT NULL,
	`purpose` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `oidc_login_flows_expires` ON `oidc_login_flows` (`expires_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text,
	`email_key` text,
	`username` text NOT NULL,
	`username_key` text NOT NULL,
	`password_hash` text,
	`password_linked_at` integer,
	`country` text NOT NULL,
	`created_at` integer NOT NULL,
	`email_verified_at` integer,
	`banned_at` integer,
	`banned_until` integer,
	`ban_reason` text,
	`deleted_at` integer
);
--> statement-breakpoint
INSERT INTO `__new_users`("id", "email", "email_key", "username", "username_key", "password_hash", "password_linked_at", "country", "created_at", "email_verified_at", "banned_at", "banned_until", "ban_reason", "deleted_at") SELECT "id", "email", "email_key", "username", "username_key", "password_hash", "password_linked_at", "country", "created_at", "email_verified_at", "banned_at", "banned_until", "ban_reason", "deleted_at" FROM `users`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_key_unique` ON `users` (`email_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key_unique` ON `users` (`username_key`);