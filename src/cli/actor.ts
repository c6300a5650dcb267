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
import { readFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import type { Actor, AuditEntry, AuditLog } from '../modules/audit/log'
import type { Storage } from '../db/storage'
import { newId } from '../shared/ids'

/**
 * `cli:<OS user>`: the name the OS account database gives the process's uid
 * (`cli:root` for uid 0), or `cli:uid-<n>` when it has none (a container's
 * arbitrary uid). Looked up by uid, never taken from `USER` or `LOGNAME`:
 * Bun's `os.userInfo().username` is `$USER` (or `unknown` when it is unset,
 * as it is for root under many service managers and `docker exec`), and an
 * environment variable would be the override this file refuses.
 */
export function cliOperatorName(): string {
  const uid = process.getuid?.()
  // Not a POSIX system (arena ships for Linux): what the runtime says.
  if (uid === undefined) return `cli:${userInfo().username || 'unknown'}`
  const name = accountNameOf(uid, readPasswd()) ?? accountNameByGetent(uid)
  return name === null ? `cli:uid-${uid}` : `cli:${name}`
}

/** The name of `uid` in passwd(5) text: the first entry whose third field is that uid; null when none is. */
export function accountNameOf(uid: number, passwd: string): string | null {
  for (const line of passwd.split('\n')) {
    const [name, , id] = line.split(':')
    if (name && id !== undefined && /^\d+$/.test(id) && Number(id) === uid && !name.startsWith('+') && !name.startsWith('-')) return name
  }
  return null
}

function readPasswd(): string {
  try {
    return readFileSync('/etc/passwd', 'utf8')
  } catch {
    return ''
  }
}

/** Accounts the files do not hold (LDAP, systemd-homed) come through NSS: `getent passwd <uid>`, where the image has it. */
function accountNameByGetent(uid: number): string | null {
  try {
    const result = Bun.spawnSync(['getent', 'passwd', String(uid)], { stdout: 'pipe', stderr: 'ignore', stdin: 'ignore' })
    return result.exitCode === 0 ? accountNameOf(uid, result.stdout.toString()) : null
  } catch {
    // No getent in the image (a distroless one): the files were the whole database.
    return null
  }
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
