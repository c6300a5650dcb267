// ARENA_OIDC_PROVIDERS, ARENA_OIDC_REDIRECTS and ARENA_SERVER_URL at start-up:
// every mistake named at once, the client secret never repeated.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig({ ARENA_DATA_DIR: '/tmp/unused', ...env })
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  return []
}

describe('OpenID Connect settings', () => {
  test('a good list is read, the secret kept out of every print', () => {
    const config = loadConfig({
      ARENA_DATA_DIR: '/tmp/unused',
      ARENA_OIDC_PROVIDERS: JSON.stringify([
        { name: 'google', issuer: 'https://accounts.google.com', clientId: 'web.apps.googleusercontent.com', clientSecret: 'shh-very-secret' },
        { name: 'apple', issuer: 'https://appleid.apple.com', clientId: 'com.example.web', nativeClientIds: ['com.example.game'] },
      ]),
      ARENA_OIDC_REDIRECTS: 'https://game.example/, mygame://signin',
      ARENA_SERVER_URL: 'https://api.example.com/',
    })
    expect(config.oidcProviders.map((p) => [p.name, p.clientId, p.nativeClientIds])).toEqual([
      ['google', 'web.apps.googleusercontent.com', []],
      ['apple', 'com.example.web', ['com.example.game']],
    ])
    expect(config.oidcProviders[0]!.clientSecret!.reveal()).toBe('shh-very-secret')
    expect(JSON.stringify(config)).not.toContain('shh-very-secret')
    expect(config.oidcRedirects).toEqual(['https://game.example/', 'mygame://signin'])
    expect(config.serverUrl).toBe('https://api.example.com')
    expect(loadConfig({ ARENA_DATA_DIR: '/tmp/unused' }).oidcProviders).toEqual([])
  })

  test('every mistake is named, at once', () => {
    const found = problems({
      ARENA_OIDC_PROVIDERS: JSON.stringify([
        { name: 'Google', issuer: 'https://accounts.google.com', clientId: 'a' },
        { name: 'ok', issuer: 'http://accounts.example.com', clientId: 'b', clientSecret: '' },
        { name: 'ok', issuer: 'https://x.example/?q=1', clientId: '' },
        { name: 'dup', issuer: 'https://x.example', clientId: 'c', secret: 'typo' },
        'not an object',
      ]),
      ARENA_OIDC_REDIRECTS: 'https://game.example,not a url',
      ARENA_SERVER_URL: 'ftp://x',
    })
    const expected = [
      'ARENA_OIDC_PROVIDERS[0].name must be 1 to 32 of a-z, 0-9, _ and -',
      'ARENA_OIDC_PROVIDERS[1].issuer must be the provider\'s issuer URL, https:// (http:// only for localhost)',
      'ARENA_OIDC_PROVIDERS[1].clientSecret must be a non-empty string',
      'ARENA_OIDC_PROVIDERS[2].issuer must be',
      'ARENA_OIDC_PROVIDERS[2].clientId must be',
      'ARENA_OIDC_PROVIDERS[3] has no "secret"',
      'ARENA_OIDC_PROVIDERS[4] must be an object',
      'ARENA_OIDC_REDIRECTS: "https://game.example" must end its host with a slash',
      'ARENA_OIDC_REDIRECTS: "not a url" must be a URL prefix',
      'ARENA_SERVER_URL must be an http(s) URL',
    ]
    for (const start of expected) expect({ start, found: found.some((p) => p.startsWith(start)) }).toEqual({ start, found: true })
    expect(problems({ ARENA_OIDC_PROVIDERS: '[{"name":"a","issuer":"https://a.example","clientId":"x"},{"name":"a","issuer":"https://b.example","clientId":"y"}]' })).toEqual([
      'ARENA_OIDC_PROVIDERS[1].name "a" is given twice: each provider needs its own name',
    ])
    expect(problems({ ARENA_OIDC_PROVIDERS: '{"name":"a"}' })[0]).toStartWith('ARENA_OIDC_PROVIDERS must be a JSON list')
    expect(problems({ ARENA_OIDC_PROVIDERS: 'google' })[0]).toStartWith('ARENA_OIDC_PROVIDERS must be JSON')
    // The secret is never repeated, even in a problem about it.
    expect(problems({ ARENA_OIDC_PROVIDERS: '[{"name":"a","issuer":"nope","clientId":"x","clientSecret":"shh-very-secret"}]' }).join()).not.toContain('shh-very-secret')
  })
})
