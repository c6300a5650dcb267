CREATE TABLE `challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`game_id` text NOT NULL,
	`challenger_id` text NOT NULL,
	`opponent_id` text NOT NULL,
	`stake` text,
	`status` text NOT NULL,
	`expires_at` integer NOT NULL,
	`match_id` text,
	`created_at` integer NOT NULL,
	`closed_at` integer,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`challenger_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`opponent_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `challenges_open_challenger` ON `challenges` (`challenger_id`) WHERE "challenges"."status" = 'open';--> statement-breakpoint
CREATE INDEX `challenges_opponent` ON `challenges` (`opponent_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `challenges_open_expiry` ON `challenges` (`expires_at`) WHERE "challenges"."status" = 'open';--> statement-breakpoint
CREATE INDEX `challenges_closed` ON `challenges` (`closed_at`);--> statement-breakpoint
CREATE TABLE `queues` (
	`id` text PRIMARY KEY NOT NULL,
	`game_id` text NOT NULL,
	`name` text NOT NULL,
	`rated` integer NOT NULL,
	`stake` text,
	`rake` text DEFAULT '0' NOT NULL,
	`window_initial` real NOT NULL,
	`window_widen_per_second` real NOT NULL,
	`window_max` real NOT NULL,
	`ready_check_s` integer NOT NULL,
	`match_deadline_s` integer,
	`rematch_cooldown_s` integer DEFAULT 0 NOT NULL,
	`draws` text DEFAULT 'replay' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`closed_at` integer,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `queues_game_name` ON `queues` (`game_id`,`name`) WHERE "queues"."closed_at" IS NULL;--> statement-breakpoint
CREATE TABLE `tickets` (
	`id` text PRIMARY KEY NOT NULL,
	`queue_id` text NOT NULL,
	`game_id` text NOT NULL,
	`user_id` text NOT NULL,
	`display` real NOT NULL,
	`waiting_since` integer NOT NULL,
	`status` text NOT NULL,
	`match_id` text,
	`created_at` integer NOT NULL,
	`closed_at` integer,
	`close_reason` text,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tickets_open_user_game` ON `tickets` (`user_id`,`game_id`) WHERE "tickets"."status" = 'open';--> statement-breakpoint
CREATE INDEX `tickets_open_queue` ON `tickets` (`queue_id`,`waiting_since`) WHERE "tickets"."status" = 'open';--> statement-breakpoint
CREATE INDEX `tickets_match` ON `tickets` (`match_id`);--> statement-breakpoint
CREATE INDEX `tickets_closed` ON `tickets` (`closed_at`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_matches` (
	`id` text PRIMARY KEY NOT NULL,
	`tournament_id` text,
	`game_id` text NOT NULL,
	`kind` text DEFAULT 'tournament' NOT NULL,
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
	`deadline` integer,
	`bracket` text DEFAULT 'winners' NOT NULL,
	`outcome` text,
	`decided_by` text,
	`loser_next_match_id` text,
	`loser_next_slot` integer,
	`created_at` integer,
	`stake` text,
	`terms` text,
	`ready_by` integer,
	`slot1_ready_at` integer,
	`slot2_ready_at` integer,
	FOREIGN KEY (`tournament_id`) REFERENCES `tournaments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_matches`("id", "tournament_id", "game_id", "kind", "round", "position", "status", "slot1_participant_id", "slot2_participant_id", "winner_participant_id", "next_match_id", "next_slot", "claim_round", "decided_at", "deadline", "bracket", "outcome", "decided_by", "loser_next_match_id", "loser_next_slot", "created_at", "stake", "terms", "ready_by", "slot1_ready_at", "slot2_ready_at") SELECT m."id", m."tournament_id", t."game_id", 'tournament', m."round", m."position", m."status", m."slot1_participant_id", m."slot2_participant_id", m."winner_participant_id", m."next_match_id", m."next_slot", m."claim_round", m."decided_at", m."deadline", m."bracket", m."outcome", m."decided_by", m."loser_next_match_id", m."loser_next_slot", NULL, NULL, NULL, NULL, NULL, NULL FROM `matches` m JOIN `tournaments` t ON t."id" = m."tournament_id";--> statement-breakpoint
DROP TABLE `matches`;--> statement-breakpoint
ALTER TABLE `__new_matches` RENAME TO `matches`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `matches_tournament_place` ON `matches` (`tournament_id`,`bracket`,`round`,`position`);--> statement-breakpoint
CREATE INDEX `matches_terminal` ON `matches` (`tournament_id`) WHERE "matches"."next_match_id" IS NULL;--> statement-breakpoint
CREATE INDEX `matches_slot1` ON `matches` (`slot1_participant_id`);--> statement-breakpoint
CREATE INDEX `matches_slot2` ON `matches` (`slot2_participant_id`);--> statement-breakpoint
CREATE INDEX `matches_game_standalone` ON `matches` (`game_id`,`created_at`) WHERE "matches"."kind" <> 'tournament';--> statement-breakpoint
CREATE TABLE `__new_participants` (
	`id` text PRIMARY KEY NOT NULL,
	`tournament_id` text,
	`user_id` text NOT NULL,
	`seed` integer NOT NULL,
	`registered_at` integer,
	`checked_in_at` integer,
	`disqualified_at` integer,
	FOREIGN KEY (`tournament_id`) REFERENCES `tournaments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_participants`("id", "tournament_id", "user_id", "seed", "registered_at", "checked_in_at", "disqualified_at") SELECT "id", "tournament_id", "user_id", "seed", "registered_at", "checked_in_at", "disqualified_at" FROM `participants`;--> statement-breakpoint
DROP TABLE `participants`;--> statement-breakpoint
ALTER TABLE `__new_participants` RENAME TO `participants`;--> statement-breakpoint
CREATE UNIQUE INDEX `participants_tournament_user` ON `participants` (`tournament_id`,`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `participants_tournament_seed` ON `participants` (`tournament_id`,`seed`);--> statement-breakpoint
CREATE INDEX `participants_user` ON `participants` (`user_id`);--> statement-breakpoint
CREATE INDEX `participants_disqualified` ON `participants` (`tournament_id`) WHERE "participants"."disqualified_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `games` ADD `challenge_rake` text DEFAULT '0' NOT NULL;