// How an operator names a user: by id or by username, the same rule for the
// admin API and the command line.
import type { Storage } from '../../db/storage'
import { isId } from '../../shared/ids'

/**
 * The id of the user an operator names by id or by username (the admin API's
 * `{id}`, the CLI's `<userId|username>`): a user id's shape (`usr_` and 32 hex
 * digits, 36 characters) is taken as an id, anything else as a username
 * (case-insensitive). A username is 3 to 32 characters, so never an id's
 * shape: the two can never be confused. Null when no user has that username;
 * an id is returned as it is (the caller's lookup answers 404 for a stranger).
 */
export async function userIdByRef(storage: Pick<Storage, 'read'>, ref: string): Promise<string | null> {
  if (isId('user', ref)) return ref
  return (await storage.read.auth.userByUsernameKey(ref.toLowerCase()))?.id ?? null
}
