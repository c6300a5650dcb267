CREATE TABLE `game_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`game_id` text NOT NULL,
	`match_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`claim_round` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`consumed_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`participant_id`) REFERENCES `participants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `game_sessions_token_hash_unique` ON `game_sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `game_sessions_match` ON `game_sessions` (`match_id`);--> statement-breakpoint
CREATE TABLE `games` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_rotated_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`run_after` integer NOT NULL,
	`locked_at` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_status_run_after` ON `jobs` (`status`,`run_after`);--> statement-breakpoint
CREATE TABLE `match_claims` (
	`match_id` text NOT NULL,
	`claim_round` integer NOT NULL,
	`participant_id` text NOT NULL,
	`outcome` text NOT NULL,
	`winner_participant_id` text,
	`score` text,
	`game_session_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`match_id`, `claim_round`, `participant_id`),
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`participant_id`) REFERENCES `participants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `matches` (
	`id` text PRIMARY KEY NOT NULL,
	`tournament_id` text NOT NULL,
	`round` integer NOT NULL,
	`position` integer NOT NULL,
	`status` text NOT NULL,
	`slot1_participant_id` text,
	`slot2_participant_id` text,
	`winner_participant_id` text,
	`next_match_id` text,
	`next_slot` integer,
	`claim_round` integer DEFAULT 1 NOT NULL,
	`decided_at` integer,
	FOREIGN KEY (`tournament_id`) REFERENCES `tournaments`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `matches_tournament_round_position` ON `matches` (`tournament_id`,`round`,`position`);--> statement-breakpoint
CREATE INDEX `matches_slot1` ON `matches` (`slot1_participant_id`);--> statement-breakpoint
CREATE INDEX `matches_slot2` ON `matches` (`slot2_participant_id`);--> statement-breakpoint
CREATE TABLE `participants` (
	`id` text PRIMARY KEY NOT NULL,
	`tournament_id` text NOT NULL,
	`user_id` text NOT NULL,
	`seed` integer NOT NULL,
	FOREIGN KEY (`tournament_id`) REFERENCES `tournaments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `participants_tournament_user` ON `participants` (`tournament_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `participants_tournament_seed` ON `participants` (`tournament_id`,`seed`);--> statement-breakpoint
CREATE INDEX `participants_user` ON `participants` (`user_id`);--> statement-breakpoint
CREATE TABLE `tournaments` (
	`id` text PRIMARY KEY NOT NULL,
	`game_id` text NOT NULL,
	`name` text NOT NULL,
	`format` text NOT NULL,
	`status` text NOT NULL,
	`winner_participant_id` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`completed_at` integer,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `tournaments_game` ON `tournaments` (`game_id`);