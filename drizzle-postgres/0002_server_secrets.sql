CREATE TABLE "server_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"sealed" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
