// Kept apart from archive.ts so that what only refuses (the CLI's checks)
// does not load the archive code and its age encryption with the binary.

/** A refusal with a message for the operator (exit 1, never a stack trace). */
export class BackupError extends Error {}
