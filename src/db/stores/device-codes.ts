// Device codes (RFC 8628, contract §13; src/modules/auth/device-code-store.ts)
// on either engine, the same queries on both. The two writes that decide
// (the player's approve or deny, the device's spend) are conditional updates
// on the status they leave, so each happens once even outside a
// SERIALIZABLE transaction: of two polls of one approved code, one update
// finds it approved and the other finds it spent.
import { and, eq, gt, lt } from 'drizzle-orm'
import type { DeviceCode, DeviceCodesStore } from '../../modules/auth/device-code-store'
import { Queries } from './scope'

export class DeviceCodeQueries extends Queries implements DeviceCodesStore {
  async create(code: DeviceCode): Promise<void> {
    await this.db.insert(this.t.deviceCodes).values(code)
  }

  async byDeviceCodeHash(deviceCodeHash: string): Promise<DeviceCode | null> {
    const { deviceCodes } = this.t
    const [row] = await this.db.select().from(deviceCodes).where(eq(deviceCodes.deviceCodeHash, deviceCodeHash)).limit(1)
    return row ?? null
  }

  async byUserCode(userCode: string): Promise<DeviceCode | null> {
    const { deviceCodes } = this.t
    const [row] = await this.db.select().from(deviceCodes).where(eq(deviceCodes.userCode, userCode)).limit(1)
    return row ?? null
  }

  async recordPoll(deviceCodeHash: string, now: Date, intervalS: number): Promise<void> {
    const { deviceCodes } = this.t
    await this.db.update(deviceCodes).set({ lastPolledAt: now, intervalS }).where(eq(deviceCodes.deviceCodeHash, deviceCodeHash))
  }

  async decide(userCode: string, decision: 'approved' | 'denied', userId: string, now: Date): Promise<boolean> {
    const { deviceCodes } = this.t
    const changed = await this.db
      .update(deviceCodes)
      .set({ status: decision, userId })
      .where(and(eq(deviceCodes.userCode, userCode), eq(deviceCodes.status, 'pending'), gt(deviceCodes.expiresAt, now)))
      .returning({ hash: deviceCodes.deviceCodeHash })
    return changed.length > 0
  }

  async spend(deviceCodeHash: string): Promise<boolean> {
    const { deviceCodes } = this.t
    const changed = await this.db
      .update(deviceCodes)
      .set({ status: 'spent' })
      .where(and(eq(deviceCodes.deviceCodeHash, deviceCodeHash), eq(deviceCodes.status, 'approved')))
      .returning({ hash: deviceCodes.deviceCodeHash })
    return changed.length > 0
  }

  async pruneExpired(cutoff: Date): Promise<number> {
    const { deviceCodes } = this.t
    const deleted = await this.db.delete(deviceCodes).where(lt(deviceCodes.expiresAt, cutoff)).returning({ hash: deviceCodes.deviceCodeHash })
    return deleted.length
  }
}
