// What operator accounts and their sessions need from a database (contract §11).
import type { OperatorRole } from './roles'

export interface OperatorRow {
  id: string
  name: string
  /** `name` lower-cased: unique. */
  nameKey: string
  role: OperatorRole
  passwordHash: string
  /** A password printed by `arena operator create` or `reset-password`: the next sign-in must replace it. */
  passwordOneTime: boolean
  /** The TOTP secret, sealed; null until enrolment starts. */
  totpSecretSealed: string | null
  /** Set once a code from the secret was confirmed: from then on sign-in asks for one. */
  totpEnabledAt: Date | null
  /** The last TOTP time step accepted (a code is used once). */
  totpLastStep: number | null
  disabledAt: Date | null
  createdAt: Date
  updatedAt: Date
}

export type OperatorSessionKind = 'console' | 'api'

export interface OperatorSessionRow {
  id: string
  operatorId: string
  /** sha256 of the token; the token itself is never stored. */
  tokenHash: string
  kind: OperatorSessionKind
  userAgent: string | null
  ip: string | null
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
  revokedAt: Date | null
}

export type OperatorChanges = Partial<Pick<OperatorRow, 'role' | 'passwordHash' | 'passwordOneTime' | 'totpSecretSealed' | 'totpEnabledAt' | 'totpLastStep' | 'disabledAt'>> & { updatedAt: Date }

export interface OperatorsStore {
  /** Throws UniqueViolationError (operators_name_key) when the name is taken. */
  createOperator(row: OperatorRow): Promise<void>
  operatorById(id: string): Promise<OperatorRow | null>
  operatorByNameKey(nameKey: string): Promise<OperatorRow | null>
  /** Every operator, in creation order. */
  listOperators(): Promise<OperatorRow[]>
  updateOperator(id: string, changes: OperatorChanges): Promise<void>

  createOperatorSession(row: OperatorSessionRow): Promise<void>
  /** The session with this token hash and its operator, whatever their state (the caller judges expiry, revocation, disabling). */
  operatorSessionByTokenHash(tokenHash: string): Promise<{ session: OperatorSessionRow; operator: OperatorRow } | null>
  /** The operator's sessions, newest first. */
  operatorSessions(operatorId: string): Promise<OperatorSessionRow[]>
  operatorSessionById(id: string): Promise<OperatorSessionRow | null>
  revokeOperatorSession(id: string, now: Date): Promise<void>
  /** Records that the session was used at `now` (its lastSeenAt). */
  touchOperatorSession(id: string, now: Date): Promise<void>
  /** Revokes every live session of the operator (disable, password reset). */
  revokeOperatorSessions(operatorId: string, now: Date): Promise<void>
}
