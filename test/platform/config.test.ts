// Configuration is read once, validated as a whole and frozen; production
// refuses local-only defaults; generated secrets are made once and kept.
import { describe, expect, test } from 'bun:test'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { AMOUNTS, boundsOf, CHOICES, ConfigError, helpLine, INTS, KNOWN_VARIABLES, loadConfig, MIN_LENGTHS, MIN_SECRET_LENGTH, SETTINGS, type SettingName } from '../../src/config'
import { BEGIN, END, README, withSettingsTable } from '../../scripts/docs-settings'
import { helpText } from '../../src/cli/main'
import { USDC } from '../../src/shared/money'
import { resolveSecrets, SECRETS_FILE } from '../../src/secrets'
import { createLogger } from '../../src/shared/logger'
import { tempDir } from '../helpers/app'
import { problemsOf } from '../helpers/config'

const strong = 's'.repeat(MIN_SECRET_LENGTH)


describe('loadConfig', () => {
  test('defaults are the documented ones', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      env: 'local',
      host: '127.0.0.1',
      port: 8080,
      dataDir: './data',
      logLevel: 'info',
      adminToken: undefined,
      jwtSecret: undefined,
      accessTtlS: 900,
      refreshTtlS: 30 * 86_400,
      pinSessionTtlS: 300,
      gameSessionTtlS: 1800,
      eventRetentionDays: 30,
      shutdownGraceS: 8,
      refreshReuseGraceS: 10,
      trustProxy: false,
      jobsEnabled: true,
    })
    expect(Object.isFrozen(config)).toBe(true)
  })

  test('reads every variable', () => {
    const config = loadConfig({
      ARENA_PORT: '9000',
      ARENA_HOST: '127.0.0.1',
      ARENA_DATA_DIR: '/var/lib/arena',
      ARENA_ENV: 'staging',
      ARENA_LOG_LEVEL: 'warn',
      ARENA_ADMIN_TOKEN: 'admin-token',
      ARENA_JWT_SECRET: strong,
      ARENA_ACCESS_TTL_S: '60',
      ARENA_PIN_SESSION_TTL_S: '120',
      ARENA_GAME_SESSION_TTL_S: '600',
      ARENA_REFRESH_TTL_S: '7200',
      ARENA_EVENT_RETENTION_DAYS: '7',
      ARENA_SHUTDOWN_GRACE_S: '3',
      ARENA_TRUST_PROXY: 'true',
      ARENA_JOBS_ENABLED: 'false',
    })
    expect(config).toMatchObject({
      port: 9000,
      host: '127.0.0.1',
      dataDir: '/var/lib/arena',
      env: 'staging',
      logLevel: 'warn',
      adminToken: 'admin-token',
      jwtSecret: strong,
      accessTtlS: 60,
      pinSessionTtlS: 120,
      gameSessionTtlS: 600,
      refreshTtlS: 7200,
      eventRetentionDays: 7,
      shutdownGraceS: 3,
      trustProxy: true,
      jobsEnabled: false,
    })
  })

  test('reports every problem at once, naming the variable', () => {
    const problems = problemsOf({ ARENA_PORT: 'eighty', ARENA_ENV: 'prod', ARENA_LOG_LEVEL: 'loud', ARENA_ACCESS_TTL_S: '-5' })
    expect(problems.length).toBe(4)
    expect(problems.join('\n')).toContain('ARENA_PORT')
    expect(problems.join('\n')).toContain('ARENA_ENV')
    expect(problems.join('\n')).toContain('ARENA_LOG_LEVEL')
    expect(problems.join('\n')).toContain('ARENA_ACCESS_TTL_S')
  })

  test('a boolean setting takes true/1/yes/on and false/0/no/off in any case, and nothing else', () => {
    for (const word of ['1', 'true', 'TRUE', 'yes', 'Yes', 'on', 'ON', 'On']) expect(loadConfig({ ARENA_TRUST_PROXY: word }).trustProxy).toBe(true)
    for (const word of ['0', 'false', 'False', 'no', 'NO', 'off', 'OFF']) expect(loadConfig({ ARENA_TRUST_PROXY: word }).trustProxy).toBe(false)
    // One parser for every boolean setting.
    expect(loadConfig({ ARENA_JOBS_ENABLED: 'off' }).jobsEnabled).toBe(false)
    expect(loadConfig({ ARENA_REQUIRE_VERIFIED_EMAIL: 'on' }).requireVerifiedEmail).toBe(true)
    for (const word of ['maybe', 'onn', '2', 'y']) {
      const problem = problemsOf({ ARENA_TRUST_PROXY: word })[0]!
      expect(problem).toContain('ARENA_TRUST_PROXY')
      expect(problem).toContain('on')
      expect(problem).toContain(`"${word}"`)
    }
  })

  test('refuses out-of-range numbers and unknown ARENA_ variables (typos)', () => {
    expect(problemsOf({ ARENA_PORT: '70000' })[0]).toContain('between 0 and 65535')
    expect(problemsOf({ ARENA_POTR: '8080' })[0]).toContain('ARENA_POTR')
  })

  test('a misspelt ARENA_ variable is answered with the one it most likely meant', () => {
    expect(problemsOf({ ARENA_PROT: '8080' })[0]).toStartWith('ARENA_PROT is not a setting arena knows: did you mean ARENA_PORT?')
    expect(problemsOf({ ARENA_DATADIR: '/tmp/x' })[0]).toContain('did you mean ARENA_DATA_DIR?')
    expect(problemsOf({ ARENA_ADMIN_TOKN: strong })[0]).toContain('did you mean ARENA_ADMIN_TOKEN?')
  })

  test('a name close to none gets no guess, only the list', () => {
    const problem = problemsOf({ ARENA_FLUX_CAPACITOR: 'on' })[0]!
    expect(problem).not.toContain('did you mean')
    expect(problem).toContain('known: ARENA_ENV')
  })

  test('ARENA_JWT_PREVIOUS_SECRET needs ARENA_JWT_SECRET beside it, differs from it and is long enough', () => {
    expect(problemsOf({ ARENA_JWT_PREVIOUS_SECRET: strong })[0]).toContain('only makes sense beside ARENA_JWT_SECRET')
    expect(problemsOf({ ARENA_JWT_SECRET: strong, ARENA_JWT_PREVIOUS_SECRET: strong })[0]).toContain('must differ')
    expect(problemsOf({ ARENA_JWT_SECRET: strong, ARENA_JWT_PREVIOUS_SECRET: 'short' })[0]).toContain('at least 32')
    expect(loadConfig({ ARENA_JWT_SECRET: strong, ARENA_JWT_PREVIOUS_SECRET: 't'.repeat(MIN_SECRET_LENGTH) }).jwtPreviousSecret).toBe('t'.repeat(MIN_SECRET_LENGTH))
  })

  test('refuses a short JWT secret in any environment', () => {
    expect(problemsOf({ ARENA_JWT_SECRET: 'short' })[0]).toContain('ARENA_JWT_SECRET')
  })

  test('production refuses a generated JWT secret, a short admin token and debug logging', () => {
    const problems = problemsOf({ ARENA_ENV: 'production', ARENA_ADMIN_TOKEN: 'admin', ARENA_LOG_LEVEL: 'debug', ARENA_CUSTODY: 'cosigner', ARENA_COSIGNER_URL: 'http://127.0.0.1:9', ARENA_COSIGNER_SECRET: strong })
    expect(problems.length).toBe(3)
    expect(problems.join('\n')).toContain('ARENA_JWT_SECRET')
    expect(problems.join('\n')).toContain('ARENA_ADMIN_TOKEN')
    expect(problems.join('\n')).toContain('ARENA_LOG_LEVEL')
    expect(loadConfig({ ARENA_ENV: 'production', ARENA_JWT_SECRET: strong, ARENA_ADMIN_TOKEN: strong, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true' }).env).toBe('production')
  })
})

// Contract §8: a PIN verify (a withdrawal) needs a verified email in
// production unless the operator says otherwise, and nowhere else unless asked.
describe('ARENA_REQUIRE_VERIFIED_EMAIL', () => {
  const production = { ARENA_ENV: 'production', ARENA_JWT_SECRET: strong, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true' }

  test('defaults to on in production and off everywhere else', () => {
    expect(loadConfig(production).requireVerifiedEmail).toBe(true)
    for (const env of ['local', 'sandbox', 'staging']) expect(loadConfig({ ARENA_ENV: env }).requireVerifiedEmail).toBe(false)
    expect(loadConfig({}).requireVerifiedEmail).toBe(false)
  })

  test('either way can be set explicitly; anything but a boolean is refused', () => {
    expect(loadConfig({ ...production, ARENA_REQUIRE_VERIFIED_EMAIL: 'false' }).requireVerifiedEmail).toBe(false)
    expect(loadConfig({ ARENA_REQUIRE_VERIFIED_EMAIL: 'true' }).requireVerifiedEmail).toBe(true)
    expect(problemsOf({ ARENA_REQUIRE_VERIFIED_EMAIL: 'sometimes' })[0]).toContain('ARENA_REQUIRE_VERIFIED_EMAIL must be true or false')
  })
})

// Contract §10: withdrawal limits are USDC amounts in the money grammar, in
// minor units once read; unset is no limit.
describe('ARENA_WITHDRAWAL_MAX and ARENA_WITHDRAWAL_DAILY_MAX', () => {
  test('unset: no limit', () => {
    const config = loadConfig({})
    expect(config.withdrawalMax).toBeUndefined()
    expect(config.withdrawalDailyMax).toBeUndefined()
  })

  test('a positive USDC amount, read as minor units', () => {
    const config = loadConfig({ ARENA_WITHDRAWAL_MAX: '250.5', ARENA_WITHDRAWAL_DAILY_MAX: '1000' })
    expect(config.withdrawalMax).toBe(250_500_000n)
    expect(config.withdrawalDailyMax).toBe(1_000_000_000n)
    expect(loadConfig({ ARENA_WITHDRAWAL_MAX: '0.000001' }).withdrawalMax).toBe(1n)
    expect(loadConfig({ ARENA_WITHDRAWAL_DAILY_MAX: '999999999999999999.999999' }).withdrawalDailyMax).toBe(999_999_999_999_999_999_999_999n)
  })

  test('zero, signs, exponents, too many decimals and words are refused, each naming its variable', () => {
    for (const bad of ['0', '0.0', '-5', '+5', '1e3', '1.0000001', 'ten', '1,000', '.5', '01']) {
      for (const name of ['ARENA_WITHDRAWAL_MAX', 'ARENA_WITHDRAWAL_DAILY_MAX']) {
        const problems = problemsOf({ [name]: bad })
        expect(problems).toHaveLength(1)
        expect(problems[0]).toStartWith(`${name} must be a positive USDC amount`)
        expect(problems[0]).toContain(`got "${bad}"`)
      }
    }
  })
})

// Safe defaults (issue "what a new user trips on"): a setting that is present
// but empty is a mistake, never a silent default.
describe('an empty value is refused, not taken as the default', () => {
  test.each(['ARENA_PORT', 'ARENA_HOST', 'ARENA_ENV', 'ARENA_ADMIN_TOKEN', 'ARENA_JWT_SECRET', 'ARENA_DATA_DIR', 'ARENA_TRUST_PROXY'])('%s=', (name) => {
    const problems = problemsOf({ [name]: '' })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toBe(`${name} is set but empty: give it a value or unset it to use the default`)
  })

  test('whitespace alone counts as empty', () => {
    expect(problemsOf({ ARENA_PORT: '  ' })[0]).toContain('ARENA_PORT is set but empty')
  })

  test('every known variable is refused when empty', () => {
    for (const name of KNOWN_VARIABLES) expect(problemsOf({ [name]: '' }).join('\n')).toContain(`${name} is set but empty`)
  })
})

// All three key shares of every wallet on one volume is a demo set-up: a copy
// of that volume can sign. Production runs it only when told so explicitly.
describe('production with single-volume custody', () => {
  const production = { ARENA_ENV: 'production', ARENA_JWT_SECRET: strong }

  test('is refused without the acknowledgement, naming the way out', () => {
    const problems = problemsOf(production)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('ARENA_CUSTODY=local')
    expect(problems[0]).toContain('ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true')
    expect(problemsOf({ ...production, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'false' })[0]).toContain('ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY=true')
  })

  test('starts with it, or with custody cosigner', () => {
    expect(loadConfig({ ...production, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true' }).acceptSingleVolumeCustody).toBe(true)
    expect(loadConfig({ ...production, ARENA_CUSTODY: 'cosigner', ARENA_COSIGNER_URL: 'http://127.0.0.1:9', ARENA_COSIGNER_SECRET: strong }).custody).toBe('cosigner')
  })

  test('other environments need no acknowledgement', () => {
    for (const env of ['local', 'sandbox', 'staging']) expect(loadConfig({ ARENA_ENV: env }).custody).toBe('local')
  })
})

describe('listening address', () => {
  test('local listens on loopback only; every other environment on all interfaces; ARENA_HOST wins', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1')
    for (const env of ['sandbox', 'staging']) expect(loadConfig({ ARENA_ENV: env }).host).toBe('0.0.0.0')
    expect(loadConfig({ ARENA_ENV: 'production', ARENA_JWT_SECRET: strong, ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true' }).host).toBe('0.0.0.0')
    expect(loadConfig({ ARENA_HOST: '0.0.0.0' }).host).toBe('0.0.0.0')
  })
})

// With PostgreSQL the secrets live in the database, sealed under
// ARENA_MASTER_KEY; with SQLite nothing is sealed, so a key there would only
// give a false sense of protection.
describe('ARENA_MASTER_KEY', () => {
  const url = 'postgres://arena@db.internal:5432/arena'
  const hexKey = 'ab'.repeat(32)

  test('is required with ARENA_DATABASE_URL, and says how to make one', () => {
    const problems = problemsOf({ ARENA_DATABASE_URL: url })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('ARENA_DATABASE_URL requires ARENA_MASTER_KEY')
    expect(problems[0]).toContain('openssl rand -hex 32')
  })

  test('is 32 bytes, as 64 hex digits or base64', () => {
    const bytes = Buffer.from(hexKey, 'hex')
    for (const text of [hexKey, bytes.toString('base64'), bytes.toString('base64url')]) {
      expect(loadConfig({ ARENA_DATABASE_URL: url, ARENA_MASTER_KEY: text }).masterKey).toBeDefined()
    }
    for (const text of ['ab'.repeat(31), 'ab'.repeat(33), Buffer.alloc(16).toString('base64'), 'not a key at all, just words']) {
      const problems = problemsOf({ ARENA_DATABASE_URL: url, ARENA_MASTER_KEY: text })
      expect(problems).toEqual(['ARENA_MASTER_KEY must be exactly 32 bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)'])
    }
  })

  test('is refused without ARENA_DATABASE_URL: SQLite seals nothing', () => {
    const problems = problemsOf({ ARENA_MASTER_KEY: hexKey })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('ARENA_MASTER_KEY is only used with ARENA_DATABASE_URL')
    expect(loadConfig({}).masterKey).toBeUndefined()
  })

  test('never appears in a problem or in the printed configuration', () => {
    const wrong = 'cd'.repeat(33)
    expect(problemsOf({ ARENA_DATABASE_URL: url, ARENA_MASTER_KEY: wrong }).join('\n')).not.toContain(wrong)
    expect(problemsOf({ ARENA_MASTER_KEY: hexKey }).join('\n')).not.toContain(hexKey)
    const config = loadConfig({ ARENA_DATABASE_URL: url, ARENA_MASTER_KEY: hexKey })
    expect(JSON.stringify(config)).not.toContain(hexKey)
    expect(JSON.stringify(config)).toContain('"masterKey":"[master key]"')
  })
})

describe('generated secrets', () => {
  const config = (dataDir: string, env: Record<string, string> = {}) => loadConfig({ ARENA_DATA_DIR: dataDir, ...env })

  test('are generated once, persisted with mode 0600, and reused', () => {
    const dataDir = join(tempDir(), 'nested', 'data')
    const first = resolveSecrets(config(dataDir))
    expect(first.signingKeys).toHaveLength(1)
    expect(first.signingKeys[0]!.secret.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH)
    expect(first.chainKey).toMatch(/^[0-9a-f]{64}$/)
    const file = join(dataDir, SECRETS_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8')).signingKeys[0].secret).toBe(first.signingKeys[0]!.secret)
    expect(resolveSecrets(config(dataDir))).toEqual(first)
  })

  test('a provided secret signs; the chain key is still the data dir\'s own', () => {
    const dataDir = tempDir()
    const secrets = resolveSecrets(config(dataDir, { ARENA_JWT_SECRET: strong }))
    expect(secrets.signingKeysFrom).toBe('environment')
    expect(secrets.signingKeys.map((key) => key.secret)).toEqual([strong])
    // Changing the provided secret later leaves the chain key alone.
    expect(resolveSecrets(config(dataDir, { ARENA_JWT_SECRET: 't'.repeat(MIN_SECRET_LENGTH) })).chainKey).toBe(secrets.chainKey)
  })

  test('a corrupt secrets file stops start-up with a clear message instead of silently rotating', () => {
    const dataDir = tempDir()
    writeFileSync(join(dataDir, SECRETS_FILE), 'not json')
    expect(() => resolveSecrets(config(dataDir))).toThrow(/secrets\.json is not a JSON object/)
  })
})

describe('logger', () => {
  test('writes JSON lines at or above its level and redacts credential-named fields', () => {
    const lines: string[] = []
    const logger = createLogger('info', (line) => lines.push(line))
    logger.debug('hidden')
    logger.info('login', { userId: 'usr_1', password: 'p4ss', refreshToken: 'rt', pin: '1234', authorization: 'Bearer x' })
    expect(lines.length).toBe(1)
    const record = JSON.parse(lines[0]!)
    expect(record).toMatchObject({ level: 'info', msg: 'login', userId: 'usr_1' })
    for (const key of ['password', 'refreshToken', 'pin', 'authorization']) expect(record[key]).toBe('[redacted]')
  })

  test('redacts at any depth', () => {
    const lines: string[] = []
    createLogger('info', (line) => lines.push(line)).info('nested', {
      request: { headers: { authorization: 'Bearer abc', 'x-game-key': 'gk' }, body: { password: 'hunter2' } },
      list: [{ jwt: 'eyJ' }],
    })
    expect(lines[0]).not.toContain('abc')
    expect(lines[0]).not.toContain('hunter2')
    expect(lines[0]).not.toContain('eyJ')
    expect(lines[0]).not.toContain('"gk"')
  })

  test('never throws: bigints are written as strings, cycles degrade to a note', () => {
    const lines: string[] = []
    const logger = createLogger('info', (line) => lines.push(line))
    logger.info('money', { amountMinor: 10n ** 20n })
    expect(JSON.parse(lines[0]!).amountMinor).toBe('100000000000000000000')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(() => logger.info('cycle', { cyclic })).not.toThrow()
    expect(JSON.parse(lines[1]!)).toMatchObject({ msg: 'cycle', level: 'info' })
    const failing = createLogger('info', () => {
      throw new Error('stdout closed')
    })
    expect(() => failing.error('x')).not.toThrow()
  })
})

describe('the README', () => {
  // The Configuration table is written from SETTINGS by `npm run docs:settings`;
  // a setting added, renamed or re-bounded without running it fails here.
  test('its settings table is what `npm run docs:settings` writes from src/config.ts', () => {
    const readme = readFileSync(README, 'utf8')
    expect(readme).toContain(BEGIN)
    expect(readme).toContain(END)
    expect(withSettingsTable(readme)).toBe(readme)
  })

  test('the script refuses a README without its markers rather than guess where the table goes', () => {
    expect(() => withSettingsTable('# arena\n\nno table here\n')).toThrow('must hold the markers')
    expect(() => withSettingsTable(`${END}\n${BEGIN}\n`)).toThrow('must hold the markers')
  })

  test('every setting says its default and bounds the same way in --help and in the README, from its one row', () => {
    const readme = readFileSync(README, 'utf8')
    for (const name of Object.keys(SETTINGS) as SettingName[]) {
      const row: { defaultText: string; bounds?: { help: string; doc: string } } = SETTINGS[name]
      const line = readme.split('\n').find((l) => l.startsWith(`| \`${name}\` |`))!
      expect(line).toStartWith(`| \`${name}\` | ${row.defaultText} |`)
      if (row.bounds) {
        expect(line).toContain(`| ${row.bounds.doc} |`)
        expect(helpLine(name)).toEndWith(`; ${row.bounds.help}`)
      }
      expect(helpText()).toContain(`  ${helpLine(name)}`)
    }
  })

  test('documents every variable arena reads, and no other', async () => {
    const readme = await Bun.file(join(import.meta.dir, '..', '..', 'README.md')).text()
    const documented = new Set([...readme.matchAll(/^\| `(ARENA_[A-Z_]+)` \|/gm)].map((m) => m[1]!))
    expect([...documented].sort()).toEqual([...KNOWN_VARIABLES].sort())
  })

  // The bounds come from the tables loadConfig enforces (INTS, CHOICES,
  // MIN_LENGTHS, AMOUNTS in src/config.ts); the README states each as it is.
  const rows = new Map(
    [...readFileSync(join(import.meta.dir, '..', '..', 'README.md'), 'utf8').matchAll(/^\| `(ARENA_[A-Z_]+)` \| (.*?) \| (.*) \|$/gm)].map((m) => [m[1]!, { default: m[2]!, meaning: m[3]! }]),
  )
  const rowOf = (name: string) => {
    const row = rows.get(name)
    if (!row) throw new Error(`README has no row for ${name}`)
    return row
  }

  test('states every whole-number setting’s default and range as loadConfig enforces them', () => {
    const wrong: string[] = []
    for (const [name, spec] of Object.entries(INTS)) {
      const row = rowOf(name)
      if (!row.default.startsWith(`\`${spec.default}\``)) wrong.push(`${name}: default ${row.default}, config ${spec.default}`)
      if (!new RegExp(`(?<![\\d])${spec.min} to ${spec.max}(?![\\d])`).test(row.meaning)) wrong.push(`${name}: no "${spec.min} to ${spec.max}"`)
    }
    expect(wrong).toEqual([])
    // And the range is the one loadConfig holds: its ends pass, one beyond each fails.
    for (const [name, spec] of Object.entries(INTS)) {
      for (const value of [spec.min, spec.max]) expect(() => loadConfig(envWith(name, value))).not.toThrow()
      for (const value of [spec.min - 1, spec.max + 1].filter((v) => v >= 0)) {
        expect(() => loadConfig(envWith(name, value))).toThrow(`${name} must be between ${spec.min} and ${spec.max}`)
      }
    }
  })

  test('states every word setting’s choices and default, every secret’s shortest length, every amount’s form', () => {
    const wrong: string[] = []
    for (const [name, spec] of Object.entries(CHOICES)) {
      const row = rowOf(name)
      if (row.default !== `\`${spec.default}\``) wrong.push(`${name}: default ${row.default}, config ${spec.default}`)
      const named = new Set([...row.meaning.matchAll(/`([a-z]+)`/g)].map((m) => m[1]!))
      for (const value of spec.values) if (!named.has(value)) wrong.push(`${name}: ${value} not named`)
    }
    for (const [name, spec] of Object.entries(MIN_LENGTHS)) {
      const { meaning } = rowOf(name)
      if (!meaning.toLowerCase().includes(`at least ${spec.min} characters`)) wrong.push(`${name}: no "at least ${spec.min} characters"`)
      if (spec.only && !meaning.includes(`in \`${spec.only}\``)) wrong.push(`${name}: does not say only in ${spec.only}`)
    }
    for (const name of AMOUNTS) {
      const { meaning } = rowOf(name)
      if (!meaning.includes(`positive ${USDC.code} amount`)) wrong.push(`${name}: no "positive ${USDC.code} amount"`)
      if (!meaning.includes(`at most ${USDC.decimals} decimals`)) wrong.push(`${name}: no "at most ${USDC.decimals} decimals"`)
    }
    expect(wrong).toEqual([])
  })

  test('arena --help prints every whole-number setting’s range', () => {
    const help = helpText().split('\n')
    for (const name of Object.keys(INTS)) {
      const line = help.find((l) => l.trimStart().startsWith(`${name} `))
      expect(line).toContain(`; ${boundsOf(name)}`)
    }
  })
})

/** The smallest environment loadConfig accepts, with `name` set to `value` (and what `name` needs beside it). */
function envWith(name: string, value: number): Record<string, string> {
  const env: Record<string, string> = { ARENA_DATA_DIR: tempDir(), [name]: String(value) }
  if (name.startsWith('ARENA_BACKUP_') && name !== 'ARENA_BACKUP_DIR') Object.assign(env, { ARENA_BACKUP_DIR: tempDir(), ARENA_BACKUP_PASSPHRASE: 'a passphrase for the test' })
  if (name === 'ARENA_DATABASE_POOL') Object.assign(env, { ARENA_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db', ARENA_MASTER_KEY: 'ab'.repeat(32) })
  if (name.startsWith('ARENA_STEAM_')) Object.assign(env, { ARENA_STEAM_APP_ID: '480', ARENA_STEAM_WEB_API_KEY: '0123456789ABCDEF0123456789ABCDEF' })
  return env
}
