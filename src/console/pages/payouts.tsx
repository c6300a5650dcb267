// /console/payouts: the payouts held for review because the win that earned
// them raised an integrity signal (docs/integrity.md), by status (held first,
// oldest first), each with its winner, amount and signals; /console/payouts/{id}
// shows one with the figures each signal was raised on. A finance operator
// releases one (paid as decided) or voids it (stakes back to both players, a
// prize to the house), with a reason, each through its confirmation page
// (../confirm.tsx): neither can be taken back. PayoutService.release and void,
// as the admin API.
import { t } from 'elysia'
import type { Services } from '../../services'
import type { PayoutHold } from '../../modules/integrity/model'
import { AppError } from '../../shared/errors'
import { ConfirmButton, confirmPage } from '../confirm'
import { redirect } from '../http'
import { Pager, queryOf } from '../page'
import { consoleRoute } from '../session'
import { actorOf, attempt, can, errorText, IdParams, opsPage, Reason, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/payouts'
const STATUSES = ['held', 'released', 'voided'] as const

const PageQuery = t.Object({
  notice: t.Optional(t.String({ maxLength: 200 })),
  status: t.Optional(t.Union(STATUSES.map((s) => t.Literal(s)))),
  after: t.Optional(t.String({ maxLength: 64 })),
})
type PageQuery = typeof PageQuery.static

const KIND_TEXT = { stake: 'stake winnings', prize: 'prize' } as const

/** Where the money came from: the staked match, or the tournament and rank. */
function Source({ hold }: { hold: PayoutHold }) {
  if (hold.kind === 'prize') {
    return (
      <>
        rank {hold.rank} of <a href={`/console/tournaments/${hold.tournamentId}`}>{hold.tournamentId}</a>
      </>
    )
  }
  return <span class="mono">{hold.matchId}</span>
}

function Signals({ hold, detail }: { hold: PayoutHold; detail: boolean }) {
  return (
    <ul class="plain">
      {hold.signals.map((s) => (
        <li>
          <strong>{s.signal}</strong>
          {detail &&
            ` (${Object.entries(s.detail)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`}
        </li>
      ))}
    </ul>
  )
}

function Actions({ hold }: { hold: PayoutHold }) {
  const who = `${hold.amount} ${hold.asset} to ${hold.username}`
  return (
    <div class="actions tight">
      <ConfirmButton href={`${SECTION}/${hold.id}/release`} label="Release" ariaLabel={`Release ${who}`} kind="secondary" />
      <ConfirmButton href={`${SECTION}/${hold.id}/void`} label="Void" ariaLabel={`Void ${who}`} />
    </div>
  )
}

function HoldsTable({ holds, status, mayAct }: { holds: PayoutHold[]; status: (typeof STATUSES)[number]; mayAct: boolean }) {
  if (holds.length === 0) return <p>{status === 'held' ? 'No payout is held.' : `No payout was ${status}.`}</p>
  const acting = mayAct && status === 'held'
  return (
    <table>
      <caption class="muted">
        Oldest first.{' '}
        {status !== 'held' ? '' : mayAct ? 'Releasing pays it as decided; voiding gives a staked match\'s stakes back to both players, or a prize to the house. Each asks you to confirm.' : 'Releasing and voiding need the finance role.'}
      </caption>
      <thead>
        <tr>
          <th scope="col">Winner</th>
          <th scope="col">Kind</th>
          <th scope="col" class="num">
            Amount
          </th>
          <th scope="col">From</th>
          <th scope="col">Signals</th>
          <th scope="col">Held</th>
          {status !== 'held' && <th scope="col">Decision</th>}
          {acting && <th scope="col">Decide</th>}
        </tr>
      </thead>
      <tbody>
        {holds.map((hold) => (
          <tr>
            <th scope="row" id={`payout-${hold.id}`}>
              <a href={`/console/users/${hold.userId}`}>{hold.username}</a>
            </th>
            <td>
              <a href={`${SECTION}/${hold.id}`}>{KIND_TEXT[hold.kind]}</a>
            </td>
            <td class="num">{`${hold.amount} ${hold.asset}`}</td>
            <td>
              <Source hold={hold} />
            </td>
            <td>
              <Signals hold={hold} detail={false} />
            </td>
            <td>
              <When at={hold.createdAt} />
            </td>
            {status !== 'held' && (
              <td>
                {hold.decidedBy}, <When at={hold.decidedAt} />: {hold.reason}
              </td>
            )}
            {acting && (
              <td>
                <Actions hold={hold} />
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function payoutsPages(services: Services) {
  const { payouts } = services
  const page = async (request: Request, query: PageQuery, error?: string, status?: number) => {
    const shown = query.status ?? 'held'
    const list = await payouts.list({ status: shown, ...(query.after ? { after: query.after } : {}) })
    return opsPage(request, {
      title: 'Held payouts',
      section: SECTION,
      notice: query.notice,
      error,
      status,
      children: (
        <>
          <p class="muted">
            Payouts kept in escrow because the win that earned them raised an integrity signal: a sign to look at the pair, never proof. See docs/integrity.md for what each
            signal catches and misses.
          </p>
          <nav aria-label="By status" class="row">
            {STATUSES.map((s) => (s === shown ? <strong>{s}</strong> : <a href={`${SECTION}${queryOf({ status: s })}`}>{s}</a>))}
          </nav>
          <HoldsTable holds={list.payouts} status={shown} mayAct={can(request, 'finance')} />
          <Pager next={list.cursor === undefined ? null : `${SECTION}${queryOf({ status: shown, after: list.cursor })}`} first={query.after ? `${SECTION}${queryOf({ status: shown })}` : null} />
        </>
      ),
    })
  }
  const refused = (request: Request) => (error: AppError) => page(request, {}, errorText(error), error.status)

  /** The hold a confirmation page is about, if still held; else the list saying why. */
  async function held(request: Request, id: string): Promise<PayoutHold | Response> {
    const hold = await payouts.get(id)
    return hold.status === 'held' ? hold : page(request, {}, `This payout was ${hold.status} already by ${hold.decidedBy}: there is nothing to decide`, 409)
  }

  const reasonField = (label: string) => (
    <label>
      {label}
      <input name="reason" required minlength={1} maxlength={500} />
    </label>
  )

  return (app: ConsoleApp) =>
    app
      .get('/payouts', ({ request, query }) => page(request, query), { query: PageQuery, ...consoleRoute('viewer') })
      .get(
        '/payouts/:id',
        async ({ request, params }) => {
          const hold = await payouts.get(params.id)
          return opsPage(request, {
            title: `Held payout of ${hold.username}`,
            section: SECTION,
            children: (
              <section aria-labelledby="hold">
                <h2 id="hold">{`${hold.amount} ${hold.asset}, ${KIND_TEXT[hold.kind]}: ${hold.status}`}</h2>
                <dl>
                  <dt>Winner</dt>
                  <dd>
                    <a href={`/console/users/${hold.userId}`}>{hold.username}</a>
                  </dd>
                  <dt>From</dt>
                  <dd>
                    <Source hold={hold} /> (flagged match <span class="mono">{hold.matchId}</span>)
                  </dd>
                  <dt>Signals</dt>
                  <dd>
                    <Signals hold={hold} detail={true} />
                  </dd>
                  <dt>Held</dt>
                  <dd>
                    <When at={hold.createdAt} />
                  </dd>
                  {hold.decidedAt && (
                    <>
                      <dt>Decision</dt>
                      <dd>
                        {hold.status} by {hold.decidedBy}, <When at={hold.decidedAt} />: {hold.reason}
                      </dd>
                    </>
                  )}
                </dl>
                {hold.status === 'held' && can(request, 'finance') && <Actions hold={hold} />}
              </section>
            ),
          })
        },
        { params: IdParams, ...consoleRoute('viewer') },
      )
      .get(
        '/payouts/:id/release',
        async ({ request, params }) => {
          const hold = await held(request, params.id)
          if (hold instanceof Response) return hold
          return confirmPage(request, {
            title: `Release ${hold.amount} ${hold.asset} to ${hold.username}?`,
            section: SECTION,
            consequences: [
              hold.kind === 'stake'
                ? `${hold.username} is paid ${hold.amount} ${hold.asset}, the pot less the rake, and the rake goes to the house, as the match decided.`
                : `${hold.username} is paid the rank ${hold.rank} prize of ${hold.amount} ${hold.asset} from the tournament's escrow.`,
              `${hold.username} gets a wallet.payout_released event.`,
              'The release is recorded in the audit log under your name, with your reason.',
            ],
            action: `${SECTION}/${hold.id}/release`,
            submit: `Release ${hold.amount} ${hold.asset}`,
            back: SECTION,
            fields: reasonField('Reason for releasing'),
          })
        },
        { params: IdParams, ...consoleRoute('finance') },
      )
      .post(
        '/payouts/:id/release',
        ({ request, params, body }) =>
          attempt(async () => {
            await payouts.release(params.id, body.reason, actorOf(request))
            return redirect(SECTION, 'payout_released')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('finance') },
      )
      .get(
        '/payouts/:id/void',
        async ({ request, params }) => {
          const hold = await held(request, params.id)
          if (hold instanceof Response) return hold
          return confirmPage(request, {
            title: `Void the ${KIND_TEXT[hold.kind]} of ${hold.username}?`,
            section: SECTION,
            consequences: [
              hold.kind === 'stake' ? 'Both players get their stake back; no rake is taken; the winner is paid nothing.' : `The prize of ${hold.amount} ${hold.asset} goes to the house; ${hold.username} is paid nothing.`,
              `${hold.username} gets a wallet.payout_voided event with your reason.`,
              'The result and the ratings stay as decided. It cannot be released afterwards.',
            ],
            action: `${SECTION}/${hold.id}/void`,
            submit: 'Void the payout',
            back: SECTION,
            fields: reasonField('Reason for voiding (the winner reads it)'),
          })
        },
        { params: IdParams, ...consoleRoute('finance') },
      )
      .post(
        '/payouts/:id/void',
        ({ request, params, body }) =>
          attempt(async () => {
            await payouts.void(params.id, body.reason, actorOf(request))
            return redirect(SECTION, 'payout_voided')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('finance') },
      )
}
