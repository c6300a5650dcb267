CREATE TABLE `rating_history` (
	`game_id` text NOT NULL,
	`user_id` text NOT NULL,
	`seq` integer NOT NULL,
	`season_id` text NOT NULL,
	`kind` text NOT NULL,
	`match_id` text,
	`opponent_user_id` text,
	`outcome` text,
	`rating_before` real NOT NULL,
	`deviation_before` real NOT NULL,
	`volatility_before` real NOT NULL,
	`rating_after` real NOT NULL,
	`deviation_after` real NOT NULL,
	`volatility_after` real NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`game_id`, `user_id`, `seq`),
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`season_id`) REFERENCES `seasons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `rating_history_match` ON `rating_history` (`match_id`) WHERE "rating_history"."match_id" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `ratings` (
	`game_id` text NOT NULL,
	`user_id` text NOT NULL,
	`season_id` text NOT NULL,
	`rating` real NOT NULL,
	`deviation` real NOT NULL,
	`volatility` real NOT NULL,
	`matches` integer NOT NULL,
	`seq` integer NOT NULL,
	`last_rated_at` integer NOT NULL,
	`board_display` real NOT NULL,
	`board_decay_at` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`game_id`, `user_id`),
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`season_id`) REFERENCES `seasons`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ratings_board` ON `ratings` (`game_id`,`board_display`,`user_id`) WHERE "ratings"."matches" > 0;--> statement-breakpoint
CREATE INDEX `ratings_decay` ON `ratings` (`board_decay_at`) WHERE "ratings"."board_decay_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `ratings_user` ON `ratings` (`user_id`);--> statement-breakpoint
CREATE TABLE `season_standings` (
	`season_id` text NOT NULL,
	`rank` integer NOT NULL,
	`user_id` text NOT NULL,
	`rating` real NOT NULL,
	`deviation` real NOT NULL,
	`volatility` real NOT NULL,
	`display` real NOT NULL,
	`matches` integer NOT NULL,
	PRIMARY KEY(`season_id`, `rank`),
	FOREIGN KEY (`season_id`) REFERENCES `seasons`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `season_standings_user` ON `season_standings` (`season_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `season_standings_of_user` ON `season_standings` (`user_id`);--> statement-breakpoint
CREATE TABLE `seasons` (
	`id` text PRIMARY KEY NOT NULL,
	`game_id` text NOT NULL,
	`number` integer NOT NULL,
	`name` text NOT NULL,
	`reset` text NOT NULL,
	`starts_at` integer NOT NULL,
	`status` text NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `seasons_game_number` ON `seasons` (`game_id`,`number`);--> statement-breakpoint
CREATE UNIQUE INDEX `seasons_game_current` ON `seasons` (`game_id`) WHERE "seasons"."status" = 'current';--> statement-breakpoint
ALTER TABLE `games` ADD `rating_tau` real DEFAULT 0.5 NOT NULL;--> statement-breakpoint
ALTER TABLE `games` ADD `rating_inactivity_period_s` integer DEFAULT 604800 NOT NULL;--> statement-breakpoint
-- Every game has a current season from its creation (docs/ratings.md): the games created before ratings existed get theirs here.
INSERT INTO `seasons` (`id`, `game_id`, `number`, `name`, `reset`, `starts_at`, `status`, `started_at`, `ended_at`, `created_at`) SELECT 'ssn_' || lower(hex(randomblob(16))), `id`, 1, 'Season 1', 'hard', `created_at`, 'current', `created_at`, NULL, `created_at` FROM `games`;
