// /console/webhooks (admin): the studio's webhook endpoints (contract §18).
// The list with a form to add one; the secret of a new endpoint is on the
// page that answers that form, once (never in a redirect's URL; the page is
// not cached). /console/webhooks/{id}: one endpoint, its URL, types and
// description to change, enable or disable it, rotate its secret (the new one
// shown once on the answering page; the old one keeps signing 24 h), delete
// it (after a confirmation page), and its recent deliveries with their
// attempts, each with a button to send it again. The same WebhooksService
// methods the admin API calls, audited as `console`.
import { t } from 'elysia'
import type { Services } from '../../services'
import type { Webhook, WebhookDelivery } from '../../modules/webhooks/model'
import { WEBHOOK_DESCRIPTION_MAX, WEBHOOK_URL_MAX } from '../../modules/webhooks/model'
import { WEBHOOK_TYPES } from '../../modules/webhooks/catalogue'
import { PREVIOUS_SECRET_TTL_MS } from '../../modules/webhooks/service'
import { Csrf } from '../layout'
import { redirect } from '../http'
import { attempt as attemptBack, consolePage, NOTICE_FIELDS, Pager, queryOf } from '../page'
import { ConfirmButton, confirmPage } from '../confirm'
import { consoleRoute, consoleSession } from '../session'
import { actorOf, attempt, errorText, IdParams, opsPage, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/webhooks'
const endpointPath = (id: string) => `${SECTION}/${encodeURIComponent(id)}`
/** Deliveries an endpoint's page shows at a time. */
const DELIVERIES_SHOWN = 20

const CsrfField = { _csrf: t.String({ maxLength: 128 }) }
/** One checkbox a type (a form keeps the last of a repeated name): `type:<name>`. */
const typeField = (type: string) => `type:${type}`
const TypeFields = Object.fromEntries(WEBHOOK_TYPES.map((type) => [typeField(type), t.Optional(t.String({ maxLength: 8 }))]))
const EndpointFields = {
  ...CsrfField,
  url: t.String({ maxLength: WEBHOOK_URL_MAX + 1 }),
  description: t.Optional(t.String({ maxLength: WEBHOOK_DESCRIPTION_MAX + 1 })),
  ...TypeFields,
}
const EndpointQuery = t.Object({ ...NOTICE_FIELDS, before: t.Optional(t.String({ maxLength: 64 })) })
type EndpointQuery = typeof EndpointQuery.static

/** The types ticked in a form. */
function typesOf(body: Record<string, unknown>): (typeof WEBHOOK_TYPES)[number][] {
  return WEBHOOK_TYPES.filter((type) => body[typeField(type)] !== undefined)
}

/** The secret, shown once, with what to do with it. */
function FreshSecret({ webhook, secret, rotated }: { webhook: Webhook; secret: string; rotated: boolean }) {
  return (
    <section aria-labelledby="fresh-secret" class="fresh-key">
      <h2 id="fresh-secret">{`The signing secret of ${webhook.url}`}</h2>
      <p>
        Copy it now into the receiving backend's configuration: it is shown this once and cannot be shown again.
        {rotated && ` The previous secret keeps signing beside it for ${PREVIOUS_SECRET_TTL_MS / 3600_000} hours, until ${webhook.previousSecretExpiresAt ?? ''}.`}
      </p>
      <p class="secret">
        <code class="mono" id="webhook-secret">
          {secret}
        </code>
      </p>
    </section>
  )
}

function status(webhook: Webhook): string {
  if (webhook.enabled) return 'enabled'
  return webhook.disabledReason === 'gone' ? 'disabled: it answered 410 Gone' : 'disabled by an operator'
}

/** The URL, the types and the description: to add an endpoint, or change one. */
function EndpointForm({ csrf, action, webhook, submit, label }: { csrf: string; action: string; webhook: Webhook | null; submit: string; label: string }) {
  return (
    <form method="post" action={action} class="stack" aria-label={label}>
      <Csrf token={csrf} />
      <label>
        URL (http or https)
        <input name="url" type="url" required maxlength={WEBHOOK_URL_MAX} value={webhook?.url ?? ''} class="mono" />
      </label>
      <fieldset>
        <legend>Types sent to it</legend>
        {WEBHOOK_TYPES.map((type) => (
          <label>
            <input type="checkbox" name={typeField(type)} value="on" checked={webhook?.types.includes(type) ?? false} /> <span class="mono">{type}</span>
          </label>
        ))}
      </fieldset>
      <label>
        Description (optional)
        <input name="description" maxlength={WEBHOOK_DESCRIPTION_MAX} value={webhook?.description ?? ''} />
      </label>
      <button type="submit">{submit}</button>
    </form>
  )
}

function WebhooksTable({ webhooks }: { webhooks: Webhook[] }) {
  if (webhooks.length === 0) return <p>No webhook endpoint yet.</p>
  return (
    <table aria-label="Webhook endpoints">
      <caption class="muted">Oldest first.</caption>
      <thead>
        <tr>
          <th scope="col">URL</th>
          <th scope="col">Types</th>
          <th scope="col">Status</th>
          <th scope="col">Description</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {webhooks.map((w) => (
          <tr>
            <th scope="row">
              <a href={endpointPath(w.id)} class="mono">
                {w.url}
              </a>
            </th>
            <td class="mono">{w.types.join(', ')}</td>
            <td>{status(w)}</td>
            <td>{w.description ?? ''}</td>
            <td>
              <When at={w.createdAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">none yet</span>
  return (
    <ol class="plain">
      {delivery.attempts.map((a) => (
        <li>
          {`#${a.attempt} `}
          <When at={a.at} />
          {` ${a.error ?? 'delivered'}${a.statusCode === null ? '' : ` (HTTP ${a.statusCode})`}, ${a.durationMs} ms`}
        </li>
      ))}
    </ol>
  )
}

function DeliveriesTable({ deliveries, csrf, enabled }: { deliveries: WebhookDelivery[]; csrf: string; enabled: boolean }) {
  if (deliveries.length === 0) return <p>No delivery.</p>
  return (
    <table aria-label="Deliveries">
      <caption class="muted">{enabled ? 'Newest first. Sending one again keeps its webhook-id: the receiver may de-duplicate on it.' : 'Newest first. Enable the endpoint to send a delivery again.'}</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Status</th>
          <th scope="col">Created</th>
          <th scope="col">Next attempt</th>
          <th scope="col">Attempts</th>
          <th scope="col">webhook-id</th>
          {enabled && <th scope="col">Send again</th>}
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr>
            <th scope="row" class="mono">
              {d.type}
            </th>
            <td>{d.status}</td>
            <td>
              <When at={d.createdAt} />
            </td>
            <td>
              <When at={d.nextAttemptAt} />
            </td>
            <td>
              <Attempts delivery={d} />
            </td>
            <td class="mono">{d.messageId}</td>
            {enabled && (
              <td>
                <form method="post" action={`/console/webhook-deliveries/${encodeURIComponent(d.id)}/resend`} class="inline" aria-label={`Send ${d.id} again`}>
                  <Csrf token={csrf} />
                  <button type="submit" class="secondary">
                    Send again
                  </button>
                </form>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function webhookPages(services: Services) {
  const { webhooks } = services

  const listPage = async (request: Request, options: { notice?: string | null; error?: string; status?: number; fresh?: { webhook: Webhook; secret: string } }) =>
    opsPage(request, {
      title: 'Webhooks',
      section: SECTION,
      notice: options.notice,
      error: options.error,
      status: options.status,
      children: (
        <>
          {options.fresh && <FreshSecret {...options.fresh} rotated={false} />}
          <p class="muted">
            Signed HTTP requests (Standard Webhooks v1) sent to the studio's own backend when something happens on the platform: see docs/webhooks.md for each type's body and how to verify a
            signature.
          </p>
          <WebhooksTable webhooks={await webhooks.list()} />
          <h2 id="new-webhook">New endpoint</h2>
          <EndpointForm csrf={consoleSession(request).csrf} action={SECTION} webhook={null} submit="Add the endpoint" label="Add a webhook endpoint" />
        </>
      ),
    })

  const endpointPage = async (request: Request, id: string, options: { query: EndpointQuery; fresh?: string }) => {
    const webhook = await webhooks.get(id)
    const before = options.query.before
    const page = await webhooks.deliveries(id, { limit: DELIVERIES_SHOWN, before })
    const csrf = consoleSession(request).csrf
    const here = endpointPath(id)
    return consolePage(
      request,
      { title: `Webhook ${webhook.url}`, section: SECTION, query: options.query },
      <>
        {options.fresh !== undefined && <FreshSecret webhook={webhook} secret={options.fresh} rotated={true} />}
        <dl class="facts">
          <dt>Id</dt>
          <dd class="mono">{webhook.id}</dd>
          <dt>Status</dt>
          <dd>{status(webhook)}</dd>
          <dt>Types</dt>
          <dd class="mono">{webhook.types.join(', ')}</dd>
          <dt>Description</dt>
          <dd>{webhook.description ?? '—'}</dd>
          <dt>Previous secret signs until</dt>
          <dd>
            <When at={webhook.previousSecretExpiresAt} />
          </dd>
          <dt>Created</dt>
          <dd>
            <When at={webhook.createdAt} />
          </dd>
        </dl>
        <div class="actions tight">
          <form method="post" action={`${here}/enabled`} class="inline" aria-label={webhook.enabled ? 'Disable the endpoint' : 'Enable the endpoint'}>
            <Csrf token={csrf} />
            <input type="hidden" name="enabled" value={webhook.enabled ? 'false' : 'true'} />
            <button type="submit" class="secondary">
              {webhook.enabled ? 'Disable' : 'Enable'}
            </button>
          </form>
          <ConfirmButton href={`${here}/rotate-secret`} label="Rotate the secret" kind="secondary" />
          <ConfirmButton href={`${here}/delete`} label="Delete" ariaLabel={`Delete the endpoint ${webhook.url}`} />
        </div>
        <h2 id="change">Change</h2>
        <EndpointForm csrf={csrf} action={here} webhook={webhook} submit="Save" label="Change the endpoint" />
        <h2 id="deliveries">Recent deliveries</h2>
        <DeliveriesTable deliveries={page.deliveries} csrf={csrf} enabled={webhook.enabled} />
        <Pager next={page.next === null ? null : `${here}${queryOf({ before: page.next })}#deliveries`} first={before ? `${here}#deliveries` : null} />
      </>,
    )
  }

  return (app: ConsoleApp) =>
    app
      .get('/webhooks', ({ request, query }) => listPage(request, { notice: query.notice }), { query: t.Object({ notice: t.Optional(t.String({ maxLength: 200 })) }), ...consoleRoute('admin') })
      .post(
        '/webhooks',
        ({ request, body }) =>
          attempt(
            async () => {
              const fresh = await webhooks.create({ url: body.url.trim(), types: typesOf(body), description: body.description }, actorOf(request))
              return listPage(request, { notice: 'webhook_created', status: 201, fresh })
            },
            (error) => listPage(request, { error: errorText(error), status: error.status }),
          ),
        { body: t.Object(EndpointFields), ...consoleRoute('admin') },
      )
      .get('/webhooks/:id', ({ request, params, query }) => endpointPage(request, params.id, { query }), { params: IdParams, query: EndpointQuery, ...consoleRoute('admin') })
      .post(
        '/webhooks/:id',
        ({ request, params, body }) =>
          attemptBack(request, endpointPath(params.id), async () => {
            await webhooks.update(params.id, { url: body.url.trim(), types: typesOf(body), description: body.description ?? null }, actorOf(request))
            return redirect(endpointPath(params.id), 'webhook_saved')
          }),
        { params: IdParams, body: t.Object(EndpointFields), ...consoleRoute('admin') },
      )
      .post(
        '/webhooks/:id/enabled',
        ({ request, params, body }) =>
          attemptBack(request, endpointPath(params.id), async () => {
            const enabled = body.enabled === 'true'
            await webhooks.update(params.id, { enabled }, actorOf(request))
            return redirect(endpointPath(params.id), enabled ? 'webhook_enabled' : 'webhook_disabled')
          }),
        { params: IdParams, body: t.Object({ ...CsrfField, enabled: t.Union([t.Literal('true'), t.Literal('false')]) }), ...consoleRoute('admin') },
      )
      // The confirmation steps: what rotating and deleting do. They change nothing.
      .get(
        '/webhooks/:id/rotate-secret',
        async ({ request, params }) => {
          const webhook = await webhooks.get(params.id)
          return confirmPage(request, {
            title: `Rotate the secret of ${webhook.url}?`,
            section: SECTION,
            consequences: [
              'A new signing secret is made and shown once, on the next page: copy it into the receiving backend before leaving that page.',
              `The current secret keeps signing beside the new one for ${PREVIOUS_SECRET_TTL_MS / 3600_000} hours (two signatures on every delivery), then stops; a secret from an earlier rotation stops at once.`,
            ],
            action: `${endpointPath(webhook.id)}/rotate-secret`,
            submit: 'Rotate the secret',
            back: endpointPath(webhook.id),
          })
        },
        { params: IdParams, ...consoleRoute('admin') },
      )
      .post(
        '/webhooks/:id/rotate-secret',
        ({ request, params }) =>
          attemptBack(request, endpointPath(params.id), async () => {
            const { secret } = await webhooks.rotateSecret(params.id, actorOf(request))
            return endpointPage(request, params.id, { query: { notice: 'webhook_secret_rotated' }, fresh: secret })
          }),
        { params: IdParams, body: t.Object(CsrfField), ...consoleRoute('admin') },
      )
      .get(
        '/webhooks/:id/delete',
        async ({ request, params }) => {
          const webhook = await webhooks.get(params.id)
          return confirmPage(request, {
            title: `Delete the webhook endpoint ${webhook.url}?`,
            section: SECTION,
            consequences: [
              'Nothing more is sent to it, from now on: deliveries waiting for it are dropped.',
              'Its deliveries and their attempts are deleted with it; its secret is forgotten. Adding it again makes a new secret.',
            ],
            action: `${endpointPath(webhook.id)}/delete`,
            submit: 'Delete the endpoint',
            back: endpointPath(webhook.id),
          })
        },
        { params: IdParams, ...consoleRoute('admin') },
      )
      .post(
        '/webhooks/:id/delete',
        ({ request, params }) =>
          attemptBack(request, endpointPath(params.id), async () => {
            await webhooks.delete(params.id, actorOf(request))
            return redirect(SECTION, 'webhook_deleted')
          }),
        { params: IdParams, body: t.Object(CsrfField), ...consoleRoute('admin') },
      )
      .post(
        '/webhook-deliveries/:id/resend',
        ({ request, params }) =>
          // Back to its endpoint's page; an unknown delivery, to the list.
          attemptBack(request, SECTION, async () => {
            const back = `${endpointPath((await webhooks.delivery(params.id)).webhookId)}#deliveries`
            return attemptBack(request, back, async () => {
              await webhooks.resend(params.id, actorOf(request))
              return redirect(back, 'webhook_delivery_resent')
            })
          }),
        { params: IdParams, body: t.Object(CsrfField), ...consoleRoute('admin') },
      )
}
