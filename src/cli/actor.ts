// Who acts when an operator subcommand (or `arena seed`) changes something:
// the audit log (contract §11) records every operator action, the command
// line's included.
//
// The command line has no operator session: whoever can run `arena` on the
// server can read and write its database directly, so no name it is given
// could be checked. It is recorded as what the machine knows, the OS user
// running it (`cli:<user>`), with the admin role and via `cli`. There is
// deliberately no `--as` flag or environment override: a typed name proves
// nothing, yet would read in the log like a signed-in operator. Operators who
// want their own name on a record act through the API or the console.
import { userInfo } from 'node:os'
import type { Actor, AuditEntry, AuditLog } from '../modules/audit/log'
import type { Storage } from '../db/storage'
import { newId } from '../shared/ids'

/** `cli:<OS user>`; the numeric uid when the OS has no name for it (a container's arbitrary uid). */
export function cliOperatorName(): string {
  let name = ''
  try {
    name = userInfo().username
  } catch {
    // No passwd entry for this uid: named by the uid below.
  }
  return name === '' ? `cli:uid-${process.getuid?.() ?? 'unknown'}` : `cli:${name}`
}

/**
 * The actor of one command. Its request id is drawn once per command, so
 * every record one command made (a seed makes many) shares it.
 */
export function cliActor(services: { audit: AuditLog }): Actor {
  return services.audit.actor({ id: null, name: cliOperatorName(), role: 'admin' }, 'cli', newId('request'))
}

/**
 * Records a command's action that is not a database write of its own (a
 * signing key rotated in the data dir's secrets.json, a custody share
 * printed or removed), in a unit of work by itself: there is no transaction
 * of the action to share.
 */
export async function recordCliAction(services: { audit: AuditLog; storage: Storage }, entry: AuditEntry): Promise<void> {
  const by = cliActor(services)
  await services.storage.write((tx) => by.record(tx, entry))
}
