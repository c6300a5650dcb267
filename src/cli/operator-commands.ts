// Operator subcommands (contract §6): the same services the admin routes call,
// on the data dir's database, without a running server. `--json` prints the
// same objects the admin API answers.
import type { Command, Io } from './command'
import { recordCliAction } from './actor'
import { cliActor } from './actor'
import { nextStopSignal, UsageError } from './command'
import { AppError } from '../shared/errors'
import { loadConfig } from '../config'
import { tournamentCommand } from './tournament-command'
import { operatorCommand } from './operator-accounts-command'
import { queueCommand } from './queue-command'
import { gameServerCommand } from './game-server-command'
import { webhookCommand } from './webhook-command'
import { checkLedger } from '../modules/wallet/ledger'
import { listSecurityEvents, verifySecurityLog } from '../modules/security/event-log'
import { startCosigner } from '../cosigner'
import { custodySharesFor, openServices, withSecretStore, type Services } from '../services'
import { createLogger } from '../shared/logger'
import { withdrawalPage } from '../modules/admin/withdrawals'
import type { IdentityView } from '../modules/auth/model'
import type { PayoutHold } from '../modules/integrity/model'

/** Runs `fn` on the services of the data dir's database; closes them once it settled. */
export async function withServices<T>(fn: (services: Services) => Promise<T> | T): Promise<T> {
  const opened = await openServices(loadConfig())
  try {
    return await fn(opened.services)
  } finally {
    await opened.close()
  }
}

/** The user an operator names by id or username; not_found otherwise. */
async function userIdOf(services: Services, ref: string): Promise<string> {
  const userId = await services.auth.userIdOf(ref)
  if (userId === null) throw new AppError('not_found', `No user ${JSON.stringify(ref)}`)
  return userId
}

function print(io: Io, json: boolean, value: unknown, text: () => string): number {
  io.out(json ? JSON.stringify(value) : text())
  return 0
}

/** One line an identity: when it was linked, the provider, its subject and email where it has them. */
function identityLines(identities: readonly IdentityView[]): string {
  if (identities.length === 0) return '(none)'
  return identities.map((i) => [i.linkedAt, i.provider.padEnd(14), i.subject ?? '-', i.email ?? '-'].join('  ')).join('\n')
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`)
  return value
}

export const OPERATOR_COMMANDS: Record<string, Command> = {
  game: {
    summary: 'Create a game (prints its key once), rotate its key, or set who reports its results',
    usage: 'arena game create --name <name> [--json] | arena game rotate-key <gameId> [--json] | arena game update <gameId> --results claims|server|either [--json]',
    options: { name: { type: 'string' }, results: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id] = positionals
      const json = values.json === true
      if (action === 'create') {
        const created = await withServices((services) => services.games.createGame(need(values.name as string | undefined, '--name'), cliActor(services)))
        return print(io, json, created, () => `game ${created.game.id} "${created.game.name}"\nkey  ${created.gameKey}  (shown once: store it now)`)
      }
      if (action === 'rotate-key') {
        const rotated = await withServices((services) => services.games.rotateKey(need(id, '<gameId>'), cliActor(services)))
        return print(io, json, rotated, () => `new key ${rotated.gameKey}  (the old key no longer works)`)
      }
      if (action === 'update') {
        // Who reports the game's results (contract §17); the API's PATCH /admin/games/{id} changes the rest.
        const results = values.results
        if (results !== 'claims' && results !== 'server' && results !== 'either') throw new UsageError('--results is claims, server or either')
        const game = await withServices((services) => services.games.updateGame(need(id, '<gameId>'), { results }, cliActor(services)))
        return print(io, json, { game }, () => `game ${game.id} "${game.name}": results ${game.results}`)
      }
      throw new UsageError(`unknown action "${action ?? ''}"`)
    },
  },

  season: {
    summary: 'Schedule a season of a game (every rating is reset when it starts), or list its seasons',
    usage:
      'arena season create --game <gameId> --name <name> --starts-at <ISO time> --reset soft|hard [--json]\n' +
      '       arena season list --game <gameId> [--json]',
    options: { game: { type: 'string' }, name: { type: 'string' }, 'starts-at': { type: 'string' }, reset: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, ...rest] = positionals
      if (rest.length > 0) throw new UsageError(`unexpected "${rest.join(' ')}"`)
      const json = values.json === true
      const gameId = need(values.game as string | undefined, '--game')
      if (action === 'create') {
        const name = need((values.name as string | undefined)?.trim(), '--name')
        const startsAt = need(values['starts-at'] as string | undefined, '--starts-at')
        const reset = values.reset
        if (reset !== 'soft' && reset !== 'hard') throw new UsageError('--reset is soft or hard')
        const { season } = await withServices((services) => services.ratings.createSeason(gameId, { name, startsAt, reset }, cliActor(services)))
        return print(io, json, { season }, () => `season ${season.id} "${season.name}" (#${season.number}) scheduled: starts ${season.startsAt}, ${reset} reset of every rating of the game`)
      }
      if (action !== 'list') throw new UsageError(`unknown action "${action ?? ''}"`)
      const { seasons } = await withServices((services) => services.ratings.seasons(gameId))
      // One line a season, newest first: number, status, when it starts (started, ended), reset, name, id.
      return print(io, json, { seasons }, () =>
        seasons.map((s) => [`#${s.number}`.padEnd(4), s.status.padEnd(9), s.startsAt, s.endedAt === null ? '-'.padEnd(24) : s.endedAt, s.reset.padEnd(4), JSON.stringify(s.name), s.id].join('  ')).join('\n'),
      )
    },
  },

  tournament: tournamentCommand(withServices),
  queue: queueCommand(withServices),
  'game-server': gameServerCommand(withServices),
  webhook: webhookCommand(withServices),
  operator: operatorCommand(withServices),

  match: {
    summary: 'Resolve a disputed (or running) match for a winner, or correct a decided result',
    usage: 'arena match resolve <matchId> --winner <participantId> [--json]\n       arena match correct <matchId> --winner <participantId> --reason <text> [--json]',
    options: { winner: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id] = positionals
      if (action === 'correct') {
        const corrected = await withServices((services) =>
          services.tournamentOperations.correct(need(id, '<matchId>'), need(values.winner as string | undefined, '--winner'), need(values.reason as string | undefined, '--reason'), cliActor(services)),
        )
        return print(io, values.json === true, corrected, () => `${corrected.match.id} corrected: won by ${corrected.match.winnerParticipantId}`)
      }
      if (action !== 'resolve') throw new UsageError(`unknown action "${action ?? ''}"`)
      const result = await withServices((services) => services.tournamentOperations.resolve(need(id, '<matchId>'), need(values.winner as string | undefined, '--winner'), cliActor(services)))
      return print(io, values.json === true, result, () => `${result.match.id} decided for ${result.match.winnerParticipantId}: ${result.decision.decision}`)
    },
  },

  wallet: {
    summary: 'Credit a wallet, or adjust it by a signed amount with a reason (both idempotent by reference)',
    usage:
      'arena wallet credit <userId|username> --amount <decimal> --reference <ref> [--json]\n' +
      '       arena wallet adjust <userId|username> --amount=<signed decimal> --reason <text> --reference <ref> [--json]\n' +
      '       (a negative amount is written --amount=-5: "--amount -5" reads -5 as an option)',
    options: { amount: { type: 'string' }, reason: { type: 'string' }, reference: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, who] = positionals
      if (action === 'adjust') {
        const ref = need(who, '<userId|username>')
        const amount = need(values.amount as string | undefined, '--amount')
        const reason = need(values.reason as string | undefined, '--reason')
        const reference = need(values.reference as string | undefined, '--reference')
        const adjusted = await withServices(async (services) => services.wallet.adjust({ userId: await userIdOf(services, ref), amount, reason, reference }, cliActor(services)))
        return print(io, values.json === true, adjusted, () => `balance ${adjusted.balance}`)
      }
      if (action !== 'credit') throw new UsageError(`unknown action "${action ?? ''}"`)
      const ref = need(who, '<userId|username>')
      const result = await withServices(async (services) => {
        const userId = await userIdOf(services, ref)
        return services.wallet.credit({
          userId,
          amount: need(values.amount as string | undefined, '--amount'),
          reference: need(values.reference as string | undefined, '--reference'),
        }, cliActor(services))
      })
      return print(io, values.json === true, result, () => `balance ${result.balance}`)
    },
  },

  user: {
    summary: 'Lift a player\'s PIN lock; list a player\'s identities or unlink one (audited with a reason)',
    usage:
      'arena user pin-unlock <userId|username> --reason <text> [--json]\n' +
      '       arena user identities <userId|username> [--json]\n' +
      '       arena user unlink-identity <userId|username> <provider> --reason <text> [--json]',
    options: { reason: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, who, provider] = positionals
      const json = values.json === true
      if (action === 'identities') {
        const ref = need(who, '<userId|username>')
        // As GET /api/v1/admin/users/{id} shows them: a deleted account has none.
        const identities = await withServices(async (services) => (await services.users.detail(await userIdOf(services, ref))).identities)
        return print(io, json, { identities }, () => identityLines(identities))
      }
      if (action === 'unlink-identity') {
        const ref = need(who, '<userId|username>')
        const name = need(provider, '<provider>')
        const reason = need((values.reason as string | undefined)?.trim(), '--reason')
        const identities = await withServices(async (services) => services.identities.unlink(await userIdOf(services, ref), name, { actor: cliActor(services), reason }))
        return print(io, json, { identities }, () => `${name} unlinked from ${ref}; left:\n${identityLines(identities)}`)
      }
      if (action !== 'pin-unlock') throw new UsageError(`unknown action "${action ?? ''}"`)
      const ref = need(who, '<userId|username>')
      const reason = need((values.reason as string | undefined)?.trim(), '--reason')
      const result = await withServices(async (services) => services.pins.unlock(await userIdOf(services, ref), reason, cliActor(services)))
      return print(io, json, result, () => (result.lifted ? `PIN lock lifted for ${ref}: failures and doubling forgotten` : `${ref}'s PIN had nothing to lift; nothing written`))
    },
  },

  withdrawal: {
    summary: 'List every user\'s withdrawals, newest first, by status, user and UTC creation days (as GET /api/v1/admin/withdrawals)',
    usage: 'arena withdrawal list [--status S] [--user <userId|username>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--limit N] [--after <cursor>] [--json]',
    options: { status: { type: 'string' }, user: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      if (positionals[0] !== 'list' || positionals.length > 1) throw new UsageError(`unknown action "${positionals.join(' ')}"`)
      const text = (name: string) => values[name] as string | undefined
      const limit = text('limit')
      const page = await withServices(({ operations }) =>
        withdrawalPage(
          operations,
          { status: text('status'), user: text('user'), from: text('from'), to: text('to'), after: text('after'), ...(limit === undefined ? {} : { limit: Number(limit) }) },
          { status: '--status', from: '--from', to: '--to', after: '--after', limit: '--limit' },
        ),
      )
      // One line a withdrawal: when, status, amount, whose, where to, its id; then the cursor of the next page.
      return print(io, values.json === true, page, () =>
        [
          ...page.withdrawals.map((w) => `${w.createdAt}  ${w.status.padEnd(17)}  ${`${w.amount} ${w.asset}`.padStart(16)}  ${w.username} (${w.userId})  ${w.destinationAddress}  ${w.id}`),
          `cursor ${page.cursor ?? '- (the last page)'}`,
        ].join('\n'),
      )
    },
  },

  payout: {
    summary: 'List payouts held for review by integrity signals, or release or void one (finance; audited with a reason)',
    usage:
      'arena payout list [--status held|released|voided] [--limit N] [--after <cursor>] [--json]\n' +
      '       arena payout release <holdId> --reason <text> [--json]\n' +
      '       arena payout void <holdId> --reason <text> [--json]',
    options: { status: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id] = positionals
      const json = values.json === true
      const line = (h: PayoutHold) =>
        `${h.createdAt}  ${h.status.padEnd(8)}  ${h.kind.padEnd(5)}  ${`${h.amount} ${h.asset}`.padStart(16)}  ${h.username} (${h.userId})  ${h.signals.map((s) => s.signal).join(',')}  ${h.id}`
      if (action === 'list') {
        const status = values.status as string | undefined
        if (status !== undefined && !['held', 'released', 'voided'].includes(status)) throw new UsageError('--status is held, released or voided')
        const limit = values.limit as string | undefined
        if (limit !== undefined && !/^[1-9][0-9]*$/.test(limit)) throw new UsageError('--limit is a whole number from 1 to 100')
        const page = await withServices(({ payouts }) =>
          payouts.list({ ...(status === undefined ? {} : { status: status as 'held' }), after: values.after as string | undefined, ...(limit === undefined ? {} : { limit: Math.min(100, Number(limit)) }) }),
        )
        return print(io, json, page, () => [...page.payouts.map(line), `cursor ${page.cursor ?? '- (the last page)'}`].join('\n'))
      }
      if (action === 'release' || action === 'void') {
        const holdId = need(id, '<holdId>')
        const reason = need((values.reason as string | undefined)?.trim(), '--reason')
        if (reason.length > 500) throw new UsageError('--reason is at most 500 characters')
        const payout = await withServices((services) => services.payouts[action](holdId, reason, cliActor(services)))
        return print(io, json, { payout }, () => line(payout))
      }
      throw new UsageError(`unknown action "${action ?? ''}"`)
    },
  },

  ledger: {
    summary: 'Verify every ledger invariant; exits 1 on any breach',
    usage: 'arena ledger check [--json]',
    options: { json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      if (positionals[0] !== 'check') throw new UsageError(`unknown action "${positionals[0] ?? ''}"`)
      const report = await withServices(({ storage }) => checkLedger(storage.read.wallet))
      print(io, values.json === true, report, () =>
        [
          `${report.ok ? 'ok' : 'BREACH'}: ${report.accounts} accounts, ${report.transactions} transactions, ${report.postings} postings`,
          ...report.problems.map((p) => `  ${p}`),
        ].join('\n'),
      )
      return report.ok ? 0 : 1
    },
  },

  custody: {
    summary: 'Print a wallet\'s recovery share for offline keeping; --remove deletes it here once saved',
    usage: 'arena custody export-recovery-share <userId|username> [--remove]',
    options: { remove: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, who] = positionals
      if (action !== 'export-recovery-share') throw new UsageError(`unknown action "${action ?? ''}"`)
      const ref = need(who, '<userId|username>')
      const config = loadConfig()
      return withServices(async (services) => {
        // An unknown user and a user without a wallet are both "no wallet".
        const userId = await services.auth.userIdOf(ref)
        const keyRef = userId === null ? null : await services.wallet.keyRefOf(userId)
        if (keyRef === null) throw new AppError('not_found', `No wallet for ${JSON.stringify(ref)}`)
        // The data dir's custody/ (SQLite) or the database's vault (PostgreSQL).
        const shares = custodySharesFor(config, services.storage)
        const share = await shares.text(keyRef, 'recovery')
        if (share === null) throw new AppError('not_found', 'The recovery share is no longer on this machine (already exported)')
        // Recorded before the share is shown or removed: no export without its record.
        await recordCliAction(services, { action: 'custody.export_recovery_share', target: userId!, details: { remove: values.remove === true } })
        io.out(share)
        // Deleting is a second, explicit step (--remove), so a failed redirect
        // cannot lose the only copy. Once removed, this machine holds one share
        // fewer: with the co-signer elsewhere, no single machine can sign.
        if (values.remove === true) await shares.remove(keyRef, 'recovery')
        return 0
      })
    },
  },

  cosigner: {
    summary: 'Run the co-signer of custody mode "cosigner" (own data dir and port, ARENA_COSIGNER_SECRET)',
    usage: 'arena cosigner',
    options: {},
    async run() {
      const config = loadConfig()
      const cosigner = startCosigner(config, createLogger(config.logLevel))
      await nextStopSignal()
      cosigner.stop()
      return 0
    },
  },

  security: {
    summary: 'List security events, or verify the tamper-evident chain (exit 1 on a break)',
    usage: 'arena security events [--after <cursor>] [--limit N] [--json] | arena security verify-log [--json]',
    options: { after: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const json = values.json === true
      if (positionals[0] === 'events') {
        const after = (values.after as string | undefined) ?? '0'
        const limit = Number((values.limit as string | undefined) ?? '100')
        if (!/^[0-9]{1,16}$/.test(after) || !Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--after is a cursor, --limit 1 to 500')
        const page = await withServices(({ storage }) => listSecurityEvents(storage.read.security, Number(after), limit))
        return print(io, json, page, () =>
          [...page.events.map((e) => `${e.receivedAt}  ${e.level.padEnd(11)} ${e.kind}  user ${e.userId ?? '-'}  ${JSON.stringify(e.details)}`), `cursor ${page.cursor}`].join('\n'),
        )
      }
      if (positionals[0] === 'verify-log') {
        const opened = await openServices(loadConfig())
        let report
        try {
          report = await verifySecurityLog(opened.services.storage.read.security, opened.secrets.chainKey)
        } finally {
          await opened.close()
        }
        print(io, json, report, () => (report.ok ? `ok: ${report.rows} events, chain intact` : `BROKEN at event ${report.brokenAt}: ${report.reason}`))
        return report.ok ? 0 : 1
      }
      throw new UsageError(`unknown action "${positionals[0] ?? ''}"`)
    },
  },

  keys: {
    summary: 'List the access-token signing keys, or add a new current one (old tokens keep verifying until they expire)',
    usage: 'arena keys list [--json] | arena keys rotate [--drop-previous] [--json]',
    options: { 'drop-previous': { type: 'boolean' }, json: { type: 'boolean' } },
    positionals: true,
    async run({ values, positionals }, io) {
      const json = values.json === true
      const config = loadConfig()
      const describe = (keys: readonly { kid: string }[], from: string) => ({
        current: keys[keys.length - 1]!.kid,
        verifying: keys.map((key) => key.kid),
        from,
      })
      const text = (report: ReturnType<typeof describe>) =>
        [`current key ${report.current} (from the ${report.from})`, ...report.verifying.slice(0, -1).map((kid) => `  still verifying ${kid}`)].join('\n')
      const from = { file: 'data dir', database: 'database', environment: 'environment' } as const
      if (positionals[0] === 'list') {
        const secrets = await withSecretStore(config, (store) => store.load())
        const report = describe(secrets.signingKeys, from[secrets.signingKeysFrom])
        return print(io, json, report, () => text(report))
      }
      if (positionals[0] === 'rotate') {
        const dropOthers = values['drop-previous'] === true
        // In the data dir's file, running servers on it pick the new key up
        // within a second. In the database's vault, every instance re-reads
        // the keys every second and the new key signs once they all had the
        // time to (`next`, src/vault/secrets.ts).
        let rotation
        try {
          rotation = await withSecretStore(config, async (store) => ({ ...(await store.rotate({ dropOthers })), where: store.where }))
        } catch (error) {
          io.err(`arena: ${(error as Error).message}`)
          return 1
        }
        // The key is written where the secrets are kept; its audit record is a write of its own, after it.
        await withServices((services) => recordCliAction(services, { action: 'keys.rotate', target: rotation.next?.kid ?? rotation.keys.at(-1)!.kid, details: { dropPrevious: dropOthers } }))
        const report = { ...describe(rotation.keys, rotation.where), ...(rotation.next ? { next: rotation.next } : {}) }
        return print(io, json, report, () =>
          [text(report), ...(rotation.next ? [`  new key ${rotation.next.kid} signs from ${rotation.next.signsFrom} (every instance verifies it by then)`] : [])].join('\n'),
        )
      }
      throw new UsageError(`unknown action "${positionals[0] ?? ''}"`)
    },
  },

  'admin-token': {
    summary: 'Print the operator token of the admin API (generated into the data dir in local; x-admin-token header)',
    usage: 'arena admin-token',
    options: {},
    async run(_args, io) {
      const config = loadConfig()
      if (config.adminToken !== undefined) {
        io.err('arena: ARENA_ADMIN_TOKEN is set; the admin API takes that value')
        return 1
      }
      const secrets = await withSecretStore(config, (store) => store.load({ generateOperatorToken: true }))
      if (secrets.adminToken === undefined) {
        io.err(`arena: no operator token: outside ARENA_ENV=local the admin API stays disabled until ARENA_ADMIN_TOKEN is set`)
        return 1
      }
      io.out(secrets.adminToken)
      return 0
    },
  },
}
