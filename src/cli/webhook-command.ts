// `arena webhook`: the studio's webhook endpoints (contract §18) from the
// command line: add one (its signing secret printed once), list, update,
// delete, rotate its secret (printed once), list an endpoint's deliveries with
// their attempts, send a delivery again. The same WebhooksService methods the
// admin routes call (audited as the CLI's operator); what the API refuses is
// refused here, a field named by its flag. `--json` prints what the routes
// answer.
import type { Command, Io } from './command'
import { UsageError } from './command'
import { AppError, type ErrorCode } from '../shared/errors'
import type { Services } from '../services'
import { cliActor } from './actor'
import type { Webhook, WebhookDelivery } from '../modules/webhooks/model'
import type { WebhookChange } from '../modules/webhooks/service'

const FLAGS: Record<string, string> = { 'body/url': '--url', 'body/types': '--types', 'body/description': '--description' }

/** The service names the body's fields; the command line names its flags. */
function byFlag(error: unknown): unknown {
  if (!(error instanceof AppError) || !error.details) return error
  const details = error.details.map((d) => ({ ...d, path: FLAGS[d.path] ?? d.path }))
  return new AppError(error.code as ErrorCode, error.message, { details, status: error.status })
}

/** `a,b` → ['a', 'b']: the types of --types, blanks dropped. */
function typesOf(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : text.split(',').map((type) => type.trim()).filter((type) => type !== '')
}

/** One line an endpoint: status, id, URL, types, description. */
function webhookLine(w: Webhook): string {
  const status = w.enabled ? 'enabled' : `disabled (${w.disabledReason ?? 'operator'})`
  return [status.padEnd(19), w.id, w.url, w.types.join(','), w.description === null ? '' : JSON.stringify(w.description)].join('  ').trimEnd()
}

/** A delivery and, indented, its attempts. */
function deliveryLines(d: WebhookDelivery): string {
  const head = [d.status.padEnd(9), d.id, d.type, `created ${d.createdAt}`, d.status === 'pending' ? `next ${d.nextAttemptAt}` : d.status === 'delivered' ? `delivered ${d.deliveredAt}` : `last error ${d.lastError ?? '-'}`, d.messageId].join('  ')
  const attempts = d.attempts.map((a) => `  #${a.attempt}  ${a.at}  ${a.error ?? 'delivered'}  ${a.statusCode === null ? '-' : `HTTP ${a.statusCode}`}  ${a.durationMs} ms`)
  return [head, ...attempts].join('\n')
}

const SECRET_ADVICE = 'copy the secret now into the receiving backend: it is not shown again'

export function webhookCommand(withServices: <T>(fn: (services: Services) => Promise<T> | T) => Promise<T>): Command {
  const print = (io: Io, json: boolean, value: unknown, text: () => string) => {
    io.out(json ? JSON.stringify(value) : text())
    return 0
  }
  const acting = <T>(fn: (services: Services) => Promise<T>) =>
    withServices(async (services) => {
      try {
        return await fn(services)
      } catch (error) {
        throw byFlag(error)
      }
    })
  return {
    summary: "Add, list, change, delete or rotate the secret of webhook endpoints; list an endpoint's deliveries, send one again",
    usage:
      'arena webhook add --url <url> --types <type,type…> [--description <text>] [--json]\n' +
      '       arena webhook list [--json]\n' +
      '       arena webhook update <webhookId> [--url <url>] [--types <type,type…>] [--description <text>] [--enable | --disable] [--json]\n' +
      '       arena webhook delete <webhookId> [--json]\n' +
      '       arena webhook rotate-secret <webhookId> [--json]\n' +
      '       arena webhook deliveries <webhookId> [--limit <1-100>] [--before <deliveryId>] [--json]\n' +
      '       arena webhook resend <deliveryId> [--json]',
    options: {
      url: { type: 'string' },
      types: { type: 'string' },
      description: { type: 'string' },
      enable: { type: 'boolean' },
      disable: { type: 'boolean' },
      limit: { type: 'string' },
      before: { type: 'string' },
      json: { type: 'boolean' },
    },
    positionals: true,
    async run({ values, positionals }, io) {
      const [action, id, ...rest] = positionals
      const json = values.json === true
      if (rest.length > 0) throw new UsageError(`unexpected "${rest.join(' ')}"`)
      const url = values.url as string | undefined
      const types = typesOf(values.types as string | undefined)
      const description = values.description as string | undefined
      const fields = action === 'add' || action === 'update'
      if (!fields && (url !== undefined || types !== undefined || description !== undefined)) throw new UsageError('--url, --types and --description are for add and update')
      if (action !== 'update' && (values.enable === true || values.disable === true)) throw new UsageError('--enable and --disable are for update')
      if (action !== 'deliveries' && (values.limit !== undefined || values.before !== undefined)) throw new UsageError('--limit and --before are for deliveries')

      if (action === 'add') {
        if (id !== undefined) throw new UsageError(`unexpected "${id}"`)
        if (url === undefined) throw new UsageError('missing --url')
        if (types === undefined) throw new UsageError('missing --types')
        const created = await acting((services) => services.webhooks.create({ url, types, description }, cliActor(services)))
        return print(io, json, created, () => `webhook ${created.webhook.id} added\n${webhookLine(created.webhook)}\nsecret: ${created.secret}\n${SECRET_ADVICE}`)
      }
      if (action === 'list') {
        if (id !== undefined) throw new UsageError(`unexpected "${id}"`)
        const webhooks = await withServices((services) => services.webhooks.list())
        return print(io, json, { webhooks }, () => (webhooks.length === 0 ? '(no webhook endpoint)' : webhooks.map(webhookLine).join('\n')))
      }
      if (!id) throw new UsageError(action === 'resend' ? 'missing <deliveryId>' : 'missing <webhookId>')
      if (action === 'update') {
        if (values.enable === true && values.disable === true) throw new UsageError('--enable or --disable, not both')
        const change: WebhookChange = {
          ...(url === undefined ? {} : { url }),
          ...(types === undefined ? {} : { types }),
          ...(description === undefined ? {} : { description }),
          ...(values.enable === true ? { enabled: true } : values.disable === true ? { enabled: false } : {}),
        }
        if (Object.keys(change).length === 0) throw new UsageError('nothing to update: give --url, --types, --description, --enable or --disable')
        const webhook = await acting((services) => services.webhooks.update(id, change, cliActor(services)))
        return print(io, json, { webhook }, () => `webhook ${webhook.id} updated\n${webhookLine(webhook)}`)
      }
      if (action === 'delete') {
        await withServices((services) => services.webhooks.delete(id, cliActor(services)))
        return print(io, json, { deleted: id }, () => `webhook ${id} deleted with its deliveries`)
      }
      if (action === 'rotate-secret') {
        const rotated = await withServices((services) => services.webhooks.rotateSecret(id, cliActor(services)))
        return print(io, json, rotated, () => `webhook ${id} has a new secret; the old one signs beside it until ${rotated.webhook.previousSecretExpiresAt}\nsecret: ${rotated.secret}\n${SECRET_ADVICE}`)
      }
      if (action === 'deliveries') {
        const limitText = values.limit as string | undefined
        const limit = limitText === undefined ? undefined : Number(limitText)
        if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) throw new UsageError('--limit is a whole number from 1 to 100')
        const page = await withServices((services) => services.webhooks.deliveries(id, { limit, before: values.before as string | undefined }))
        return print(io, json, page, () =>
          [page.deliveries.length === 0 ? '(no delivery)' : page.deliveries.map(deliveryLines).join('\n'), ...(page.next === null ? [] : [`older: --before ${page.next}`])].join('\n'),
        )
      }
      if (action === 'resend') {
        const delivery = await withServices((services) => services.webhooks.resend(id, cliActor(services)))
        return print(io, json, { delivery }, () => `delivery ${delivery.id} queued again (webhook-id ${delivery.messageId})`)
      }
      throw new UsageError(`unknown action "${action ?? ''}"`)
    },
  }
}
