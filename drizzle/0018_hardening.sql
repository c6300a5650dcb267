CREATE TABLE `known_sign_in_places` (
	`subject` text NOT NULL,
	`kind` text NOT NULL,
	`place_hash` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`subject`, `place_hash`)
);
--> statement-breakpoint
CREATE INDEX `known_sign_in_places_last_seen` ON `known_sign_in_places` (`last_seen_at`);--> statement-breakpoint
DROP INDEX `security_events_user`;--> statement-breakpoint
CREATE INDEX `security_events_user_received` ON `security_events` (`user_id`,`received_at`);--> statement-breakpoint
ALTER TABLE `security_log_head` ADD `pruned_seq` integer;--> statement-breakpoint
ALTER TABLE `security_log_head` ADD `pruned_hash` text;--> statement-breakpoint
ALTER TABLE `security_log_head` ADD `pruned_mac` text;--> statement-breakpoint
CREATE INDEX `game_sessions_user_game` ON `game_sessions` (`user_id`,`game_id`);