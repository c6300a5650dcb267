// The device-code flow (contract §13, RFC 8628) through the real routes: the
// device's two API calls, and the player's /device page driven with plain
// HTTP forms (cookie and CSRF token carried by hand, as a browser would).
import { expect } from 'bun:test'
import type { DeviceCodeResponse } from '../../src/modules/auth/model'
import { postJson, req, type Handler } from './app'
import { PASSWORD } from './auth'

export async function startDevice(ctx: Handler, headers: Record<string, string> = {}): Promise<DeviceCodeResponse> {
  const res = await ctx.handle(postJson('/api/v1/auth/device-code', {}, headers))
  expect(res.status).toBe(200)
  return (await res.json()) as DeviceCodeResponse
}

export function pollDevice(ctx: Handler, deviceCode: string, headers: Record<string, string> = {}): Promise<Response> {
  return ctx.handle(postJson('/api/v1/auth/device-code/token', { deviceCode }, headers))
}

/** Answers with `status` and the envelope's `code`. */
export async function expectError(res: Response, status: number, code: string): Promise<void> {
  const body = (await res.json()) as { error: { code: string; status: number } }
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code })
  expect(body.error.status).toBe(status)
}

/** A form POST to the page, as a browser sends it from the page itself (no Origin: same-site forms may omit it). */
export function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Request {
  return req(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() })
}

/** The `name=value` of the page cookie a response sets. */
export function cookieOf(res: Response): string {
  const set = res.headers.get('set-cookie')
  expect(set).toBeTruthy()
  return set!.split(';')[0]!
}

/** The CSRF token in a page's forms. */
export function csrfIn(html: string): string {
  const match = /name="_csrf" value="([0-9a-f]{64})"/.exec(html)
  expect(match).not.toBeNull()
  return match![1]!
}

/** Signs in on the /device page with a password; the page cookie. */
export async function pageSignIn(ctx: Handler, identifier: string, password = PASSWORD, code?: string): Promise<string> {
  const res = await ctx.handle(form('/device/login', { identifier, password, ...(code ? { code } : {}) }))
  expect(res.status).toBe(303)
  return cookieOf(res)
}

/** Signs in on the page, opens the code's page and presses Approve (or Deny); the answer page. */
export async function answerOnPage(ctx: Handler, identifier: string, userCode: string, decision: 'approve' | 'deny' = 'approve'): Promise<Response> {
  const cookie = await pageSignIn(ctx, identifier, PASSWORD, userCode)
  const page = await ctx.handle(req(`/device?code=${userCode}`, { headers: { cookie } }))
  expect(page.status).toBe(200)
  const csrf = csrfIn(await page.text())
  return ctx.handle(form('/device/approve', { _csrf: csrf, code: userCode, decision }, { cookie }))
}
