// The server ⇄ co-signer protocol. Requests are JSON POSTs authenticated by
// an HMAC-SHA256 over (timestamp, path, body) with the pair's shared secret;
// a request older than a minute, or with a wrong MAC, is refused. DKG round-2
// packages carry a share in the clear: run the pair over TLS or a private
// network (see docs/decisions.md).
import { constantTimeEqual } from '../../shared/crypto'

export const COSIGNER_PATHS = {
  dkgRound1: '/v1/dkg/round1',
  dkgRound2: '/v1/dkg/round2',
  dkgRound3: '/v1/dkg/round3',
  commit: '/v1/sign/commit',
  share: '/v1/sign/share',
  health: '/v1/health',
} as const

export const MAX_CLOCK_SKEW_MS = 60_000

function mac(secret: string, timestamp: string, path: string, body: string): string {
  return new Bun.CryptoHasher('sha256', secret).update(`${timestamp}\n${path}\n${body}`).digest('hex')
}

export function signRequest(secret: string, path: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(now)
  return { 'x-cosigner-timestamp': timestamp, 'x-cosigner-mac': mac(secret, timestamp, path, body) }
}

export function verifyRequest(secret: string, path: string, body: string, headers: Headers, now = Date.now()): boolean {
  const timestamp = headers.get('x-cosigner-timestamp') ?? ''
  const presented = headers.get('x-cosigner-mac') ?? ''
  if (!/^[0-9]{1,16}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_CLOCK_SKEW_MS) return false
  return constantTimeEqual(presented, mac(secret, timestamp, path, body))
}
