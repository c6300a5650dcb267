// The hashing ceiling: how many argon2id verifies per second Bun.password does
// here with arena's parameters, `concurrency` at a time, for `seconds`.
// Prints { verifyPerSecond, verifies, seconds, concurrency }.
//
//   bun bench/argon2-reference.ts [seconds] [concurrency]
import { PASSWORD_HASH_PARAMS } from '../src/modules/auth/passwords'

const seconds = Number(process.argv[2] ?? 10)
const concurrency = Number(process.argv[3] ?? navigator.hardwareConcurrency)
const hash = await Bun.password.hash('correct horse battery', PASSWORD_HASH_PARAMS)
await Bun.password.verify('correct horse battery', hash) // warm-up
let verifies = 0
const started = performance.now()
const until = started + seconds * 1000
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      if (!(await Bun.password.verify('correct horse battery', hash))) throw new Error('verify failed')
      verifies++
    }
  }),
)
const elapsed = (performance.now() - started) / 1000
console.log(JSON.stringify({ verifyPerSecond: Math.round((verifies / elapsed) * 10) / 10, verifies, seconds: Math.round(elapsed * 100) / 100, concurrency }))
