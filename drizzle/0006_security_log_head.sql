CREATE TABLE `security_log_head` (
	`id` integer PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL,
	`hash` text NOT NULL
);
