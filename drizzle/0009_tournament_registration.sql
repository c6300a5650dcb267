ALTER TABLE `participants` ADD `registered_at` integer;--> statement-breakpoint
ALTER TABLE `participants` ADD `checked_in_at` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `registration_closes_at` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `max_players` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `check_in_opens_at` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `check_in_closes_at` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `starts_at` integer;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `seeding` text;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `seed` text;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `registration_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `tournaments_status` ON `tournaments` (`status`,`id`);