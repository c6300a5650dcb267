// Entry point of the binary and of `npm start`: arena <command> [options].
import { main } from './cli/main'

const code = await main(process.argv.slice(2))
process.exit(code)
