// What the device-code flow (RFC 8628, contract §13: ./device-codes.ts) needs
// from a database: one row per code a device asked for, found by the SHA-256
// of the device's code or by the code the player types.

export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'spent'

export interface DeviceCode {
  /** SHA-256 (hex) of the device code: the device's secret is never stored. */
  deviceCodeHash: string
  /** 8 characters of Crockford base32, upper-case, without the dash shown to the player. */
  userCode: string
  status: DeviceCodeStatus
  /** Who approved or denied it, once someone did. */
  userId: string | null
  /** Seconds the device must wait between polls (5, +5 after each slow_down). */
  intervalS: number
  lastPolledAt: Date | null
  createdAt: Date
  expiresAt: Date
}

export interface DeviceCodesStore {
  /** A new code; a user code already taken throws the store's unique violation (the caller draws another). */
  create(code: DeviceCode): Promise<void>
  byDeviceCodeHash(deviceCodeHash: string): Promise<DeviceCode | null>
  byUserCode(userCode: string): Promise<DeviceCode | null>
  /** The device polled at `now`; `intervalS` is the interval from now on (grown after a slow_down). */
  recordPoll(deviceCodeHash: string, now: Date, intervalS: number): Promise<void>
  /** pending → approved or denied by `userId`, if the code is still pending and unexpired at `now`; false otherwise (nothing changed). */
  decide(userCode: string, decision: 'approved' | 'denied', userId: string, now: Date): Promise<boolean>
  /** approved → spent, once: true for the one caller that spent it. */
  spend(deviceCodeHash: string): Promise<boolean>
  /** Deletes the codes that expired before `cutoff` (housekeeping); how many. */
  pruneExpired(cutoff: Date): Promise<number>
}
