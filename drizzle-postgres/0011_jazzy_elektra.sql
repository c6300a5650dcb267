DROP INDEX "security_events_user";--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_seq" bigint;--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_hash" text;--> statement-breakpoint
ALTER TABLE "security_log_head" ADD COLUMN "pruned_mac" text;--> statement-breakpoint
CREATE INDEX "security_events_user_received" ON "security_events" USING btree ("user_id","received_at");--> statement-breakpoint
CREATE INDEX "game_sessions_user_game" ON "game_sessions" USING btree ("user_id","game_id");