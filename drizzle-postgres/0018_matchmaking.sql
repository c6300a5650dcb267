CREATE TABLE "challenges" (
	"id" text PRIMARY KEY NOT NULL,
	"game_id" text NOT NULL,
	"challenger_id" text NOT NULL,
	"opponent_id" text NOT NULL,
	"stake" numeric,
	"status" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"match_id" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"closed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "queues" (
	"id" text PRIMARY KEY NOT NULL,
	"game_id" text NOT NULL,
	"name" text NOT NULL,
	"rated" boolean NOT NULL,
	"stake" numeric,
	"rake" text DEFAULT '0' NOT NULL,
	"window_initial" double precision NOT NULL,
	"window_widen_per_second" double precision NOT NULL,
	"window_max" double precision NOT NULL,
	"ready_check_s" integer NOT NULL,
	"match_deadline_s" integer,
	"rematch_cooldown_s" integer DEFAULT 0 NOT NULL,
	"draws" text DEFAULT 'replay' NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL,
	"closed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "tickets" (
	"id" text PRIMARY KEY NOT NULL,
	"queue_id" text NOT NULL,
	"game_id" text NOT NULL,
	"user_id" text NOT NULL,
	"display" double precision NOT NULL,
	"waiting_since" timestamp (3) with time zone NOT NULL,
	"status" text NOT NULL,
	"match_id" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"closed_at" timestamp (3) with time zone,
	"close_reason" text
);
--> statement-breakpoint
ALTER TABLE "matches" ALTER COLUMN "tournament_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "participants" ALTER COLUMN "tournament_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "games" ADD COLUMN "challenge_rake" text DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "game_id" text;--> statement-breakpoint
UPDATE "matches" SET "game_id" = "tournaments"."game_id" FROM "tournaments" WHERE "tournaments"."id" = "matches"."tournament_id";--> statement-breakpoint
ALTER TABLE "matches" ALTER COLUMN "game_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "kind" text DEFAULT 'tournament' NOT NULL;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "created_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "stake" numeric;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "terms" json;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "ready_by" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "slot1_ready_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "matches" ADD COLUMN "slot2_ready_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "challenges" ADD CONSTRAINT "challenges_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "challenges" ADD CONSTRAINT "challenges_challenger_id_users_id_fk" FOREIGN KEY ("challenger_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "challenges" ADD CONSTRAINT "challenges_opponent_id_users_id_fk" FOREIGN KEY ("opponent_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "challenges" ADD CONSTRAINT "challenges_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "queues" ADD CONSTRAINT "queues_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_queue_id_queues_id_fk" FOREIGN KEY ("queue_id") REFERENCES "public"."queues"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tickets" ADD CONSTRAINT "tickets_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "challenges_open_challenger" ON "challenges" USING btree ("challenger_id") WHERE "challenges"."status" = 'open';--> statement-breakpoint
CREATE INDEX "challenges_opponent" ON "challenges" USING btree ("opponent_id","created_at");--> statement-breakpoint
CREATE INDEX "challenges_open_expiry" ON "challenges" USING btree ("expires_at") WHERE "challenges"."status" = 'open';--> statement-breakpoint
CREATE INDEX "challenges_closed" ON "challenges" USING btree ("closed_at");--> statement-breakpoint
CREATE UNIQUE INDEX "queues_game_name" ON "queues" USING btree ("game_id","name") WHERE "queues"."closed_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "tickets_open_user_game" ON "tickets" USING btree ("user_id","game_id") WHERE "tickets"."status" = 'open';--> statement-breakpoint
CREATE INDEX "tickets_open_queue" ON "tickets" USING btree ("queue_id","waiting_since") WHERE "tickets"."status" = 'open';--> statement-breakpoint
CREATE INDEX "tickets_match" ON "tickets" USING btree ("match_id");--> statement-breakpoint
CREATE INDEX "tickets_closed" ON "tickets" USING btree ("closed_at");--> statement-breakpoint
ALTER TABLE "matches" ADD CONSTRAINT "matches_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "matches_game_standalone" ON "matches" USING btree ("game_id","created_at") WHERE "matches"."kind" <> 'tournament';