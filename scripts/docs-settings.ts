// `npm run docs:settings`: writes the README's Configuration table from the
// settings table in src/config.ts, between the two markers below. The README
// is never edited there by hand; test/platform/config.test.ts fails when it is
// not what this script would write.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { settingsTable } from '../src/config'

export const README = join(import.meta.dir, '..', 'README.md')
export const BEGIN = '<!-- settings: written by `npm run docs:settings` from src/config.ts; do not edit by hand -->'
export const END = '<!-- /settings -->'

/** The README with the table between the markers written afresh (the markers must be there, once each). */
export function withSettingsTable(readme: string): string {
  const begin = readme.indexOf(BEGIN)
  const end = readme.indexOf(END)
  if (begin === -1 || end < begin || readme.indexOf(BEGIN, begin + 1) !== -1 || readme.indexOf(END, end + 1) !== -1) {
    throw new Error(`README.md must hold the markers ${BEGIN} and ${END}, once each and in that order`)
  }
  return `${readme.slice(0, begin + BEGIN.length)}\n${settingsTable()}\n${readme.slice(end)}`
}

if (import.meta.main) {
  const before = readFileSync(README, 'utf8')
  const after = withSettingsTable(before)
  if (after !== before) writeFileSync(README, after)
  console.log(after === before ? 'README.md: the settings table is up to date' : 'README.md: settings table written')
}
