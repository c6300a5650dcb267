// The tournament formats arena runs, by the name a tournament stores.
import type { TournamentFormatName } from '../store'
import type { TournamentFormat } from './format'
import { singleElimination } from './single-elimination'

export type { Advance, Standing, TournamentFormat } from './format'

const FORMATS: Record<TournamentFormatName, TournamentFormat> = {
  single_elimination: singleElimination,
}

export function formatOf(name: TournamentFormatName): TournamentFormat {
  return FORMATS[name]
}
