ALTER TABLE "matches" ADD COLUMN "deadline" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "forfeit_participant_id" text;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "options" json;