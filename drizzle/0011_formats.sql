DROP INDEX `matches_tournament_round_position`;--> statement-breakpoint
ALTER TABLE `matches` ADD `bracket` text DEFAULT 'winners' NOT NULL;--> statement-breakpoint
ALTER TABLE `matches` ADD `outcome` text;--> statement-breakpoint
ALTER TABLE `matches` ADD `decided_by` text;--> statement-breakpoint
ALTER TABLE `matches` ADD `loser_next_match_id` text;--> statement-breakpoint
ALTER TABLE `matches` ADD `loser_next_slot` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `matches_tournament_place` ON `matches` (`tournament_id`,`bracket`,`round`,`position`);--> statement-breakpoint
ALTER TABLE `participants` ADD `disqualified_at` integer;