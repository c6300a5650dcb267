// The console's static files, embedded: imported as text, so `bun build
// --compile` carries them inside the binary and nothing is read from disk.
import css from './assets/console.css' with { type: 'text' }

export const ASSETS: Record<string, { body: string; type: string }> = {
  'console.css': { body: css, type: 'text/css; charset=utf-8' },
}
