CREATE TABLE "known_sign_in_places" (
	"subject" text NOT NULL,
	"kind" text NOT NULL,
	"place_hash" text NOT NULL,
	"last_seen_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "known_sign_in_places_subject_place_hash_pk" PRIMARY KEY("subject","place_hash")
);
--> statement-breakpoint
CREATE TABLE "rate_limit_counters" (
	"policy" text NOT NULL,
	"key" text NOT NULL,
	"window_start" bigint NOT NULL,
	"window_end" bigint NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_limit_counters_policy_key_window_start_pk" PRIMARY KEY("policy","key","window_start")
);
--> statement-breakpoint
DROP INDEX "security_events_user";--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_seq" bigint;--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_hash" text;--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_mac" text;--> statement-breakpoint
CREATE INDEX "known_sign_in_places_last_seen" ON "known_sign_in_places" USING btree ("last_seen_at");--> statement-breakpoint
CREATE INDEX "security_events_user_received" ON "security_events" USING btree ("user_id","received_at");--> statement-breakpoint
CREATE INDEX "game_sessions_user_game" ON "game_sessions" USING btree ("user_id","game_id");