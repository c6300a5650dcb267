// What the matches module needs from the database, in its own terms (see src/db/storage.ts).
export interface MatchesStore {}
