// Webhook signing secrets and signatures (Standard Webhooks v1, contract §18).
//
// A secret is `whsec_` and 32 random bytes in base64, the form the Standard
// Webhooks libraries take as it is. It is shown once, when created or
// rotated; the database holds it sealed (AES-256-GCM, src/shared/sealed.ts)
// under a key derived from the chain key, named after its endpoint so a
// sealed secret copied into another endpoint's row does not open.
//
// A signature is `v1,` and the base64 HMAC-SHA256, under the secret's bytes,
// of `<webhook-id>.<webhook-timestamp>.<body>`. Written here (not with the
// reference package) so the tests, which verify with `standardwebhooks`,
// check our signing against theirs.
import { createHmac } from 'node:crypto'
import { MasterKey } from '../../shared/sealed'

const PREFIX = 'whsec_'
const SECRET_BYTES = 32
const SEAL_LABEL = 'arena webhook secret seal v1'

export function newWebhookSecret(): string {
  return PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(SECRET_BYTES))).toString('base64')
}

/** The sealing key of webhook secrets, derived from the chain key. */
export function webhookSealKey(chainKey: string): MasterKey {
  return MasterKey.derivedFrom(chainKey, SEAL_LABEL)
}

/** The additional data of an endpoint's sealed secret: it opens only as this endpoint's. */
export function sealedSecretName(webhookId: string): string {
  return `webhook-secret:${webhookId}`
}

/** One `v1,<base64>` signature of a message under a `whsec_` secret. */
export function signWebhook(secret: string, messageId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64')
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`
}

/** The `webhook-signature` header: a signature per secret (the current one, then the previous one while its 24 h last), space-separated. */
export function signatureHeader(secrets: readonly string[], messageId: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signWebhook(secret, messageId, timestamp, body)).join(' ')
}
