// Evidence in the console (contract §17): the disputes page counts each
// match's files and links to its match page, which lists them; a viewer
// downloads one as the admin API serves it (an attachment, nosniff,
// sandboxed), the bytes unchanged; a player's upload is never shown inline.
import { afterAll, expect, test } from 'bun:test'
import { createArenaApp } from '../helpers/arena'
import { consoleAs, textOf } from '../helpers/operators'
import { attached, disputedMatch, samples, sha256 } from '../helpers/evidence'

const app = await createArenaApp()
afterAll(() => app.close())

test('the disputes page counts the files, the match page lists them, a viewer downloads one byte for byte as an attachment', async () => {
  const { matchId, p1, p2 } = await disputedMatch(app)
  const png = samples.png(`console-${matchId}`)
  const html = samples.text('<img src=x onerror=alert(1)>')
  const image = await attached(app, matchId, p1, png, 'image/png')
  const note = await attached(app, matchId, p2, html, 'text/plain')
  const viewer = await consoleAs(app, 'viewer')

  const disputes = await viewer.get('/console/disputes')
  expect(disputes.status).toBe(200)
  expect(disputes.html).toContain(`<a href="/console/matches/${matchId}">2 files</a>`)

  const page = await viewer.get(`/console/matches/${matchId}`)
  expect(page.status).toBe(200)
  const text = textOf(page.html)
  expect(text).toContain(`Evidence`)
  expect(text).toContain(`${p1.username} image/png`)
  expect(text).toContain(`${p2.username} text/plain`)
  expect(page.html).toContain(`href="/console/evidence/${image.id}"`)
  expect(page.html).toContain(`href="/console/evidence/${note.id}"`)
  // What a player wrote is never part of the page, and no upload is embedded.
  expect(page.html).not.toContain('onerror')
  expect(page.html).not.toContain('<img')

  const cookie = `arena_console=${viewer.op.token}`
  for (const [evidence, bytes, type] of [[image, png, 'image/png'], [note, html, 'text/plain; charset=utf-8']] as const) {
    const res = await app.handle(new Request(`http://localhost/console/evidence/${evidence.id}`, { headers: { cookie } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(type)
    expect(res.headers.get('content-disposition')).toStartWith('attachment;')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe('sandbox')
    expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes))
  }
  // Without a session: to the sign-in page, no bytes.
  const anonymous = await app.handle(new Request(`http://localhost/console/evidence/${image.id}`))
  expect(anonymous.status).toBe(303)
  expect(anonymous.headers.get('location')).toStartWith('/console/login')
  // An unknown file: 404.
  expect((await viewer.get('/console/evidence/evd_nonesuch')).status).toBe(404)
})

test('a match without evidence says so', async () => {
  const { matchId } = await disputedMatch(app)
  const viewer = await consoleAs(app, 'viewer')
  expect((await viewer.get('/console/disputes')).html).toContain(`<a href="/console/matches/${matchId}">none: the match page</a>`)
  expect(textOf((await viewer.get(`/console/matches/${matchId}`)).html)).toContain('No evidence attached.')
})
