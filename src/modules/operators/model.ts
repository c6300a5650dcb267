// The TypeBox models of an operator as the admin API answers it (contract
// §11). The service, the console and `arena operator …` use their static
// types, so the answer is declared once, here, beside its owner.
import { t, type Static } from 'elysia'
import type { OPERATOR_ROLES } from './roles'

export const OperatorRoleModel = t.Union([t.Literal('viewer'), t.Literal('moderator'), t.Literal('finance'), t.Literal('admin')], { description: 'viewer < moderator / finance < admin' })
// Every role, and nothing else: the schema above must follow OPERATOR_ROLES.
const ROLES_MATCH: [typeof OPERATOR_ROLES[number]] extends [Static<typeof OperatorRoleModel>] ? ([Static<typeof OperatorRoleModel>] extends [typeof OPERATOR_ROLES[number]] ? true : never) : never = true
void ROLES_MATCH

/** An operator as the API and the console show it. */
export const Operator = t.Object(
  {
    id: t.String(),
    name: t.String(),
    role: OperatorRoleModel,
    totpEnabled: t.Boolean({ description: 'sign-in asks for a TOTP code' }),
    disabled: t.Boolean({ description: 'cannot sign in; its sessions ended when it was disabled' }),
    createdAt: t.String(),
  },
  { $id: 'Operator' },
)
export type Operator = Static<typeof Operator>
