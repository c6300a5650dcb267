CREATE TABLE `known_sign_in_places` (
	`subject` text NOT NULL,
	`kind` text NOT NULL,
	`place_hash` text NOT NULL,
	`last_seen_at` integer NOT NULL,
	PRIMARY KEY(`subject`, `place_hash`)
);
--> statement-breakpoint
CREATE INDEX `known_sign_in_places_last_seen` ON `known_sign_in_places` (`last_seen_at`);