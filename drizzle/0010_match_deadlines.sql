ALTER TABLE `matches` ADD `deadline` integer;--> statement-breakpoint
ALTER TABLE `matches` ADD `forfeit_participant_id` text;--> statement-breakpoint
ALTER TABLE `tournaments` ADD `options` text;