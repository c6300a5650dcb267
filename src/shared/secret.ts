// A secret setting (ARENA_BACKUP_PASSPHRASE): its value is read with
// `reveal()` where it is used, and nowhere else. Printed, logged or
// serialized (a Config in a log line, JSON.stringify, console.log), it is
// `[redacted]`.
export class Secret {
  readonly #value: string

  constructor(value: string) {
    this.#value = value
  }

  reveal(): string {
    return this.#value
  }

  toJSON(): string {
    return '[redacted]'
  }

  toString(): string {
    return '[redacted]'
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'Secret [redacted]'
  }
}
