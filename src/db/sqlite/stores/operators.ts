// Operator accounts and sessions on SQLite.
import { and, asc, desc, eq, isNull } from 'drizzle-orm'
import { operators, operatorSessions } from '../../schema'
import type { OperatorChanges, OperatorRow, OperatorSessionRow, OperatorsStore } from '../../../modules/operators/store'
import type { SqliteScope } from '../storage'

export class SqliteOperatorsStore implements OperatorsStore {
  constructor(private readonly scope: SqliteScope) {}

  private get db() {
    return this.scope.handle.db
  }

  async createOperator(row: OperatorRow): Promise<void> {
    this.db.insert(operators).values(row).run()
  }

  async operatorById(id: string): Promise<OperatorRow | null> {
    return this.db.select().from(operators).where(eq(operators.id, id)).get() ?? null
  }

  async operatorByNameKey(nameKey: string): Promise<OperatorRow | null> {
    return this.db.select().from(operators).where(eq(operators.nameKey, nameKey)).get() ?? null
  }

  async listOperators(): Promise<OperatorRow[]> {
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id)).all()
  }

  async updateOperator(id: string, changes: OperatorChanges): Promise<void> {
    this.db.update(operators).set(changes).where(eq(operators.id, id)).run()
  }

  async createOperatorSession(row: OperatorSessionRow): Promise<void> {
    this.db.insert(operatorSessions).values(row).run()
  }

  async operatorSessionByTokenHash(tokenHash: string): Promise<{ session: OperatorSessionRow; operator: OperatorRow } | null> {
    const row = this.db
      .select({ session: operatorSessions, operator: operators })
      .from(operatorSessions)
      .innerJoin(operators, eq(operators.id, operatorSessions.operatorId))
      .where(eq(operatorSessions.tokenHash, tokenHash))
      .get()
    return row ?? null
  }

  async operatorSessions(operatorId: string): Promise<OperatorSessionRow[]> {
    return this.db.select().from(operatorSessions).where(eq(operatorSessions.operatorId, operatorId)).orderBy(desc(operatorSessions.createdAt), desc(operatorSessions.id)).all()
  }

  async operatorSessionById(id: string): Promise<OperatorSessionRow | null> {
    return this.db.select().from(operatorSessions).where(eq(operatorSessions.id, id)).get() ?? null
  }

  async revokeOperatorSession(id: string, now: Date): Promise<void> {
    this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.id, id), isNull(operatorSessions.revokedAt))).run()
  }

  async touchOperatorSession(id: string, now: Date): Promise<void> {
    this.db.update(operatorSessions).set({ lastSeenAt: now }).where(eq(operatorSessions.id, id)).run()
  }

  async revokeOperatorSessions(operatorId: string, now: Date): Promise<void> {
    this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.operatorId, operatorId), isNull(operatorSessions.revokedAt))).run()
  }
}
