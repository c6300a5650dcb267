// One process of the cross-process rotation race: opens the shared database
// with its own connections (an instance of its own, on PostgreSQL), waits for the common start time, rotates once, and
// prints the outcome as JSON.
import { openStorage } from '../../src/db/open'
import { createAccessTokens } from '../../src/modules/auth/access-tokens'
import { AuthService } from '../../src/modules/auth/service'
import { inProcessWakeups } from '../../src/modules/events/wakeups'
import { systemClock } from '../../src/shared/clock'
import { createLogger } from '../../src/shared/logger'
import { loadConfig } from '../../src/config'
import { loadSecrets } from '../../src/services'

const [dataDir, sessionId, userId, refreshToken, startAt, graceS = '0'] = process.argv.slice(2) as [string, string, string, string, string, string?]
// The test's database: the data dir (SQLite), or ARENA_DATABASE_URL when the test runs on PostgreSQL.
const databaseUrl = process.env.ARENA_DATABASE_URL
const config = loadConfig({ ARENA_DATA_DIR: dataDir, ...(databaseUrl ? { ARENA_DATABASE_URL: databaseUrl, ARENA_MASTER_KEY: process.env.ARENA_MASTER_KEY ?? '' } : {}) })
const storage = await openStorage(config, { logger: createLogger('silent'), wakeups: inProcessWakeups() })
const secrets = await loadSecrets(config, storage)
const auth = new AuthService({
  storage,
  clock: systemClock,
  accessTokens: createAccessTokens({ keys: () => secrets.signingKeys, ttlS: 900, maxExpiredS: 86_400, clock: systemClock }),
  refreshReuseGraceS: Number(graceS),
})
while (Date.now() < Number(startAt)) {
  // spin: every process starts its transaction at the same moment
}
try {
  await auth.rotate({ refreshToken, sessionId, userId })
  console.log(JSON.stringify({ outcome: 'won' }))
} catch (error) {
  console.log(JSON.stringify({ outcome: (error as { code?: string }).code ?? String(error) }))
} finally {
  await storage.close()
}
