ALTER TABLE `withdrawals` ADD `rejection_reason` text;--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `approved_at` integer;--> statement-breakpoint
ALTER TABLE `withdrawals` ADD `hold_until` integer;