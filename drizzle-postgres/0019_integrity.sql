CREATE TABLE "evidence_blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"bytes" "bytea" NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "game_server_signatures" (
	"signature_hash" text PRIMARY KEY NOT NULL,
	"server_id" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "game_servers" (
	"id" text PRIMARY KEY NOT NULL,
	"game_id" text NOT NULL,
	"name" text NOT NULL,
	"public_key" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"rotated_at" timestamp (3) with time zone,
	"disabled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "integrity_flags" (
	"id" text PRIMARY KEY NOT NULL,
	"match_id" text NOT NULL,
	"game_id" text NOT NULL,
	"tournament_id" text,
	"user_id" text NOT NULL,
	"participant_id" text NOT NULL,
	"opponent_user_id" text NOT NULL,
	"signals" json NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "match_evidence" (
	"id" text PRIMARY KEY NOT NULL,
	"match_id" text NOT NULL,
	"participant_id" text NOT NULL,
	"user_id" text NOT NULL,
	"sha256" text NOT NULL,
	"type" text NOT NULL,
	"size" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_holds" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"match_id" text NOT NULL,
	"tournament_id" text,
	"rank" integer,
	"user_id" text NOT NULL,
	"participant_id" text NOT NULL,
	"amount" numeric NOT NULL,
	"asset" text NOT NULL,
	"signals" json NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"decided_at" timestamp (3) with time zone,
	"decided_by" text,
	"reason" text
);
--> statement-breakpoint
ALTER TABLE "games" ADD COLUMN "results" text DEFAULT 'claims' NOT NULL;--> statement-breakpoint
ALTER TABLE "game_servers" ADD CONSTRAINT "game_servers_game_id_games_id_fk" FOREIGN KEY ("game_id") REFERENCES "public"."games"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrity_flags" ADD CONSTRAINT "integrity_flags_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrity_flags" ADD CONSTRAINT "integrity_flags_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "match_evidence" ADD CONSTRAINT "match_evidence_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "match_evidence" ADD CONSTRAINT "match_evidence_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "match_evidence" ADD CONSTRAINT "match_evidence_sha256_evidence_blobs_sha256_fk" FOREIGN KEY ("sha256") REFERENCES "public"."evidence_blobs"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_holds" ADD CONSTRAINT "payout_holds_match_id_matches_id_fk" FOREIGN KEY ("match_id") REFERENCES "public"."matches"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_holds" ADD CONSTRAINT "payout_holds_tournament_id_tournaments_id_fk" FOREIGN KEY ("tournament_id") REFERENCES "public"."tournaments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payout_holds" ADD CONSTRAINT "payout_holds_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "game_server_signatures_expiry" ON "game_server_signatures" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "game_servers_game" ON "game_servers" USING btree ("game_id");--> statement-breakpoint
CREATE UNIQUE INDEX "integrity_flags_match" ON "integrity_flags" USING btree ("match_id");--> statement-breakpoint
CREATE INDEX "integrity_flags_tournament" ON "integrity_flags" USING btree ("tournament_id","participant_id");--> statement-breakpoint
CREATE INDEX "match_evidence_match" ON "match_evidence" USING btree ("match_id","participant_id");--> statement-breakpoint
CREATE INDEX "match_evidence_user" ON "match_evidence" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "match_evidence_sha256" ON "match_evidence" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "match_evidence_created" ON "match_evidence" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payout_holds_stake" ON "payout_holds" USING btree ("match_id") WHERE "payout_holds"."kind" = 'stake';--> statement-breakpoint
CREATE UNIQUE INDEX "payout_holds_prize" ON "payout_holds" USING btree ("tournament_id","rank");--> statement-breakpoint
CREATE INDEX "payout_holds_status" ON "payout_holds" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "payout_holds_user" ON "payout_holds" USING btree ("user_id","status");