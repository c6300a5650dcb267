// The mail arena sends (contract §8), each in plain text and HTML. The
// product name and the links come from the configuration (ARENA_PRODUCT_NAME,
// ARENA_PUBLIC_URL): a studio's players read them, not arena's.
import type { Config } from '../../config'

export type MailBranding = Pick<Config, 'productName' | 'publicUrl'>

/** A mail ready to queue: what it is, and its two bodies. */
export interface ComposedMail {
  kind: 'verify_email' | 'reset_password' | 'test'
  subject: string
  text: string
  html: string
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text safe inside HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)
}

function link(brand: MailBranding, path: string, params: Record<string, string>): string | null {
  if (brand.publicUrl === undefined) return null
  // In the fragment, not the query: a browser never sends a fragment, so the
  // code and the address stay out of the site's access logs and of the
  // Referer its pages send. The page reads them with `location.hash`.
  return `${brand.publicUrl}${path}#${new URLSearchParams(params).toString()}`
}

function compose(kind: ComposedMail['kind'], subject: string, lines: { intro: string; code: string; validity: string; url: string | null; outro: string }): ComposedMail {
  const text = [lines.intro, '', `    ${lines.code}`, '', lines.validity, ...(lines.url ? ['', `Or open: ${lines.url}`] : []), '', lines.outro, ''].join('\n')
  const html = [
    '<!doctype html>',
    `<html><body style="font-family: sans-serif; line-height: 1.5">`,
    `<p>${escapeHtml(lines.intro)}</p>`,
    `<p style="font-size: 1.5em; font-family: monospace; letter-spacing: 0.1em"><strong>${escapeHtml(lines.code)}</strong></p>`,
    `<p>${escapeHtml(lines.validity)}</p>`,
    ...(lines.url ? [`<p><a href="${escapeHtml(lines.url)}">${escapeHtml(lines.url)}</a></p>`] : []),
    `<p>${escapeHtml(lines.outro)}</p>`,
    '</body></html>',
    '',
  ].join('\n')
  return { kind, subject, text, html }
}

export function verificationMail(brand: MailBranding, email: string, code: string, validHours: number): ComposedMail {
  return compose('verify_email', `Your ${brand.productName} verification code`, {
    intro: `Enter this code in ${brand.productName} to confirm that ${email} is your address:`,
    code,
    validity: `The code is valid for ${validHours} hours.`,
    url: link(brand, '/verify-email', { code }),
    outro: `If you did not create a ${brand.productName} account, ignore this mail.`,
  })
}

export function resetMail(brand: MailBranding, email: string, code: string, validMinutes: number): ComposedMail {
  return compose('reset_password', `Reset your ${brand.productName} password`, {
    intro: `Someone asked to reset the ${brand.productName} password of ${email}. Enter this code to choose a new one:`,
    code,
    validity: `The code is valid for ${validMinutes} minutes and works once.`,
    url: link(brand, '/reset-password', { email, code }),
    outro: 'If it was not you, ignore this mail: your password stays as it is.',
  })
}

/** `arena mail test`: a mail whose only point is to arrive, so an operator can check the SMTP settings. */
export function testMail(brand: MailBranding, sentAt: Date): ComposedMail {
  const intro = `This is a test mail from ${brand.productName}, queued at ${sentAt.toISOString()} by \`arena mail test\`.`
  const outro = 'If you can read it, the server can send mail: verification and reset codes will arrive the same way.'
  return {
    kind: 'test',
    subject: `${brand.productName} test mail`,
    text: [intro, '', outro, ''].join('\n'),
    html: ['<!doctype html>', '<html><body style="font-family: sans-serif; line-height: 1.5">', `<p>${escapeHtml(intro)}</p>`, `<p>${escapeHtml(outro)}</p>`, '</body></html>', ''].join('\n'),
  }
}
