DROP INDEX "matches_tournament_round_position";--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "bracket" text DEFAULT 'winners' NOT NULL;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "outcome" text;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "decided_by" text;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "loser_next_match_id" text;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "loser_next_slot" integer;--> statement-breakpoint
ALTER TABLE "participants" ADD COLUMN "disqualified_at" timestamp (3) with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "matches_tournament_place" ON "matches" USING btree ("tournament_id","bracket","round","position");