// Operator accounts and sessions, on either engine.
import { and, asc, desc, eq, isNull } from 'drizzle-orm'
import type { OperatorChanges, OperatorRow, OperatorSessionRow, OperatorsStore } from '../../modules/operators/store'
import { Queries } from './scope'

export class OperatorsQueries extends Queries implements OperatorsStore {
  async createOperator(row: OperatorRow): Promise<void> {
    await this.db.insert(this.t.operators).values(row)
  }

  async operatorById(id: string): Promise<OperatorRow | null> {
    const [row] = await this.db.select().from(this.t.operators).where(eq(this.t.operators.id, id))
    return row ?? null
  }

  async operatorByNameKey(nameKey: string): Promise<OperatorRow | null> {
    const [row] = await this.db.select().from(this.t.operators).where(eq(this.t.operators.nameKey, nameKey))
    return row ?? null
  }

  async listOperators(): Promise<OperatorRow[]> {
    const { operators } = this.t
    return this.db.select().from(operators).orderBy(asc(operators.createdAt), asc(operators.id))
  }

  async updateOperator(id: string, changes: OperatorChanges): Promise<void> {
    await this.db.update(this.t.operators).set(changes).where(eq(this.t.operators.id, id))
  }

  async createOperatorSession(row: OperatorSessionRow): Promise<void> {
    await this.db.insert(this.t.operatorSessions).values(row)
  }

  async operatorSessionByTokenHash(tokenHash: string): Promise<{ session: OperatorSessionRow; operator: OperatorRow } | null> {
    const { operators, operatorSessions } = this.t
    const [row] = await this.db
      .select({ session: operatorSessions, operator: operators })
      .from(operatorSessions)
      .innerJoin(operators, eq(operators.id, operatorSessions.operatorId))
      .where(eq(operatorSessions.tokenHash, tokenHash))
    return row ?? null
  }

  async operatorSessions(operatorId: string): Promise<OperatorSessionRow[]> {
    const { operatorSessions } = this.t
    return this.db.select().from(operatorSessions).where(eq(operatorSessions.operatorId, operatorId)).orderBy(desc(operatorSessions.createdAt), desc(operatorSessions.id))
  }

  async operatorSessionById(id: string): Promise<OperatorSessionRow | null> {
    const [row] = await this.db.select().from(this.t.operatorSessions).where(eq(this.t.operatorSessions.id, id))
    return row ?? null
  }

  async revokeOperatorSession(id: string, now: Date): Promise<void> {
    const { operatorSessions } = this.t
    await this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.id, id), isNull(operatorSessions.revokedAt)))
  }

  async touchOperatorSession(id: string, now: Date): Promise<void> {
    await this.db.update(this.t.operatorSessions).set({ lastSeenAt: now }).where(eq(this.t.operatorSessions.id, id))
  }

  async revokeOperatorSessions(operatorId: string, now: Date): Promise<void> {
    const { operatorSessions } = this.t
    await this.db.update(operatorSessions).set({ revokedAt: now }).where(and(eq(operatorSessions.operatorId, operatorId), isNull(operatorSessions.revokedAt)))
  }
}
