// GET /console: what needs an operator now, one card per number, each a link
// to the page that deals with it. Counts only (cheap queries: see
// src/modules/operations/store.ts); the chains show their recorded heads, a
// full verification is the security page's.
import type { Services } from '../../services'
import type { ChainState, Dashboard } from '../../modules/operations/service'
import { consoleRoute } from '../session'
import { formatBytes, NoticeQuery, opsPage, type ConsoleApp } from './ops-kit'

/** One number; a link to the page that deals with it (`href`), or plain when no page does. */
function Card({ href, value, label, alert, detail }: { href?: string; value: string | number; label: string; alert?: boolean; detail?: string }) {
  const content = (
    <>
      <span class={alert ? 'value bad' : 'value'}>{value}</span>
      <br />
      <span class="label">{label}</span>
      {detail && <span class="detail mono">{detail}</span>}
    </>
  )
  return <li class="card">{href ? <a href={href}>{content}</a> : content}</li>
}

function chainValue(chain: ChainState): string {
  return chain.hash === null ? 'empty' : `${chain.seq} records`
}

function chainHead(chain: ChainState): string | undefined {
  return chain.hash === null ? undefined : `head ${chain.hash.slice(0, 16)}…`
}

export function DashboardCards({ d }: { d: Dashboard }) {
  return (
    <>
      <h2 id="now">Now</h2>
      <ul class="cards" aria-labelledby="now">
        <Card href="/console/users" value={d.players} label="players (accounts not deleted)" />
        <Card href="/console/tournaments?status=running" value={d.runningTournaments} label="tournaments running or paying out" />
        <Card href="/console/tournaments?status=running" value={d.liveMatches} label="live matches (running)" />
        <Card href="/console/disputes" value={d.disputedMatches} label="disputes waiting" alert={d.disputedMatches > 0} />
        <Card href="/console/withdrawals" value={d.withdrawalsAwaitingApproval} label="withdrawals awaiting approval" alert={d.withdrawalsAwaitingApproval > 0} />
        <Card href="/console/withdrawals" value={d.withdrawalsHeld} label="withdrawals held (new address)" />
      </ul>
      <h2 id="system">System</h2>
      <ul class="cards" aria-labelledby="system">
        <Card href="/console/security" value={chainValue(d.securityChain)} label="security-event chain (recorded head; verify it on the security page)" detail={chainHead(d.securityChain)} />
        <Card href="/console/audit" value={chainValue(d.auditChain)} label="audit chain (recorded head)" detail={chainHead(d.auditChain)} />
        <Card value={formatBytes(d.databaseBytes)} label={`database size (${d.engine === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'})`} />
      </ul>
    </>
  )
}

export function dashboardPage(services: Services) {
  return (app: ConsoleApp) =>
    app.get(
      '',
      async ({ request, query }) => {
        const dashboard = await services.operations.dashboard()
        return opsPage(request, { title: 'Dashboard', section: '/console', notice: query.notice, children: <DashboardCards d={dashboard} /> })
      },
      { query: NoticeQuery, ...consoleRoute('viewer') },
    )
}
