// The SDK's WebhookCatalogue (packages/sdk/src/webhooks.ts) mirrors the
// server's webhook catalogue (src/modules/webhooks/catalogue.ts) entry for
// entry. This is the runtime half of that check, for `bun test` alone: it
// reads both declarations with the TypeScript parser and compares types, data
// fields, optionality and literal values. webhook-types.check.ts is the exact,
// compile-time half that `tsc --noEmit` runs.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { WebhookPayload } from '@arena/sdk'
import { webhookBody } from '../../src/modules/webhooks/publish'
import { ROOT } from '../helpers/process'
import { declaredShape, differences, type Shape } from '../helpers/wire-shapes'

const SERVER = declaredShape(join(ROOT, 'src', 'modules', 'webhooks', 'catalogue.ts'), 'WebhookCatalogue')
const SDK = declaredShape(join(ROOT, 'packages', 'sdk', 'src', 'webhooks.ts'), 'WebhookCatalogue')

type Field = Extract<Shape, { kind: 'object' }>['fields'][string]

function fieldsOf(shape: Shape): Record<string, Field> {
  if (shape.kind !== 'object') throw new Error(`an object was expected, not ${shape.kind}`)
  return shape.fields
}

describe('SDK webhook types against the server’s catalogue', () => {
  test('the same types, each with the same data', () => {
    expect(Object.keys(fieldsOf(SERVER)).length).toBeGreaterThan(0)
    expect(differences(SERVER, SDK, 'WebhookCatalogue')).toEqual([])
  })

  test('the comparison sees a difference: a type missing, a data field missing', () => {
    const banned = fieldsOf(fieldsOf(SERVER)['user.banned']!.shape)
    const { until, ...withoutUntil } = banned
    const { ['user.banned']: _, ...withoutBanned } = fieldsOf(SERVER)
    expect(until).toBeDefined()
    expect(differences(SERVER, { kind: 'object', fields: withoutBanned }, 'C')).toEqual(['C.user.banned: on the server, not in the SDK'])
    expect(differences(SERVER, { kind: 'object', fields: { ...fieldsOf(SERVER), 'user.banned': { optional: false, shape: { kind: 'object', fields: withoutUntil } } } }, 'C')).toEqual([
      'C.user.banned.until: on the server, not in the SDK',
    ])
  })

  test('a body the server writes parses as a WebhookPayload narrowed by its type', () => {
    const body = webhookBody({ type: 'user.banned', data: { userId: 'usr_1', reason: 'spam', until: null } }, new Date('2026-11-22T10:00:00.000Z'))
    const payload = JSON.parse(body) as WebhookPayload
    expect(payload.type === 'user.banned' ? payload.data.reason : null).toBe('spam')
    expect(payload).toEqual({ type: 'user.banned', timestamp: '2026-11-22T10:00:00.000Z', data: { userId: 'usr_1', reason: 'spam', until: null } })
  })
})
