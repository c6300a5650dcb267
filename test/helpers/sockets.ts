// Event-plane WebSockets in tests (contract §14): a test app served on a real
// port, tickets, a client that keeps every frame, and a raw client that can
// stop reading (a slow consumer), all over real sockets.
import { expect } from 'bun:test'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { listen } from '../../src/server'
import { createLogger } from '../../src/shared/logger'
import type { TestApp } from './app'
import { bearer } from './auth'
import { postJson, type Handler } from './app'
import type { PlaneEvent } from '../../src/modules/events/model'

export type Frame =
  | { type: 'events'; events: PlaneEvent[]; cursor: string }
  | { type: 'ping' }
  | { type: 'error'; error: { code: string; message: string } }

/** Serves a test app on a loopback port (a free one unless `port`: another app's, after it stopped) until `stop`. */
export function serve(ctx: TestApp, options: { port?: number } = {}): { url: string; wsUrl: string; port: number; stop(): Promise<void> } {
  const running = listen(ctx.app, {
    config: { ...ctx.config, host: '127.0.0.1', port: options.port ?? 0, shutdownGraceS: 2 },
    logger: createLogger('silent'),
    lifecycle: ctx.lifecycle,
    closeSockets: () => ctx.services.sockets.closeAll(),
    onStopped: () => {},
  })
  return { url: running.url, wsUrl: running.url.replace(/^http/, 'ws'), port: Number(new URL(running.url).port), stop: () => running.stop('test') }
}

/**
 * A reverse proxy on loopback that passes HTTP to `target` and drops the
 * WebSocket upgrade, as many corporate proxies do: the request reaches the
 * server without `Upgrade`, so the server answers 400 and the client's
 * socket never opens, while every plain call works.
 */
export function upgradeStrippingProxy(target: string): { url: string; wsUrl: string; upgradesRefused(): number; stop(): void } {
  let refused = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 45,
    async fetch(request) {
      const url = new URL(request.url)
      const headers = new Headers(request.headers)
      if (headers.get('upgrade')) refused++
      for (const name of ['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'host']) headers.delete(name)
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      const answer = await fetch(target + url.pathname + url.search, { method: request.method, headers, ...(body ? { body } : {}) })
      // fetch has decoded the body: its length and encoding are no longer the server's.
      const answerHeaders = new Headers(answer.headers)
      answerHeaders.delete('content-encoding')
      answerHeaders.delete('content-length')
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answerHeaders })
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  return { url, wsUrl: url.replace(/^http/, 'ws'), upgradesRefused: () => refused, stop: () => void server.stop(true) }
}

/** A ticket for the access token's session. */
export async function mintTicket(ctx: Handler, accessToken: string): Promise<string> {
  const res = await ctx.handle(postJson('/api/v1/events/socket-ticket', {}, bearer(accessToken)))
  expect(res.status).toBe(200)
  const body = (await res.json()) as { ticket: string; expiresIn: number }
  expect(body.expiresIn).toBe(30)
  return body.ticket
}

/** A WebSocket client that keeps every frame it got and how it closed. */
export class SocketClient {
  readonly frames: Frame[] = []
  closed: { code: number; reason: string } | undefined
  private readonly ws: WebSocket
  private readonly waiters = new Set<() => void>()
  readonly opened: Promise<void>
  readonly done: Promise<{ code: number; reason: string }>

  constructor(url: string) {
    this.ws = new WebSocket(url)
    this.opened = new Promise((resolve, reject) => {
      this.ws.addEventListener('open', () => resolve())
      this.ws.addEventListener('error', () => reject(new Error('socket failed to open')))
    })
    this.opened.catch(() => {})
    this.done = new Promise((resolve) => {
      this.ws.addEventListener('close', (event) => {
        this.closed = { code: event.code, reason: event.reason }
        resolve(this.closed)
        this.notify()
      })
    })
    this.ws.addEventListener('message', (event) => {
      this.frames.push(JSON.parse(String(event.data)) as Frame)
      this.notify()
    })
  }

  static async open(wsBase: string, ticket: string): Promise<SocketClient> {
    const client = new SocketClient(`${wsBase}/api/v1/events/socket?ticket=${encodeURIComponent(ticket)}`)
    await client.opened
    return client
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** A binary frame (the protocol has none: the server closes with 1008). */
  sendBinary(bytes: Uint8Array): void {
    this.ws.send(bytes)
  }

  subscribe(options: { after?: string; topics?: string[] } = {}): void {
    this.send({ type: 'subscribe', ...options })
  }

  close(): void {
    this.ws.close()
  }

  /** Every event delivered so far, in order. */
  get events(): PlaneEvent[] {
    return this.frames.flatMap((frame) => (frame.type === 'events' ? frame.events : []))
  }

  /** The error frames' codes, in order. */
  get errors(): string[] {
    return this.frames.flatMap((frame) => (frame.type === 'error' ? [frame.error.code] : []))
  }

  /** The cursor of the last events frame. */
  get cursor(): string | undefined {
    return this.frames.findLast((frame) => frame.type === 'events')?.cursor
  }

  /** Resolves once `check` holds (looked at after every frame and the close), or fails after `ms`. */
  async until(check: () => boolean, ms = 5000, what = 'the condition'): Promise<void> {
    if (check()) return
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(look)
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(0, 600)}; closed: ${JSON.stringify(this.closed)}`))
      }, ms)
      const look = () => {
        if (!check()) return
        clearTimeout(timer)
        this.waiters.delete(look)
        resolve()
      }
      this.waiters.add(look)
    })
  }

  /** Waits for `count` events in all. */
  untilEvents(count: number, ms = 5000): Promise<void> {
    return this.until(() => this.events.length >= count, ms, `${count} events (have ${this.events.length})`)
  }

  /** Waits for the close; its code. */
  async untilClosed(ms = 5000): Promise<number> {
    await this.until(() => this.closed !== undefined, ms, 'the close')
    return this.closed!.code
  }

  private notify(): void {
    for (const look of [...this.waiters]) look()
  }
}

/**
 * A WebSocket client written on a bare TCP socket, so that it can stop
 * reading (`pause`), as a phone in a tunnel does: the server's frames pile
 * up in the kernel's buffers, then in the server's.
 */
export class RawSocketClient {
  private buffer = Buffer.alloc(0)
  private upgraded = false
  private readonly frames: { opcode: number; payload: Buffer }[] = []
  private readonly socket: net.Socket
  readonly ready: Promise<void>
  private onData: (() => void) | undefined

  constructor(port: number, path: string) {
    this.socket = net.connect(port, '127.0.0.1')
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('error', reject)
      this.socket.once('connect', () => {
        const key = randomBytes(16).toString('base64')
        this.socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`)
      })
      this.onData = () => {
        if (this.upgraded) return
        const end = this.buffer.indexOf('\r\n\r\n')
        if (end === -1) return
        const head = this.buffer.subarray(0, end).toString()
        if (!head.startsWith('HTTP/1.1 101')) return reject(new Error(`no upgrade: ${head}`))
        this.buffer = this.buffer.subarray(end + 4)
        this.upgraded = true
        resolve()
      }
    })
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk])
      this.onData?.()
      if (this.upgraded) this.parse()
    })
  }

  /** Sends a text frame (masked, as a client must). */
  sendText(text: string): void {
    const payload = Buffer.from(text)
    const mask = randomBytes(4)
    const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff])
    const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!))
    this.socket.write(Buffer.concat([header, mask, masked]))
  }

  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  destroy(): void {
    this.socket.destroy()
  }

  /** Bytes of frames received so far. */
  get received(): number {
    return this.frames.reduce((sum, frame) => sum + frame.payload.length, 0)
  }

  /** The close frame's code, once one came. */
  closeCode(): number | undefined {
    const close = this.frames.find((frame) => frame.opcode === 0x8)
    return close && close.payload.length >= 2 ? close.payload.readUInt16BE(0) : undefined
  }

  /** The opcode of every frame received, in order (0x1 text, 0x8 close, 0x9 ping). */
  opcodes(): number[] {
    return this.frames.map((frame) => frame.opcode)
  }

  /** Text frames received, parsed. */
  texts(): Frame[] {
    return this.frames.filter((frame) => frame.opcode === 0x1).map((frame) => JSON.parse(frame.payload.toString()) as Frame)
  }

  private parse(): void {
    for (;;) {
      if (this.buffer.length < 2) return
      const opcode = this.buffer[0]! & 0x0f
      let length = this.buffer[1]! & 0x7f
      let offset = 2
      if (length === 126) {
        if (this.buffer.length < 4) return
        length = this.buffer.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (this.buffer.length < 10) return
        length = Number(this.buffer.readBigUInt64BE(2))
        offset = 10
      }
      if (this.buffer.length < offset + length) return
      this.frames.push({ opcode, payload: this.buffer.subarray(offset, offset + length) })
      this.buffer = this.buffer.subarray(offset + length)
    }
  }
}

/** A ticket minted for the access token, then a socket opened with it. */
export async function openSocket(ctx: Handler, wsUrl: string, accessToken: string): Promise<SocketClient> {
  return SocketClient.open(wsUrl, await mintTicket(ctx, accessToken))
}

/**
 * One request to `path` over a bare TCP socket, as a WebSocket upgrade unless
 * `upgrade` is false: its status, and when it was refused its JSON body (the
 * error envelope a browser's WebSocket never shows). A 101 is closed at once.
 */
export function attemptUpgrade(url: string, path: string, upgrade = true): Promise<{ status: number; body: any }> {
  const { port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    let buffer = Buffer.alloc(0)
    socket.once('error', reject)
    socket.once('connect', () => {
      const key = randomBytes(16).toString('base64')
      const headers = upgrade ? `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` : 'Connection: close\r\n'
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}\r\n`)
    })
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const end = buffer.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = buffer.subarray(0, end).toString()
      const status = Number(head.split(' ')[1])
      if (status === 101) {
        socket.destroy()
        return resolve({ status, body: undefined })
      }
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? NaN)
      const body = buffer.subarray(end + 4)
      if (!(body.length >= length)) return
      socket.destroy()
      resolve({ status, body: JSON.parse(body.subarray(0, length).toString()) })
    })
  })
}
