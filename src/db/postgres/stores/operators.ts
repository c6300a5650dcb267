// Operator accounts and sessions on PostgreSQL (the same queries as SQLite's).
import { and, asc, desc, eq, isNull } from 'drizzle-orm'
import { operators, operatorSessions } from '../schema'
import type { OperatorChanges, OperatorRow, OperatorSessionRow, OperatorsStore } from '../../../modules/operators/store'
import type { PostgresScope } from '../scope'

export class PostgresOperatorsStore implements OperatorsStore {
  constructor(private readonly scope: PostgresScope) {}

  private get db() {
    return this.scope.db
  }

  async createOperator(row: OperatorRow): Promise<void> {
    await this.db.insert(operators).values(row)
  }

  async operatorById(id: string): Promise<OperatorRow | null> {
    const [row] = await this.db.select().from(operators).where(eq(operators.id, id))
    return row ?? null
  }

  async operatorByNameKey(nameKey: string): Promise<OperatorRow | null> {
    const [row] = await this.db.select().from(operators).where(eq(operators.nameKey, nameKey))
    return row ?? null
  }

  async listOperators(): Promise<OperatorRow[]> {
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id))
  }

  async updateOperator(id: string, changes: OperatorChanges): Promise<void> {
    await this.db.update(operators).set(changes).where(eq(operators.id, id))
  }

  async createOperatorSession(row: OperatorSessionRow): Promise<void> {
    await this.db.insert(operatorSessions).values(row)
  }

  async operatorSessionByTokenHash(tokenHash: string): Promise<{ session: OperatorSessionRow; operator: OperatorRow } | null> {
    const [row] = await this.db
      .select({ session: operatorSessions, operator: operators })
      .from(operatorSessions)
      .innerJoin(operators, eq(operators.id, operatorSessions.operatorId))
      .where(eq(operatorSessions.tokenHash, tokenHash))
    return row ?? null
  }

  async operatorSessions(operatorId: string): Promise<OperatorSessionRow[]> {
    return this.db.select().from(operatorSessions).where(eq(operatorSessions.operatorId, operatorId)).orderBy(desc(operatorSessions.createdAt), desc(operatorSessions.id))
  }

  async operatorSessionById(id: string): Promise<OperatorSessionRow | null> {
    const [row] = await this.db.select().from(operatorSessions).where(eq(operatorSessions.id, id))
    return row ?? null
  }

  async revokeOperatorSession(id: string, now: Date): Promise<void> {
    await this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.id, id), isNull(operatorSessions.revokedAt)))
  }

  async touchOperatorSession(id: string, now: Date): Promise<void> {
    await this.db.update(operatorSessions).set({ lastSeenAt: now }).where(eq(operatorSessions.id, id))
  }

  async revokeOperatorSessions(operatorId: string, now: Date): Promise<void> {
    await this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.operatorId, operatorId), isNull(operatorSessions.revokedAt)))
  }
}
