CREATE TABLE "known_sign_in_places" (
	"subject" text NOT NULL,
	"kind" text NOT NULL,
	"place_hash" text NOT NULL,
	"last_seen_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "known_sign_in_places_subject_place_hash_pk" PRIMARY KEY("subject","place_hash")
);
--> statement-breakpoint
CREATE INDEX "known_sign_in_places_last_seen" ON "known_sign_in_places" USING btree ("last_seen_at");