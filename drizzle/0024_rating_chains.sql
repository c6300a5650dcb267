PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_rating_history` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`previous_id` integer,
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
	`created_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_rating_history`("game_id", "user_id", "seq", "season_id", "kind", "match_id", "opponent_user_id", "outcome", "rating_before", "deviation_before", "volatility_before", "rating_after", "deviation_after", "volatility_after", "created_at") SELECT "game_id", "user_id", "seq", "season_id", "kind", "match_id", "opponent_user_id", "outcome", "rating_before", "deviation_before", "volatility_before", "rating_after", "deviation_after", "volatility_after", "created_at" FROM `rating_history` ORDER BY "created_at", "game_id", "user_id", "seq";--> statement-breakpoint
DROP TABLE `rating_history`;--> statement-breakpoint
ALTER TABLE `__new_rating_history` RENAME TO `rating_history`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
ALTER TABLE `ratings` ADD `history_id` integer;--> statement-breakpoint
CREATE INDEX `participants_disqualified` ON `participants` (`tournament_id`) WHERE "participants"."disqualified_at" IS NOT NULL;--> statement-breakpoint
-- Written by hand: the chain of the rows already there (each row to the player's previous one, each rating to its last row), through an index kept only for this.
CREATE INDEX `rating_history_chain_backfill` ON `rating_history` (`game_id`,`user_id`,`seq`);--> statement-breakpoint
UPDATE `rating_history` SET `previous_id` = (SELECT p.`id` FROM `rating_history` p WHERE p.`game_id` = `rating_history`.`game_id` AND p.`user_id` = `rating_history`.`user_id` AND p.`seq` = `rating_history`.`seq` - 1);--> statement-breakpoint
UPDATE `ratings` SET `history_id` = (SELECT h.`id` FROM `rating_history` h WHERE h.`game_id` = `ratings`.`game_id` AND h.`user_id` = `ratings`.`user_id` AND h.`seq` = `ratings`.`seq`);--> statement-breakpoint
DROP INDEX `rating_history_chain_backfill`;
