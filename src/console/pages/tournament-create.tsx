// The "new tournament" form: every format with its options, and either a
// list of players (a draft a moderator starts) or a registration (players
// join until it closes; it starts by itself). Read by ../tournament-form.ts.
import type { GameListing } from '../../modules/operations/store'
import type { ErrorDetail } from '../../shared/errors'
import type { TournamentFormFields } from '../tournament-form'
import { Csrf } from '../layout'
import { allFormats, DEFAULT_FORMAT } from '../../modules/games/formats/engines'

/** The formats the form offers, with their labels: the registry's. */
export const FORMATS: { value: string; label: string }[] = allFormats().map((f) => ({ value: f.name, label: f.label }))

type Values = Partial<TournamentFormFields>

function FieldError({ errors, path }: { errors: ErrorDetail[]; path: string }) {
  const mine = errors.filter((e) => e.path === path || e.path.startsWith(`${path}.`) || e.path.endsWith(`.${path}`))
  if (mine.length === 0) return null
  return (
    <span class="bad" id={`${path}-error`}>
      {mine.map((e) => e.message).join('; ')}
    </span>
  )
}

function Text(props: { name: keyof TournamentFormFields; label: string; values: Values; errors: ErrorDetail[]; type?: 'text' | 'datetime-local'; hint?: string; required?: boolean; numeric?: boolean; placeholder?: string }) {
  const value = props.values[props.name]
  const text = typeof value === 'string' ? value : ''
  const describedBy = props.errors.some((e) => e.path === props.name) ? `${props.name}-error` : undefined
  return (
    <label>
      {props.label}
      {props.hint && <span class="muted"> {props.hint}</span>}
      {props.type === 'datetime-local' ? (
        <input name={props.name} type="datetime-local" value={text} required={props.required} aria-describedby={describedBy} />
      ) : (
        <input name={props.name} type="text" value={text} required={props.required} inputMode={props.numeric ? 'numeric' : undefined} placeholder={props.placeholder} aria-describedby={describedBy} />
      )}
      <FieldError errors={props.errors} path={props.name} />
    </label>
  )
}

export function CreateTournamentForm({ csrf, games, values = {}, errors = [] }: { csrf: string; games: GameListing[]; values?: Values; errors?: ErrorDetail[] }) {
  const mode = values.mode ?? 'players'
  const format = values.format ?? DEFAULT_FORMAT
  return (
    <form method="post" action="/console/tournaments" class="wide">
      <Csrf token={csrf} />
      <fieldset>
        <legend>The tournament</legend>
        <label>
          Game
          <select name="gameId" required>
            {games.map((g) => (
              <option value={g.id} selected={g.id === values.gameId}>
                {g.name}
              </option>
            ))}
          </select>
          <FieldError errors={errors} path="gameId" />
        </label>
        <Text name="name" label="Name" values={values} errors={errors} required />
        <label>
          Format
          <select name="format" required>
            {FORMATS.map((f) => (
              <option value={f.value} selected={f.value === format}>
                {f.label}
              </option>
            ))}
          </select>
          <FieldError errors={errors} path="format" />
        </label>
      </fieldset>
      <fieldset>
        <legend>Options (only the chosen format's are used)</legend>
        <label class="choice">
          <input type="checkbox" name="thirdPlaceMatch" checked={values.thirdPlaceMatch !== undefined} /> Third-place match (single elimination, 4 or more players)
        </label>
        <label>
          Grand final (double elimination)
          <select name="grandFinal">
            <option value="reset" selected={values.grandFinal !== 'simple'}>
              reset: a second final if the losers-bracket champion wins the first
            </option>
            <option value="simple" selected={values.grandFinal === 'simple'}>
              simple: one final decides
            </option>
          </select>
        </label>
        <Text name="rounds" label="Rounds (Swiss)" hint="default ⌈log2 players⌉, at most players − 1" values={values} errors={errors} numeric />
        <Text name="matchDeadlineS" label="Match deadline in seconds (any format)" hint="empty: no deadline" values={values} errors={errors} numeric />
        <label class="choice">
          <input type="checkbox" name="unrated" checked={values.unrated !== undefined} /> Unrated: its results do not move the players' ratings (a friendly, a test)
        </label>
        <Text name="prizes" label="Prizes, rank 1 first" hint="decimal amounts separated by commas; the start waits for the escrow to cover them" values={values} errors={errors} placeholder="100, 50, 25" />
      </fieldset>
      <fieldset>
        <legend>Players</legend>
        <label class="choice">
          <input type="radio" name="mode" value="players" checked={mode === 'players'} /> These players, seeded in this order (a draft you start)
        </label>
        <label>
          Usernames
          <span class="muted"> separated by commas or new lines, seed 1 first</span>
          <textarea name="participants" rows={4} cols={50} aria-describedby={errors.some((e) => e.path.startsWith('participants')) ? 'participants-error' : undefined}>
            {values.participants ?? ''}
          </textarea>
          <FieldError errors={errors} path="participants" />
        </label>
        <label class="choice">
          <input type="radio" name="mode" value="registration" checked={mode === 'registration'} /> Open for registration (it starts by itself); times in UTC
        </label>
        <Text name="closesAt" label="Registration closes (UTC)" type="datetime-local" values={values} errors={errors} />
        <Text name="maxPlayers" label="Capacity (players)" values={values} errors={errors} numeric />
        <Text name="checkInOpensAt" label="Check-in opens (UTC, optional)" type="datetime-local" values={values} errors={errors} />
        <Text name="checkInClosesAt" label="Check-in closes (UTC, optional)" type="datetime-local" values={values} errors={errors} />
        <FieldError errors={errors} path="checkIn" />
        <Text name="startsAt" label="Starts at (UTC)" type="datetime-local" values={values} errors={errors} />
        <label>
          Seeding
          <select name="seeding">
            <option value="registration" selected={values.seeding !== 'random' && values.seeding !== 'rating'}>
              in the order players joined
            </option>
            <option value="random" selected={values.seeding === 'random'}>
              random (reproducible from a stored seed)
            </option>
            <option value="rating" selected={values.seeding === 'rating'}>
              by rating in the game at the start (ties in join order)
            </option>
          </select>
        </label>
        <Text name="entryFee" label="Entry fee (optional)" hint="a decimal amount each registrant pays into the escrow" values={values} errors={errors} />
        <FieldError errors={errors} path="registration" />
      </fieldset>
      <button type="submit">Create tournament</button>
    </form>
  )
}
