CREATE TABLE "rating_history" (
	"game_id" text NOT NULL,
	"user_id" text NOT NULL,
	"seq" integer NOT NULL,
	"season_id" text NOT NULL,
	"kind" text NOT NULL,
	"match_id" text,
	"opponent_user_id" text,
	"outcome" text,
	"rating_before" double precision NOT NULL,
	"deviation_before" double precision NOT NULL,
	"volatility_before" double precision NOT NULL,
	"rating_after" double precision NOT NULL,
	"deviation_after" double precision NOT NULL,
	"volatility_after" double precision NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "rating_history_game_id_user_id_seq_pk" PRIMARY KEY("game_id","user_id","seq")
);
--> statement-breakpoint
CREATE TABLE "ratings" (
	"game_id" text NOT NULL,
	"user_id" text NOT NULL,
	"season_id" text NOT NULL,
	"rating" double precision NOT NULL,
	"deviation" double precision NOT NULL,
	"volatility" double precision NOT NULL,
	"matches" integer NOT NULL,
	"seq" integer NOT NULL,
	"last_rated_at" timestamp (3) with time zone NOT NULL,
	"board_display" double precision NOT NULL,
	"board_decay_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "ratings_game_id_user_id_pk" PRIMARY KEY("game_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "season_standings" (
	"season_id" text NOT NULL,
	"rank" integer NOT NULL,
	"user_id" text NOT NULL,
	"rating" double precision NOT NULL,
	"deviation" double precision NOT NULL,
	"volatility" double precision NOT NULL,
	"display" double precision NOT NULL,
	"matches" integer NOT NULL,
	CONSTRAINT "season_standings_season_id_rank_pk" PRIMARY KEY("season_id","rank")
);
--> statement-breakpoint
CREATE TABLE "seasons" (
	"id" text PRIMARY KEY NOT NULL,
	"game_id" text NOT NULL,
	"number" integer NOT NULL,
	"name" text NOT NULL,
	"reset" text NOT NULL,
	"starts_at" timestamp (3) with time zone NOT NULL,
	"status" text NOT NULL,
	"started_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "games" ADD COLUMN "rating_tau" double precision DEFAULT 0.5 NOT NULL;--> statement-breakpoint
ALTER TABLE "games" ADD COLUMN "rating_inactivity_period_s" integer DEFAULT 604800 NOT NULL;--> statement-breakpoint
ALTER TABLE "rating_history" ADD CONSTRAINT "rating_history_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rating_history" ADD CONSTRAINT "rating_history_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rating_history" ADD CONSTRAINT "rating_history_season_id_seasons_id_fk" FOREIGN KEY ("season_id") REFERENCES "public"."seasons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rating_history" ADD CONSTRAINT "rating_history_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ratings" ADD CONSTRAINT "ratings_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ratings" ADD CONSTRAINT "ratings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ratings" ADD CONSTRAINT "ratings_season_id_seasons_id_fk" FOREIGN KEY ("season_id") REFERENCES "public"."seasons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "season_standings" ADD CONSTRAINT "season_standings_season_id_seasons_id_fk" FOREIGN KEY ("season_id") REFERENCES "public"."seasons"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "season_standings" ADD CONSTRAINT "season_standings_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "seasons" ADD CONSTRAINT "seasons_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rating_history_match" ON "rating_history" USING btree ("match_id") WHERE "rating_history"."match_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ratings_board" ON "ratings" USING btree ("game_id","board_display","user_id") WHERE "ratings"."matches" > 0;--> statement-breakpoint
CREATE INDEX "ratings_decay" ON "ratings" USING btree ("board_decay_at") WHERE "ratings"."board_decay_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "ratings_user" ON "ratings" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "season_standings_user" ON "season_standings" USING btree ("season_id","user_id");--> statement-breakpoint
CREATE INDEX "season_standings_of_user" ON "season_standings" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "seasons_game_number" ON "seasons" USING btree ("game_id","number");--> statement-breakpoint
CREATE UNIQUE INDEX "seasons_game_current" ON "seasons" USING btree ("game_id") WHERE "seasons"."status" = 'current';--> statement-breakpoint
-- Every game has a current season from its creation (docs/ratings.md): the games created before ratings existed get theirs here.
INSERT INTO "seasons" ("id", "game_id", "number", "name", "reset", "starts_at", "status", "started_at", "ended_at", "created_at") SELECT 'ssn_' || replace(gen_random_uuid()::text, '-', ''), "id", 1, 'Season 1', 'hard', "created_at", 'current', "created_at", NULL, "created_at" FROM "games";
