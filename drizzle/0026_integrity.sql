CREATE TABLE `evidence_blobs` (
	`sha256` text PRIMARY KEY NOT NULL,
	`bytes` blob NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `game_server_signatures` (
	`signature_hash` text PRIMARY KEY NOT NULL,
	`server_id` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `game_server_signatures_expiry` ON `game_server_signatures` (`expires_at`);--> statement-breakpoint
CREATE TABLE `game_servers` (
	`id` text PRIMARY KEY NOT NULL,
	`game_id` text NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`rotated_at` integer,
	`disabled_at` integer,
	FOREIGN KEY (`game_id`) REFERENCES `games`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `game_servers_game` ON `game_servers` (`game_id`);--> statement-breakpoint
CREATE TABLE `integrity_flags` (
	`id` text PRIMARY KEY NOT NULL,
	`match_id` text NOT NULL,
	`game_id` text NOT NULL,
	`tournament_id` text,
	`user_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`opponent_user_id` text NOT NULL,
	`signals` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `integrity_flags_match` ON `integrity_flags` (`match_id`);--> statement-breakpoint
CREATE INDEX `integrity_flags_tournament` ON `integrity_flags` (`tournament_id`,`participant_id`);--> statement-breakpoint
CREATE TABLE `match_evidence` (
	`id` text PRIMARY KEY NOT NULL,
	`match_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`user_id` text NOT NULL,
	`sha256` text NOT NULL,
	`type` text NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`sha256`) REFERENCES `evidence_blobs`(`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `match_evidence_match` ON `match_evidence` (`match_id`,`participant_id`);--> statement-breakpoint
CREATE INDEX `match_evidence_user` ON `match_evidence` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `match_evidence_sha256` ON `match_evidence` (`sha256`);--> statement-breakpoint
CREATE INDEX `match_evidence_created` ON `match_evidence` (`created_at`);--> statement-breakpoint
CREATE TABLE `payout_holds` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`match_id` text NOT NULL,
	`tournament_id` text,
	`rank` integer,
	`user_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`amount` text NOT NULL,
	`asset` text NOT NULL,
	`signals` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`decided_at` integer,
	`decided_by` text,
	`reason` text,
	FOREIGN KEY (`match_id`) REFERENCES `matches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tournament_id`) REFERENCES `tournaments`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payout_holds_stake` ON `payout_holds` (`match_id`) WHERE "payout_holds"."kind" = 'stake';--> statement-breakpoint
CREATE UNIQUE INDEX `payout_holds_prize` ON `payout_holds` (`tournament_id`,`rank`);--> statement-breakpoint
CREATE INDEX `payout_holds_status` ON `payout_holds` (`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `payout_holds_user` ON `payout_holds` (`user_id`,`status`);--> statement-breakpoint
ALTER TABLE `games` ADD `results` text DEFAULT 'claims' NOT NULL;