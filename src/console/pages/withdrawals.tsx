// /console/withdrawals: first the withdrawals waiting for a decision across
// every user (above ARENA_WITHDRAWAL_APPROVAL_ABOVE: awaiting approval; to a
// new address: held until the hold ends), oldest first; then the history of
// every withdrawal in any status, newest first, narrowed by status, user and
// creation dates, a page at a time. A finance operator approves one awaiting
// approval (it is signed, or stays held until its hold ends) or rejects one
// awaiting approval or held, with a reason (the amount goes back to the
// wallet; the hold exists to give the studio that time), each through its
// confirmation page (../confirm.tsx): neither can be taken back.
// WithdrawalService.approve and reject, as the admin API.
import { t } from 'elysia'
import type { Services } from '../../services'
import { HISTORY_PAGE, QUEUE_LIMIT, WITHDRAWAL_STATUSES as STATUSES, withdrawalHistoryQuery, type WithdrawalHistoryPage } from '../../modules/operations/service'
import { AppError } from '../../shared/errors'
import type { WaitingWithdrawal } from '../../modules/operations/store'
import type { WithdrawalStatus } from '../../modules/wallet/store'
import { toWithdrawal } from '../../modules/wallet/withdrawal-view'
import { ConfirmButton, confirmPage } from '../confirm'
import { redirect } from '../http'
import { Pager, queryOf } from '../page'
import { consoleRoute } from '../session'
import { actorOf, attempt, can, errorText, IdParams, opsPage, Reason, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/withdrawals'
/** A day as a date field sends it (UTC). */
const Day = t.Union([t.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }), t.Literal('')])

const PageQuery = t.Object({
  notice: t.Optional(t.String({ maxLength: 200 })),
  status: t.Optional(t.Union([...STATUSES.map((s) => t.Literal(s)), t.Literal('')])),
  user: t.Optional(t.String({ maxLength: 64 })),
  since: t.Optional(Day),
  until: t.Optional(Day),
  before: t.Optional(t.String({ maxLength: 64 })),
})
type PageQuery = typeof PageQuery.static

function QueueActions({ id, who, approvable }: { id: string; who: string; approvable: boolean }) {
  return (
    <div class="actions tight">
      {approvable && <ConfirmButton href={`${SECTION}/${id}/approve`} label="Approve" ariaLabel={`Approve the withdrawal of ${who}`} kind="secondary" />}
      <ConfirmButton href={`${SECTION}/${id}/reject`} label="Reject" ariaLabel={`Reject the withdrawal of ${who}`} />
      {!approvable && <p class="muted">Signs itself when the hold ends, unless rejected first.</p>}
    </div>
  )
}

function QueueTable({ rows, mayAct }: { rows: WaitingWithdrawal[]; mayAct: boolean }) {
  if (rows.length === 0) return <p>No withdrawal is waiting.</p>
  return (
    <table>
      <caption class="muted">
        Oldest first{rows.length === QUEUE_LIMIT ? ` (the first ${QUEUE_LIMIT}: decide some to see the rest)` : ''}.{' '}
        {mayAct ? 'Approving signs it (a held one waits for its hold to end); rejecting, also while held, gives the amount back. Each asks you to confirm.' : 'Approving and rejecting need the finance role.'}
      </caption>
      <thead>
        <tr>
          <th scope="col">User</th>
          <th scope="col" class="num">
            Amount
          </th>
          <th scope="col">Destination</th>
          <th scope="col">Created</th>
          <th scope="col">Waiting for</th>
          {mayAct && <th scope="col">Decision</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map(({ withdrawal, username }) => {
          const view = toWithdrawal(withdrawal)
          return (
            <tr>
              <th scope="row" id={`withdrawal-${view.id}`}>
                <a href={`/console/users/${withdrawal.userId}`}>{username}</a>
              </th>
              <td class="num">{`${view.amount} ${view.asset}`}</td>
              <td class="mono">{view.destinationAddress}</td>
              <td>
                <When at={view.createdAt} />
              </td>
              <td>
                {view.status === 'awaiting_approval' ? 'approval' : 'the hold to end'}
                {view.releasesAt && (
                  <>
                    {' '}
                    (hold ends <When at={view.releasesAt} />)
                  </>
                )}
              </td>
              {mayAct && (
                <td>
                  <QueueActions id={view.id} who={`${view.amount} ${view.asset} by ${username}`} approvable={view.status === 'awaiting_approval'} />
                </td>
              )}
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

/** What a withdrawal's status means, in words. */
const STATUS_TEXT: Record<WithdrawalStatus, string> = {
  awaiting_approval: 'awaiting approval',
  held: 'held (new destination)',
  pending_signature: 'being signed',
  signed: 'signed (sent)',
  failed: 'failed (refunded)',
  rejected: 'rejected (refunded)',
}

function HistoryFilters({ query }: { query: PageQuery }) {
  return (
    <form method="get" action={SECTION} class="row" aria-label="Filter the history">
      <label>
        Status
        <select name="status">
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option value={s} selected={s === query.status}>
              {STATUS_TEXT[s]}
            </option>
          ))}
        </select>
      </label>
      <label>
        User (username or id)
        <input name="user" value={query.user ?? ''} maxlength={64} size={18} />
      </label>
      <label>
        Created from (UTC day)
        <input name="since" type="date" value={query.since ?? ''} />
      </label>
      <label>
        to (UTC day, included)
        <input name="until" type="date" value={query.until ?? ''} />
      </label>
      <button type="submit" class="secondary">
        Show
      </button>
      <a href={`${SECTION}#history`}>Clear</a>
    </form>
  )
}

function HistoryTable({ page, query }: { page: WithdrawalHistoryPage; query: PageQuery }) {
  const filters = { status: query.status, user: query.user, since: query.since, until: query.until }
  const filtered = Object.values(filters).some((v) => v !== undefined && v !== '')
  if (page.unknownUser) return <p>No user is named or numbered “{query.user}”.</p>
  if (page.rows.length === 0) return <p>{query.before ? 'No older withdrawal.' : filtered ? 'No withdrawal matches.' : 'No withdrawal yet.'}</p>
  return (
    <>
      <table>
        <caption class="muted">{`Newest first, ${HISTORY_PAGE} a page${filtered ? ', filtered' : ''}.`}</caption>
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col">Destination</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Last change</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {page.rows.map(({ withdrawal, username }) => {
            const view = toWithdrawal(withdrawal)
            return (
              <tr>
                <th scope="row">
                  <a href={`/console/users/${withdrawal.userId}`}>{username}</a>
                </th>
                <td class="num">{`${view.amount} ${view.asset}`}</td>
                <td class="mono">{view.destinationAddress}</td>
                <td>{STATUS_TEXT[withdrawal.status]}</td>
                <td>
                  <When at={withdrawal.createdAt} />
                </td>
                <td>
                  <When at={withdrawal.updatedAt} />
                </td>
                <td>{withdrawal.rejectionReason ?? withdrawal.failureReason ?? (withdrawal.approvedAt ? <>approved <When at={withdrawal.approvedAt} /></> : <span class="muted">—</span>)}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <Pager next={page.cursor === null ? null : `${SECTION}${queryOf({ ...filters, before: page.cursor })}#history`} first={query.before ? `${SECTION}${queryOf(filters)}#history` : null} />
    </>
  )
}

export function withdrawalsPages(services: Services) {
  const { operations, withdrawals } = services
  const page = async (request: Request, query: PageQuery, error?: string, status?: number) => {
    const [queue, history] = await Promise.all([
      operations.waitingWithdrawals(),
      operations.withdrawalHistory({
        ...withdrawalHistoryQuery({ status: query.status, user: query.user, from: query.since, to: query.until }, { status: 'query/status', from: 'query/since', to: 'query/until' }),
        before: query.before,
      }),
    ])
    return opsPage(request, {
      title: 'Withdrawals',
      section: SECTION,
      notice: query.notice,
      error,
      status,
      children: (
        <>
          <section aria-labelledby="waiting">
            <h2 id="waiting">Waiting for a decision</h2>
            <QueueTable rows={queue} mayAct={can(request, 'finance')} />
          </section>
          <section aria-labelledby="history">
            <h2 id="history">History</h2>
            <p class="muted">Every withdrawal, whatever became of it: filter by status, user or the day it was asked for.</p>
            <HistoryFilters query={query} />
            <HistoryTable page={history} query={query} />
          </section>
        </>
      ),
    })
  }
  const refused = (request: Request) => (error: AppError) => page(request, {}, errorText(error), error.status)

  /** The withdrawal a confirmation page is about, if it still waits for a decision of this kind; else the list saying why. */
  async function waiting(request: Request, id: string, kind: 'approve' | 'reject'): Promise<WaitingWithdrawal | Response> {
    const found = await operations.withdrawal(id)
    if (found === null) throw new AppError('not_found', 'No such withdrawal')
    const { status } = found.withdrawal
    const ok = kind === 'approve' ? status === 'awaiting_approval' : status === 'awaiting_approval' || status === 'held'
    return ok ? found : page(request, {}, `This withdrawal is ${STATUS_TEXT[status]}: there is nothing to ${kind}`, 409)
  }

  return (app: ConsoleApp) =>
    app
      .get('/withdrawals', ({ request, query }) => page(request, query), { query: PageQuery, ...consoleRoute('viewer') })
      .get(
        '/withdrawals/:id/approve',
        async ({ request, params }) => {
          const found = await waiting(request, params.id, 'approve')
          if (found instanceof Response) return found
          const view = toWithdrawal(found.withdrawal)
          const signed = `${view.amount} ${view.asset} leaves custody for ${view.destinationAddress}. A signed withdrawal cannot be called back.`
          return confirmPage(request, {
            title: `Approve ${view.amount} ${view.asset} to ${found.username}?`,
            section: SECTION,
            consequences: [
              view.releasesAt === undefined ? (
                `It is signed now: ${signed}`
              ) : (
                <>
                  It is the first withdrawal to this address: until its hold ends (<When at={view.releasesAt} />) it stays held, and can still be rejected; then, or now if the hold is over, it is signed: {signed}
                </>
              ),
              `${found.username} gets a wallet.withdrawal_approved event.`,
              'The approval is recorded in the audit log under your name.',
            ],
            action: `${SECTION}/${view.id}/approve`,
            submit: `Approve ${view.amount} ${view.asset}`,
            back: SECTION,
          })
        },
        { params: IdParams, ...consoleRoute('finance') },
      )
      .post(
        '/withdrawals/:id/approve',
        ({ request, params }) =>
          attempt(async () => {
            const withdrawal = await withdrawals.approve(params.id, actorOf(request))
            return redirect(SECTION, withdrawal.status === 'held' ? 'withdrawal_approved_held' : 'withdrawal_approved')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }) }), ...consoleRoute('finance') },
      )
      .get(
        '/withdrawals/:id/reject',
        async ({ request, params }) => {
          const found = await waiting(request, params.id, 'reject')
          if (found instanceof Response) return found
          const view = toWithdrawal(found.withdrawal)
          return confirmPage(request, {
            title: `Reject ${view.amount} ${view.asset} of ${found.username}?`,
            section: SECTION,
            consequences: [
              `${view.amount} ${view.asset} goes back to ${found.username}'s wallet at once; nothing is sent to ${view.destinationAddress}.`,
              `${found.username} gets a wallet.withdrawal_rejected event with your reason.`,
              'It cannot be approved afterwards: the player asks for a new withdrawal if they still want one.',
            ],
            action: `${SECTION}/${view.id}/reject`,
            submit: 'Reject the withdrawal',
            back: SECTION,
            fields: (
              <label>
                Reason for rejecting (the player reads it)
                <input name="reason" required minlength={1} maxlength={500} />
              </label>
            ),
          })
        },
        { params: IdParams, ...consoleRoute('finance') },
      )
      .post(
        '/withdrawals/:id/reject',
        ({ request, params, body }) =>
          attempt(async () => {
            await withdrawals.reject(params.id, body.reason, actorOf(request))
            return redirect(SECTION, 'withdrawal_rejected')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('finance') },
      )
}
