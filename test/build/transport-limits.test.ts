// Contract §7, transport limits, on the compiled binary (the HTTP layer is
// Bun's own server there, not app.handle). Invariant: whatever the size of a
// body or a header, the answer is arena's envelope with an x-request-id,
// except past the HTTP layer's own header limit, where Bun answers before
// arena sees the request (pinned below, so a Bun change shows up here).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { MAX_BODY_BYTES, MAX_HEADER_BYTES, TRANSPORT_HEADER_BYTES } from '../../src/plugins/json-body'
import { tempDir, testDatabaseEnv } from '../helpers/app'
import { BINARY, buildBinary, startServe, type ServerProcess } from '../helpers/process'

let server: ServerProcess
beforeAll(async () => {
  await buildBinary()
  // staging: no operator token, so the /api/v1/admin tree is the disabled one.
  server = await startServe([BINARY, 'serve'], { ARENA_DATA_DIR: tempDir('arena-limits-'), ARENA_ENV: 'staging', ...(await testDatabaseEnv()) })
}, 180_000)
afterAll(() => server?.proc.kill('SIGKILL'))

const json = { 'content-type': 'application/json' }

async function expectEnvelope(res: Response, status: number, code: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('x-request-id')).toMatch(/^req_/)
  expect(((await res.json()) as { error: { code: string; status: number } }).error).toMatchObject({ code, status })
}

/** Sends raw bytes and returns the status line and what followed, for requests fetch will not make. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(request))
    let answer = ''
    socket.on('data', (chunk) => {
      answer += chunk.toString()
      if (/\r\n\r\n/.test(answer) && /content-length: (\d+)/i.test(answer)) {
        const length = Number(/content-length: (\d+)/i.exec(answer)![1])
        if (answer.length - answer.indexOf('\r\n\r\n') - 4 >= length) socket.destroy()
      }
    })
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
    setTimeout(() => socket.destroy(), 5000)
  })
}

/** Streams `mib` MiB without a length (chunked); returns the answer and how many MiB the server let through. */
async function stream(method: string, path: string, contentType: string, mib: number) {
  const chunk = new Uint8Array(1024 * 1024).fill(0x20)
  let pulled = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= mib) return controller.close()
      pulled++
      controller.enqueue(chunk)
    },
  })
  const res = await fetch(`${server.url}${path}`, { method, headers: { 'content-type': contentType }, body, duplex: 'half' } as RequestInit)
  return { res, pulled }
}

describe('bodies over 64 KiB: 413 envelope', () => {
  test('2 MiB with its Content-Length', async () => {
    const res = await fetch(`${server.url}/api/v1/user/register`, { method: 'POST', headers: json, body: Buffer.alloc(2 * 1024 * 1024, 0x20) })
    await expectEnvelope(res, 413, 'payload_too_large')
  })

  test('2 MiB streamed without a length (chunked): counted while read', async () => {
    const { res } = await stream('POST', '/api/v1/user/register', 'application/json', 2)
    await expectEnvelope(res, 413, 'payload_too_large')
  })

  test('a declared length of 100 TB is refused from the header alone, before any body is read', async () => {
    const answer = await raw(`POST /api/v1/user/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999999\r\n\r\n{}`)
    expect(answer).toStartWith('HTTP/1.1 413')
    expect(answer).toMatch(/x-request-id: req_/i)
    expect(answer).toContain('"code":"payload_too_large"')
  })

  test('exactly 64 KiB is read (and judged on its content)', async () => {
    const res = await fetch(`${server.url}/api/v1/user/register`, { method: 'POST', headers: json, body: Buffer.alloc(MAX_BODY_BYTES, 0x20) })
    await expectEnvelope(res, 400, 'malformed_json')
  })
})

describe('bodies nobody asked for are never read', () => {
  /**
   * Sends the head and 1 MiB of a chunked body that never ends, and returns the
   * answer. A server that read the body would wait for its end and never answer;
   * so an answer at all proves it was given without reading the body. (Counting
   * what fetch pulled from a stream was a flaky proxy: fetch may buffer the whole
   * stream before the server has read a byte.)
   */
  function endlessBody(method: string, path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n`)
        socket.write(`100000\r\n${' '.repeat(1024 * 1024)}\r\n`)
      })
      let answer = ''
      const done = () => {
        socket.destroy()
        resolve(answer)
      }
      socket.on('data', (chunk) => {
        answer += chunk.toString()
        const head = answer.indexOf('\r\n\r\n')
        const length = /content-length: (\d+)/i.exec(answer)
        if (head >= 0 && length && answer.length - head - 4 >= Number(length[1])) done()
      })
      socket.on('close', () => resolve(answer))
      socket.on('error', reject)
      setTimeout(done, 5000)
    })
  }

  test('OPTIONS and DELETE with a body that never ends, on the disabled operator tree and elsewhere: answered without reading it', async () => {
    for (const [method, path, status, code] of [
      ['OPTIONS', '/api/v1/admin/games', 404, 'operator_api_disabled'],
      ['DELETE', '/api/v1/admin', 404, 'operator_api_disabled'],
      ['OPTIONS', '/api/v1/me', 404, 'not_found'],
    ] as const) {
      const answer = await endlessBody(method, path)
      expect(answer).toStartWith(`HTTP/1.1 ${status}`)
      expect(answer).toMatch(/x-request-id: req_/i)
      expect(answer).toContain(`"code":"${code}"`)
    }
  })
})

describe('headers', () => {
  const withHeader = (bytes: number) => fetch(`${server.url}/healthz`, { headers: { 'x-padding': 'a'.repeat(bytes) } })

  test('below 16 KiB in all: served', async () => {
    expect((await withHeader(MAX_HEADER_BYTES - 1024)).status).toBe(200)
  })

  test('over 16 KiB: 431 envelope from arena', async () => {
    await expectEnvelope(await withHeader(MAX_HEADER_BYTES + 1024), 431, 'request_header_fields_too_large')
    await expectEnvelope(await withHeader(TRANSPORT_HEADER_BYTES - 4096), 431, 'request_header_fields_too_large')
  })

  test("past Bun's own limit (64 KiB): Bun's bare 431, arena never sees the request", async () => {
    const res = await withHeader(TRANSPORT_HEADER_BYTES + 1024)
    expect(res.status).toBe(431)
    expect(res.headers.get('x-request-id')).toBeNull()
    expect(await res.text()).toBe('')
    // The server is unharmed.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
  })
})
