DROP INDEX "ledger_postings_account";--> statement-breakpoint
ALTER TABLE "ledger_postings" ADD COLUMN "balance_after" numeric;--> statement-breakpoint
CREATE INDEX "ledger_postings_account" ON "ledger_postings" USING btree ("account_id","id");