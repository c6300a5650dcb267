/** The named keys of `record` (a row, a table's columns, a profile), and only those. */
export function pick<R, K extends keyof R>(record: R, keys: readonly K[]): Pick<R, K> {
  const picked = {} as Pick<R, K>
  for (const key of keys) picked[key] = record[key]
  return picked
}
