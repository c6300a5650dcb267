CREATE TABLE "rate_limit_counters" (
	"policy" text NOT NULL,
	"key" text NOT NULL,
	"window_start" bigint NOT NULL,
	"window_end" bigint NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_limit_counters_policy_key_window_start_pk" PRIMARY KEY("policy","key","window_start")
);
