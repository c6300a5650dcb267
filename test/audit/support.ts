// What the audit tests share: the records appended since a point, and a way to
// make every append fail (a trigger on audit_log) to show that an action and
// its record commit or roll back together.
import { expect } from 'bun:test'
import type { TestApp } from '../helpers/app'
import type { StoredAuditRecord } from '../../src/modules/audit/store'

/** The chain's recorded head: where "new records" start. */
export async function headSeq(ctx: TestApp): Promise<number> {
  return (await ctx.storage.read.audit.auditHead()).seq
}

/** Every record after `seq`, oldest first. */
export async function recordsAfter(ctx: TestApp, seq: number): Promise<StoredAuditRecord[]> {
  const out: StoredAuditRecord[] = []
  for (;;) {
    const page = await ctx.storage.read.audit.auditAfter(out.at(-1)?.seq ?? seq, 500)
    if (page.length === 0) return out
    out.push(...page)
  }
}

/**
 * Sends `request`, expects `status`, and returns the answer with the records
 * it appended (compared by head: the test app is the only writer).
 */
export async function acting(ctx: TestApp, request: Request, status: number) {
  const before = await headSeq(ctx)
  const res = await ctx.handle(request)
  const body = (await res.json()) as Record<string, any>
  expect({ status: res.status, body }).toMatchObject({ status })
  return { body, requestId: res.headers.get('x-request-id'), records: await recordsAfter(ctx, before) }
}

/** From now on every audit append fails inside its unit of work (as a full disk or a bug would). */
export async function refuseAppends(ctx: TestApp): Promise<void> {
  if (ctx.storage.engine === 'sqlite') {
    ctx.db.sqlite.run(`CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit append refused by the test'); END`)
  } else {
    await ctx.postgres.sql.unsafe(`
      CREATE FUNCTION audit_refused() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit append refused by the test'; END $$;
      CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_refused();
    `)
  }
}

export async function allowAppends(ctx: TestApp): Promise<void> {
  if (ctx.storage.engine === 'sqlite') ctx.db.sqlite.run('DROP TRIGGER audit_refused')
  else await ctx.postgres.sql.unsafe('DROP TRIGGER audit_refused ON audit_log; DROP FUNCTION audit_refused();')
}
