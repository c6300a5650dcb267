// Entry point of the binary and of `npm start`: arena <command> [options].
import { main } from './cli'

const code = await main(process.argv.slice(2))
process.exit(code)
