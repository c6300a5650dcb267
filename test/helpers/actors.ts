// An operator for tests that call an operator service method directly (not
// through the admin API): every such method takes `by: Actor` and records
// the action in the audit log (contract §11), so a test names who acts.
import type { Actor, AuditLog } from '../../src/modules/audit/log'
import type { AuditVia } from '../../src/modules/audit/store'
import type { OperatorRole } from '../../src/modules/operators/roles'

/** `test:<role>`, no operator row (like the admin token), via `cli` unless told. */
export function testActor(services: { audit: AuditLog }, role: OperatorRole = 'admin', via: AuditVia = 'cli'): Actor {
  return services.audit.actor({ id: null, name: `test:${role}`, role }, via)
}
