// The console's names behind ids (src/modules/operations/store.ts, IdNames),
// written once for both engines: one UNION ALL over the tables the ids'
// prefixes point to, each branch a primary-key lookup (or two joined), so a
// page of 50 audit records costs one round trip whatever it names. The SQL is
// plain enough to mean the same on SQLite and PostgreSQL (the schemas are the
// same: test/platform/schema-parity.test.ts).
import { sql, type SQL } from 'drizzle-orm'
import type { NamedId } from '../modules/operations/store'
import { isId, type IdKind } from '../shared/ids'

/** One row of the union: every branch answers these columns, in this order. */
export type NameRow = {
  id: string
  name: string | null
  user_id: string | null
  deleted: number | string | boolean | null
  tournament_id: string | null
  tournament_name: string | null
}

const NULL_TEXT = 'CAST(NULL AS TEXT)'
const DELETED = (alias: string) => `CASE WHEN ${alias}.deleted_at IS NULL THEN 0 ELSE 1 END`

/** Each kind the console names: its branch of the union, over the ids of that kind. */
const BRANCHES: Partial<Record<IdKind, (ids: SQL) => SQL>> = {
  user: (ids) => select(['u.id', 'u.username', 'u.id', DELETED('u'), NULL_TEXT, NULL_TEXT], sql`users u WHERE u.id IN ${ids}`),
  operator: (ids) => select(['o.id', 'o.name', NULL_TEXT, '0', NULL_TEXT, NULL_TEXT], sql`operators o WHERE o.id IN ${ids}`),
  tournament: (ids) => select(['t.id', 't.name', NULL_TEXT, '0', 't.id', 't.name'], sql`tournaments t WHERE t.id IN ${ids}`),
  game: (ids) => select(['g.id', 'g.name', NULL_TEXT, '0', NULL_TEXT, NULL_TEXT], sql`games g WHERE g.id IN ${ids}`),
  match: (ids) => select(['m.id', NULL_TEXT, NULL_TEXT, '0', 't.id', 't.name'], sql`matches m JOIN tournaments t ON t.id = m.tournament_id WHERE m.id IN ${ids}`),
  participant: (ids) =>
    select(['p.id', 'u.username', 'u.id', DELETED('u'), 't.id', 't.name'], sql`participants p JOIN users u ON u.id = p.user_id JOIN tournaments t ON t.id = p.tournament_id WHERE p.id IN ${ids}`),
  withdrawal: (ids) => select(['w.id', 'u.username', 'u.id', DELETED('u'), NULL_TEXT, NULL_TEXT], sql`withdrawals w JOIN users u ON u.id = w.user_id WHERE w.id IN ${ids}`),
}

const COLUMNS = ['id', 'name', 'user_id', 'deleted', 'tournament_id', 'tournament_name'] as const satisfies readonly (keyof NameRow)[]

/** One branch: its six expressions (fixed SQL text, never input) named as NameRow's columns, in every branch alike. */
function select(expressions: readonly string[], from: SQL): SQL {
  return sql`SELECT ${sql.raw(expressions.map((e, i) => `${e} AS ${COLUMNS[i]}`).join(', '))} FROM ${from}`
}

/** The query naming `ids` (duplicates and ids of other kinds dropped); null when none is of a kind named. */
export function namesQuery(ids: readonly string[]): SQL | null {
  const unique = [...new Set(ids)]
  const branches: SQL[] = []
  for (const [kind, branch] of Object.entries(BRANCHES) as [IdKind, (ids: SQL) => SQL][]) {
    const ofKind = unique.filter((id) => isId(kind, id))
    if (ofKind.length > 0) branches.push(branch(sql`(${sql.join(ofKind.map((id) => sql`${id}`), sql`, `)})`))
  }
  if (branches.length === 0) return null
  return sql.join(branches, sql` UNION ALL `)
}

/** The rows as the console's names, by id. */
export function toNamedIds(rows: readonly NameRow[]): Map<string, NamedId> {
  const named = new Map<string, NamedId>()
  for (const row of rows) {
    const deleted = row.deleted === 1 || row.deleted === '1' || row.deleted === true
    const text = (value: string | null) => value ?? ''
    const kind = (Object.keys(BRANCHES) as IdKind[]).find((k) => isId(k, row.id))
    const name: NamedId | null =
      kind === 'user'
        ? { kind, username: text(row.name), deleted }
        : kind === 'operator' || kind === 'tournament' || kind === 'game'
          ? { kind, name: text(row.name) }
          : kind === 'match'
            ? { kind, tournamentId: text(row.tournament_id), tournamentName: text(row.tournament_name) }
            : kind === 'participant'
              ? { kind, userId: text(row.user_id), username: text(row.name), deleted, tournamentId: text(row.tournament_id), tournamentName: text(row.tournament_name) }
              : kind === 'withdrawal'
                ? { kind, userId: text(row.user_id), username: text(row.name), deleted }
                : null
    if (name !== null) named.set(row.id, name)
  }
  return named
}
