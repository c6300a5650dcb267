// /console/withdrawals: withdrawals waiting for a decision across every user
// (above ARENA_WITHDRAWAL_APPROVAL_ABOVE: awaiting approval; to a new address:
// held until the hold ends), oldest first. A finance operator approves one
// awaiting approval (it is signed, or stays held until its hold ends) or
// rejects one awaiting approval or held, with a reason (the amount goes back
// to the wallet; the hold exists to give the studio that time):
// WithdrawalService.approve and reject, as the admin API.
import { t } from 'elysia'
import type { Services } from '../../services'
import { QUEUE_LIMIT } from '../../modules/operations/service'
import type { AppError } from '../../shared/errors'
import type { WaitingWithdrawal } from '../../modules/operations/store'
import { toWithdrawal } from '../../modules/wallet/withdrawals'
import { Csrf } from '../layout'
import { redirect } from '../http'
import { consoleRoute, consoleSession } from '../session'
import { actorOf, attempt, can, errorText, IdParams, NoticeQuery, opsPage, Reason, When, type ConsoleApp } from './ops-kit'

const SECTION = '/console/withdrawals'

function Actions({ id, csrf, who, approvable }: { id: string; csrf: string; who: string; approvable: boolean }) {
  return (
    <>
      {approvable && (
        <form method="post" action={`/console/withdrawals/${id}/approve`} class="inline">
          <Csrf token={csrf} />
          <button type="submit" aria-describedby={`withdrawal-${id}`}>
            Approve
          </button>
        </form>
      )}
      {!approvable && <p class="muted">Signs itself when the hold ends, unless rejected first.</p>}
      <form method="post" action={`/console/withdrawals/${id}/reject`} class="row">
        <Csrf token={csrf} />
        <label>
          Reason for rejecting <span class="sr-only">{`the withdrawal of ${who}`}</span>
          <input name="reason" required minlength={1} maxlength={500} />
        </label>
        <button type="submit" class="danger">
          Reject
        </button>
      </form>
    </>
  )
}

function WithdrawalsTable({ rows, csrf, mayAct }: { rows: WaitingWithdrawal[]; csrf: string; mayAct: boolean }) {
  if (rows.length === 0) return <p>No withdrawal is waiting.</p>
  return (
    <table>
      <caption class="muted">
        Oldest first{rows.length === QUEUE_LIMIT ? ` (the first ${QUEUE_LIMIT}: decide some to see the rest)` : ''}. {mayAct ? 'Approving signs it (a held one waits for its hold to end); rejecting, also while held, gives the amount back.' : 'Approving and rejecting need the finance role.'}</caption>
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
                  <Actions id={view.id} csrf={csrf} who={`${view.amount} ${view.asset} by ${username}`} approvable={view.status === 'awaiting_approval'} />
                </td>
              )}
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

export function withdrawalsPages(services: Services) {
  const page = async (request: Request, notice: string | null | undefined, error?: string, status?: number) =>
    opsPage(request, {
      title: 'Withdrawals',
      section: SECTION,
      notice,
      error,
      status,
      children: <WithdrawalsTable rows={await services.operations.waitingWithdrawals()} csrf={consoleSession(request).csrf} mayAct={can(request, 'finance')} />,
    })
  const refused = (request: Request) => (error: AppError) => page(request, null, errorText(error), error.status)
  return (app: ConsoleApp) =>
    app
      .get('/withdrawals', ({ request, query }) => page(request, query.notice), { query: NoticeQuery, ...consoleRoute('viewer') })
      .post(
        '/withdrawals/:id/approve',
        ({ request, params }) =>
          attempt(async () => {
            const withdrawal = await services.withdrawals.approve(params.id, actorOf(request))
            return redirect(SECTION, withdrawal.status === 'held' ? 'withdrawal_approved_held' : 'withdrawal_approved')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }) }), ...consoleRoute('finance') },
      )
      .post(
        '/withdrawals/:id/reject',
        ({ request, params, body }) =>
          attempt(async () => {
            await services.withdrawals.reject(params.id, body.reason, actorOf(request))
            return redirect(SECTION, 'withdrawal_rejected')
          }, refused(request)),
        { params: IdParams, body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: Reason }), ...consoleRoute('finance') },
      )
}
