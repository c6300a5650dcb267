DROP INDEX `ledger_postings_account`;--> statement-breakpoint
ALTER TABLE `ledger_postings` ADD `balance_after` text;--> statement-breakpoint
CREATE INDEX `ledger_postings_account` ON `ledger_postings` (`account_id`,`id`);