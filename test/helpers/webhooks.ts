// Webhook endpoints for the delivery tests, written as the operators' API
// writes them (one row, its types, the secret sealed under the key derived
// from the chain key), and a rotation as rotate-secret does it: the tests of
// the loop need endpoints, not the admin routes.
import type { Storage } from '../../src/db/storage'
import type { Clock } from '../../src/shared/clock'
import { newId } from '../../src/shared/ids'
import { newWebhookSecret, sealedSecretName, webhookSealKey } from '../../src/modules/webhooks/secret'
import { WEBHOOK_TYPES } from '../../src/modules/webhooks/catalogue'

/** A test app, or a server's database, clock and secrets. */
export interface Where {
  storage: Storage
  clock: Clock
  secrets: { chainKey: string }
}

/** Creates an enabled endpoint at `url` subscribed to `types` (every type by default); its id and its secret in the clear. */
export async function createEndpoint(ctx: Where, url: string, types: readonly string[] = WEBHOOK_TYPES): Promise<{ id: string; secret: string }> {
  const id = newId('webhook')
  const secret = newWebhookSecret()
  const secretSealed = await webhookSealKey(ctx.secrets.chainKey).seal(secret, sealedSecretName(id))
  const now = ctx.clock.now()
  await ctx.storage.write((tx) =>
    tx.webhooks.insert({ id, url, description: null, enabled: true, disabledReason: null, secretSealed, previousSecretSealed: null, previousExpiresAt: null, createdAt: now, updatedAt: now }, types),
  )
  return { id, secret }
}

/** Rotates an endpoint's secret as rotate-secret does: a new one, the current one kept as previous for 24 h; the new secret. */
export async function rotateEndpointSecret(ctx: Where, id: string): Promise<string> {
  const secret = newWebhookSecret()
  const secretSealed = await webhookSealKey(ctx.secrets.chainKey).seal(secret, sealedSecretName(id))
  const now = ctx.clock.now()
  await ctx.storage.write(async (tx) => {
    const current = await tx.webhooks.get(id)
    await tx.webhooks.update(id, { secretSealed, previousSecretSealed: current!.secretSealed, previousExpiresAt: new Date(now.getTime() + 86_400_000), updatedAt: now })
  })
  return secret
}

/** Deletes every endpoint (their deliveries and attempts go with them): a test leaves no queue behind. */
export async function deleteEndpoints(ctx: Pick<Where, 'storage'>): Promise<void> {
  await ctx.storage.write(async (tx) => {
    for (const webhook of await tx.webhooks.list()) await tx.webhooks.delete(webhook.id)
  })
}

/**
 * A self-signed certificate for `hooks.example` (valid until 2126) and its
 * key, test material only: a TLS endpoint on loopback that a client reaches by
 * address while checking the certificate against the endpoint's name.
 */
export const HOOKS_EXAMPLE_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgL+19pzLR30cSNG85
FGTNYXT6OS1IkDviQDq7Wt8wmY6hRANCAATje636P0Apc38eeRwGhdrOdtZK3sN9
9cYP8jEQLt7okkPqJtnqsm/yc5bEIRezo5y/jQxBiFDMpmMHlO+x6433
-----END PRIVATE KEY-----
`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBoTCCAUegAwIBAgIUPNVvJPt1e2AmUTJCUfHVpCqV978wCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNaG9va3MuZXhhbXBsZTAgFw0yNjExMjgxMzE4MjZaGA8yMTI2
MTEwNDEzMTgyNlowGDEWMBQGA1UEAwwNaG9va3MuZXhhbXBsZTBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABON7rfo/QClzfx55HAaF2s521krew331xg/yMRAu3uiS
Q+om2eqyb/JzlsQhF7OjnL+NDEGIUMymYweU77HrjfejbTBrMB0GA1UdDgQWBBTG
NrCFI/1Q51Mj7ADGNgTeAAFC4DAfBgNVHSMEGDAWgBTGNrCFI/1Q51Mj7ADGNgTe
AAFC4DAPBgNVHRMBAf8EBTADAQH/MBgGA1UdEQQRMA+CDWhvb2tzLmV4YW1wbGUw
CgYIKoZIzj0EAwIDSAAwRQIgOTC9zL1DY9OGyCj0DlSpwQncZYK3pcJXY5W4ZQGh
HlkCIQDJBtP80VAe95IpJwmrOW1nwLfKREhcq2yRTVboGt5tOg==
-----END CERTIFICATE-----
`,
}
