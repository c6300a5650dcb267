// A real SMTP server for the mail tests (smtp-server, on 127.0.0.1), with
// switches for the ways a real one fails: a 4xx or 5xx to the message, a
// login it refuses, not listening at all. What it accepted is kept, parsed
// just enough to read the headers and the text and HTML parts back.
import { createServer } from 'node:net'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'

export interface ReceivedMail {
  /** The envelope: MAIL FROM and RCPT TO. */
  envelopeFrom: string
  envelopeTo: string[]
  /** The user it logged in as, if it did. */
  user: string | undefined
  /** Whether the session was encrypted (implicit TLS or STARTTLS). */
  secure: boolean
  raw: string
  /** A header of the message (unfolded, encoded words decoded); undefined when absent. */
  header(name: string): string | undefined
  text: string
  html: string
}

/** What the server answers to the n-th message (from 1): accept (null) or refuse with this reply. */
export type Verdict = (n: number) => { code: number; message: string } | null

export interface SmtpOptions {
  /** Listen on this port (default: a free one). */
  port?: number
  verdict?: Verdict
  /** Require this login (AUTH PLAIN/LOGIN over the plain connection). */
  auth?: { user: string; pass: string }
  /** `tls`: implicit TLS (smtps://); `starttls`: offers STARTTLS; default neither. Self-signed certificate of smtp-server. */
  tls?: 'tls' | 'starttls'
  /** Refuse every MAIL FROM with this reply (a relay that will not take our sender). */
  refuseSender?: { code: number; message: string }
  /** Answer each message only after this long (a slow server). */
  delayMs?: number
  /** Never answer the n-th message (from 1): a server that hangs after the data. */
  stall?: (n: number) => boolean
}

export interface TestSmtp {
  port: number
  /** Accepted messages, oldest first. */
  received: ReceivedMail[]
  /** Messages offered (DATA completed), accepted or not. */
  offered: number
  /** Logins tried. */
  logins: { user: string; ok: boolean }[]
  close(): Promise<void>
}

/** A port nothing listens on (yet): bound for a moment, then released. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export async function startSmtp(options: SmtpOptions = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = []
  const logins: TestSmtp['logins'] = []
  let offered = 0
  const serverOptions: SMTPServerOptions = {
    logger: false,
    // close() cuts a stalled session after this long instead of waiting for it.
    closeTimeout: 200,
    secure: options.tls === 'tls',
    disabledCommands: options.tls === 'starttls' ? [] : ['STARTTLS'],
    authOptional: options.auth === undefined,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      const ok = options.auth !== undefined && auth.username === options.auth.user && auth.password === options.auth.pass
      logins.push({ user: auth.username ?? '', ok })
      if (!ok) return callback(new Error('Invalid username or password'))
      callback(null, { user: auth.username })
    },
    onMailFrom(_address, _session, callback) {
      if (!options.refuseSender) return callback()
      const error = new Error(options.refuseSender.message) as Error & { responseCode: number }
      error.responseCode = options.refuseSender.code
      callback(error)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', async () => {
        const n = ++offered
        if (options.stall?.(n)) return
        if (options.delayMs) await Bun.sleep(options.delayMs)
        const refusal = options.verdict?.(n) ?? null
        if (refusal) {
          const error = new Error(refusal.message) as Error & { responseCode: number }
          error.responseCode = refusal.code
          return callback(error)
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        received.push({
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
          raw,
          ...parseMessage(raw),
        })
        callback()
      })
    },
  }
  const server = new SMTPServer(serverOptions)
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const port = (server.server.address() as { port: number }).port
  return {
    port,
    received,
    get offered() {
      return offered
    },
    logins,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

// ---------------------------------------------------------------------------
// Just enough MIME to read nodemailer's output back: headers, a
// multipart/alternative of text and HTML, 7bit, quoted-printable or base64.

function splitHead(part: string): { headers: Map<string, string>; body: string } {
  const at = part.indexOf('\r\n\r\n')
  const head = at === -1 ? part : part.slice(0, at)
  const body = at === -1 ? '' : part.slice(at + 4)
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), decodeWords(line.slice(colon + 1).trim()))
  }
  return { headers, body }
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`). */
function decodeWords(value: string): string {
  return value.replace(/=\?[^?]+\?([QqBb])\?([^?]*)\?=\s*/g, (_, encoding: string, text: string) =>
    encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  )
}

function decodeQuotedPrintable(text: string): string {
  const bytes = text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return Buffer.from(bytes, 'latin1').toString('utf8')
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase()
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body)
  return body
}

function parseMessage(raw: string): Pick<ReceivedMail, 'header' | 'text' | 'html'> {
  const { headers, body } = splitHead(raw)
  const parts: { type: string; content: string }[] = []
  const type = headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (boundary === undefined) {
    parts.push({ type, content: decodeBody(headers, body) })
  } else {
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break
      const part = splitHead(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''))
      parts.push({ type: part.headers.get('content-type') ?? 'text/plain', content: decodeBody(part.headers, part.body) })
    }
  }
  const content = (kind: string) => (parts.find((p) => p.type.toLowerCase().startsWith(kind))?.content ?? '').replace(/\r\n/g, '\n')
  return { header: (name) => headers.get(name.toLowerCase()), text: content('text/plain'), html: content('text/html') }
}
