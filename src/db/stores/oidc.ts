// The OpenID Connect web flow's rows (src/modules/auth/oidc/store.ts), the same
// queries on both engines. A take is one DELETE … RETURNING: atomic on either
// engine, so a state or a code is used at most once however many race for it.
import { eq, lte } from 'drizzle-orm'
import type { ExchangeCode, OidcFlow, OidcStore } from '../../modules/auth/oidc/store'
import { Queries } from './scope'

export class OidcQueries extends Queries implements OidcStore {
  async insertFlow(flow: OidcFlow): Promise<void> {
    await this.db.insert(this.t.oidcLoginFlows).values(flow)
  }

  async takeFlow(stateHash: string, now: Date): Promise<OidcFlow | null> {
    const { oidcLoginFlows } = this.t
    const [flow] = await this.db.delete(oidcLoginFlows).where(eq(oidcLoginFlows.stateHash, stateHash)).returning()
    return flow !== undefined && flow.expiresAt > now ? flow : null
  }

  async insertExchangeCode(code: ExchangeCode): Promise<void> {
    await this.db.insert(this.t.loginExchangeCodes).values(code)
  }

  async takeExchangeCode(codeHash: string, now: Date): Promise<ExchangeCode | null> {
    const { loginExchangeCodes } = this.t
    const [code] = await this.db.delete(loginExchangeCodes).where(eq(loginExchangeCodes.codeHash, codeHash)).returning()
    return code !== undefined && code.expiresAt > now ? code : null
  }

  async pruneExpiredFlows(now: Date): Promise<number> {
    const { oidcLoginFlows } = this.t
    return (await this.db.delete(oidcLoginFlows).where(lte(oidcLoginFlows.expiresAt, now)).returning({ stateHash: oidcLoginFlows.stateHash })).length
  }

  async pruneExpiredExchangeCodes(now: Date): Promise<number> {
    const { loginExchangeCodes } = this.t
    return (await this.db.delete(loginExchangeCodes).where(lte(loginExchangeCodes.expiresAt, now)).returning({ codeHash: loginExchangeCodes.codeHash })).length
  }
}
