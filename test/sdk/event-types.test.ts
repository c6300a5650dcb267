// The SDK's EventCatalogue (packages/sdk/src/types.ts) mirrors the server's
// event catalogue (src/modules/events/catalogue.ts) entry for entry. This is
// the runtime half of that check, for `bun test` alone: it reads both
// declarations with the TypeScript parser and compares types, topics, data
// fields, optionality and literal values. event-types.check.ts is the exact,
// compile-time half that `tsc --noEmit` runs.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { isEvent, type KnownEvent, type PlaneEvent } from '@arena/sdk'
import { ROOT } from '../helpers/process'
import { declaredShape, differences, type Shape } from '../helpers/wire-shapes'

const SERVER = declaredShape(join(ROOT, 'src', 'modules', 'events', 'catalogue.ts'), 'EventCatalogue')
const SDK = declaredShape(join(ROOT, 'packages', 'sdk', 'src', 'types.ts'), 'EventCatalogue')

type Field = Extract<Shape, { kind: 'object' }>['fields'][string]

function fieldsOf(shape: Shape): Record<string, Field> {
  if (shape.kind !== 'object') throw new Error(`an object was expected, not ${shape.kind}`)
  return shape.fields
}

describe('SDK event types against the server’s catalogue', () => {
  test('the same types, each with the same topic and data', () => {
    expect(Object.keys(fieldsOf(SERVER)).length).toBeGreaterThan(0)
    expect(differences(SERVER, SDK, 'EventCatalogue')).toEqual([])
  })

  test('the comparison sees a difference: a type missing, filed under another topic, a data field missing', () => {
    const credited = fieldsOf(fieldsOf(SERVER)['wallet.credited']!.shape)
    const { balance, ...withoutBalance } = fieldsOf(credited.data!.shape)
    const { ['wallet.credited']: _, ...withoutCredited } = fieldsOf(SERVER)
    const sdkWith = (entry: Record<string, Field>): Shape => ({ kind: 'object', fields: { ...fieldsOf(SERVER), 'wallet.credited': { optional: false, shape: { kind: 'object', fields: entry } } } })
    expect(balance).toBeDefined()
    expect(differences(SERVER, { kind: 'object', fields: withoutCredited }, 'C')).toEqual(['C.wallet.credited: on the server, not in the SDK'])
    expect(differences(SERVER, sdkWith({ ...credited, topic: { optional: false, shape: { kind: 'literals', values: ['status'] } } }), 'C')).toEqual([
      'C.wallet.credited.topic: wallet on the server, status in the SDK',
    ])
    expect(differences(SERVER, sdkWith({ ...credited, data: { optional: false, shape: { kind: 'object', fields: withoutBalance } } }), 'C')).toEqual([
      'C.wallet.credited.data.balance: on the server, not in the SDK',
    ])
  })

  test('isEvent narrows a delivered event to its type, by its type alone', () => {
    const events: PlaneEvent[] = [
      { id: 'evt_1', topic: 'session', type: 'session.login', data: { sessionId: 'ses_1' }, createdAt: '2026-11-22T10:00:00.000Z' },
      { id: 'evt_2', topic: 'wallet', type: 'wallet.credited', data: { asset: 'USDC', amount: '5', reference: 'r', balance: '5' }, createdAt: '2026-11-22T10:00:01.000Z' },
      { id: 'evt_3', topic: 'status', type: 'match.rematch', data: {}, createdAt: '2026-11-22T10:00:02.000Z' },
    ]
    const credited: KnownEvent<'wallet.credited'>[] = events.filter((e) => isEvent(e, 'wallet.credited'))
    expect(credited.map((e) => e.data.balance)).toEqual(['5'])
    expect(events.map((e) => isEvent(e, 'session.login'))).toEqual([true, false, false])
  })
})
