/** Polls `check` every 20 ms until it returns something other than undefined; fails after `ms` saying what it waited for. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await Bun.sleep(20)
  }
}
