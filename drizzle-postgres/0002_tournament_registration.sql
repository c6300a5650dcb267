ALTER TABLE "participants" ADD COLUMN "registered_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "participants" ADD COLUMN "checked_in_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "registration_closes_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "max_players" integer;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "check_in_opens_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "check_in_closes_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "starts_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "seeding" text;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "seed" text;--> statement-breakpoint
ALTER TABLE "tournaments" ADD COLUMN "registration_seq" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "tournaments_status" ON "tournaments" USING btree ("status","id");