-- Custom (drizzle-kit generate --custom): before forfeit_participant_id is
-- dropped, a participant it marks (disqualified ahead of a not-yet-known
-- opponent) becomes disqualified on the participant, where the format engines
-- read it. The time of the disqualification was not kept: the upgrade's.
UPDATE "participants" SET "disqualified_at" = now()
WHERE "disqualified_at" IS NULL
  AND "id" IN (SELECT "forfeit_participant_id" FROM "matches" WHERE "forfeit_participant_id" IS NOT NULL);
