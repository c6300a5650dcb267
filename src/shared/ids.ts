// Opaque ids of contract §0: a type prefix and a time-ordered random part.
// The random part is a UUIDv7 (48-bit millisecond timestamp, then random bits)
// written as 32 lowercase hex digits, so ids sort by creation time as plain
// strings and make good B-tree keys. Clients must never parse them.

export const ID_PREFIXES = {
  user: 'usr',
  authSession: 'ses',
  game: 'gam',
  tournament: 'trn',
  match: 'mat',
  participant: 'par',
  gameSession: 'gms',
  pinSession: 'pns',
  withdrawal: 'wdr',
  event: 'evt',
  job: 'job',
  ledgerTransaction: 'ltx',
  request: 'req',
  mail: 'mal',
  operator: 'opr',
  operatorSession: 'ops',
  audit: 'aud',
  season: 'ssn',
  queue: 'que',
  ticket: 'tkt',
  challenge: 'chl',
  gameServer: 'gsv',
  evidence: 'evd',
  integrityFlag: 'ifl',
  payoutHold: 'hld',
  webhook: 'whk',
  webhookDelivery: 'whd',
  webhookMessage: 'msg',
} as const

export type IdKind = keyof typeof ID_PREFIXES

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${Bun.randomUUIDv7().replaceAll('-', '')}`
}

const ID_SHAPE = /^[a-z]{3}_[0-9a-f]{32}$/

/** True when `value` looks like an id of `kind`; a cheap filter before a lookup. */
export function isId(kind: IdKind, value: string): boolean {
  return ID_SHAPE.test(value) && value.startsWith(`${ID_PREFIXES[kind]}_`)
}
