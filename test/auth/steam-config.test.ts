// The Steam settings (contract §13): Steam sign-in is on only with both the
// app id and the publisher key; the settings that tune it mean nothing
// without them and are refused alone; the publisher key, a secret, never
// appears in a problem or in the printed configuration.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { steamSettingsOf } from '../../src/modules/auth/steam'
import { problemsOf } from '../helpers/config'

const KEY = '0123456789ABCDEF0123456789ABCDEF'
const ON = { ARENA_STEAM_APP_ID: '480', ARENA_STEAM_WEB_API_KEY: KEY }


describe('Steam settings', () => {
  test('off by default; the documented defaults for the rest', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({ steamAppId: undefined, steamWebApiKey: undefined, steamIdentity: 'arena', steamApiUrl: 'https://partner.steam-api.com', steamTimeoutMs: 5000 })
    expect(steamSettingsOf(config)).toBeUndefined()
  })

  test('on with the app id and the publisher key; each tuning setting read', () => {
    const config = loadConfig({ ...ON, ARENA_STEAM_IDENTITY: 'my-game', ARENA_STEAM_API_URL: 'https://steam.example.com/api/', ARENA_STEAM_TIMEOUT_MS: '2500' })
    const settings = steamSettingsOf(config)!
    expect(settings).toMatchObject({ appId: '480', identity: 'my-game', apiUrl: 'https://steam.example.com/api/', timeoutMs: 2500 })
    expect(settings.webApiKey.reveal()).toBe(KEY)
  })

  test('the app id and the key only together, each naming the other', () => {
    expect(problemsOf({ ARENA_STEAM_APP_ID: '480' })).toEqual([expect.stringContaining('ARENA_STEAM_APP_ID requires ARENA_STEAM_WEB_API_KEY')])
    expect(problemsOf({ ARENA_STEAM_WEB_API_KEY: KEY })).toEqual([expect.stringContaining('ARENA_STEAM_WEB_API_KEY requires ARENA_STEAM_APP_ID')])
  })

  test('identity, URL and timeout alone are refused: they would tune nothing', () => {
    for (const name of ['ARENA_STEAM_IDENTITY', 'ARENA_STEAM_API_URL', 'ARENA_STEAM_TIMEOUT_MS']) {
      const value = name === 'ARENA_STEAM_API_URL' ? 'https://partner.steam-api.com' : name === 'ARENA_STEAM_TIMEOUT_MS' ? '1000' : 'arena'
      expect(problemsOf({ [name]: value })).toEqual([`${name} only applies with ARENA_STEAM_APP_ID and ARENA_STEAM_WEB_API_KEY (Steam sign-in); set them or unset ${name}`])
    }
  })

  test('bad values are refused, each naming its variable', () => {
    expect(problemsOf({ ...ON, ARENA_STEAM_APP_ID: 'spacewar' })).toEqual([expect.stringContaining('ARENA_STEAM_APP_ID must be a Steam app id')])
    expect(problemsOf({ ...ON, ARENA_STEAM_APP_ID: '0480' })).toEqual([expect.stringContaining('ARENA_STEAM_APP_ID must be a Steam app id')])
    expect(problemsOf({ ...ON, ARENA_STEAM_IDENTITY: 'my game' })).toEqual([expect.stringContaining('ARENA_STEAM_IDENTITY must be 1 to 128 printable ASCII characters')])
    expect(problemsOf({ ...ON, ARENA_STEAM_IDENTITY: 'x'.repeat(129) })).toEqual([expect.stringContaining('ARENA_STEAM_IDENTITY must be')])
    expect(problemsOf({ ...ON, ARENA_STEAM_API_URL: 'partner.steam-api.com' })).toEqual([expect.stringContaining('ARENA_STEAM_API_URL must be an http(s) URL')])
    expect(problemsOf({ ...ON, ARENA_STEAM_API_URL: 'https://partner.steam-api.com/?key=x' })).toEqual([expect.stringContaining('ARENA_STEAM_API_URL must be an http(s) URL without a query')])
    expect(problemsOf({ ...ON, ARENA_STEAM_TIMEOUT_MS: '10' })).toEqual(['ARENA_STEAM_TIMEOUT_MS must be between 50 and 60000, got 10'])
  })

  test('production refuses a Steam URL that is not https: the key travels in its query string', () => {
    const production = { ARENA_ENV: 'production', ARENA_JWT_SECRET: 's'.repeat(32), ARENA_ACCEPT_SINGLE_VOLUME_CUSTODY: 'true', ...ON }
    expect(problemsOf({ ...production, ARENA_STEAM_API_URL: 'http://partner.steam-api.com' })).toEqual([expect.stringContaining('ARENA_ENV=production requires ARENA_STEAM_API_URL to be https://')])
    expect(loadConfig(production).steamApiUrl).toBe('https://partner.steam-api.com')
  })

  test('the publisher key never appears in a problem or in the printed configuration', () => {
    const problems = problemsOf({ ARENA_STEAM_WEB_API_KEY: `${KEY} with spaces` })
    expect(problems.join('\n')).not.toContain(KEY)
    expect(problems).toContainEqual(expect.stringContaining('ARENA_STEAM_WEB_API_KEY must be the key as the Steamworks partner site shows it'))
    const config = loadConfig(ON)
    expect(JSON.stringify(config)).not.toContain(KEY)
    expect(String(config.steamWebApiKey)).toBe('[redacted]')
    expect(Bun.inspect(config)).not.toContain(KEY)
  })
})
