// GET /console: what needs an operator now, one card per number, each a link
// to the page that deals with it. Counts only (cheap queries: see
// src/modules/operations/store.ts), and whether the two hash chains held when
// last walked (src/modules/operations/chain-checks.ts: walked again when that
// result is over five minutes old). And this instance's event sockets: how
// many are open and why the others closed since it started (the hub's own
// counts, src/modules/realtime/hub.ts: no query).
import type { Services } from '../../services'
import { QUEUE_LIMIT, type ChainState, type Dashboard } from '../../modules/operations/service'
import type { ChainCheck, ChainName } from '../../modules/operations/chain-checks'
import type { SocketStats } from '../../modules/realtime/hub'
import type { CloseReason } from '../../modules/realtime/socket'
import { BrokenChainAdvice } from '../page'
import { consoleRoute } from '../session'
import { formatBytes, NoticeQuery, opsPage, When, type ConsoleApp } from './ops-kit'

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

/**
 * A chain's card: "verified" or "broken" in a word, when the walk that said
 * so ran, what to do when broken, and the recorded head's hash folded away
 * (it means something to an auditor comparing copies, nothing at a glance).
 */
function ChainCard({ chain, label, head, check, verifyHref }: { chain: ChainName; label: string; head: ChainState; check: ChainCheck | null; verifyHref: string }) {
  const result = check?.result
  const word = result === undefined ? 'checking…' : result.ok ? 'verified' : 'broken'
  return (
    <li class={`card chain-card ${result === undefined ? 'checking' : result.ok ? 'verified' : 'broken'}`}>
      <span class={`value ${result === undefined ? 'muted' : result.ok ? 'ok' : 'bad'}`}>{word}</span>
      <br />
      <span class="label">{label}</span>
      <span class="detail">
        {check === null || result === undefined ? (
          'A first walk of the chain is under way: reload in a moment.'
        ) : result.ok ? (
          <>
            {`${result.rows} records, none edited, removed or reordered; checked `}
            <When at={check.checkedAt} />
            {' UTC.'}
          </>
        ) : (
          <>
            {`At record ${result.brokenAt}: ${result.reason}. Checked `}
            <When at={check.checkedAt} />
            {' UTC. '}
            <BrokenChainAdvice chain={chain} />
          </>
        )}
      </span>
      <details class="hashes">
        <summary>Recorded head</summary>
        {head.hash === null ? <span class="muted">empty: no record yet</span> : <code>{`record ${head.seq}: ${head.hash}`}</code>}
      </details>
      <a href={verifyHref}>Check again</a>
    </li>
  )
}

/** Why sockets closed, in an operator's words, with the code a client saw. */
const CLOSE_WORDS: Record<CloseReason, string> = {
  client: 'closed by the client',
  session_ended: 'session ended (4001)',
  slow_consumer: 'too slow (4008)',
  too_many: 'over a limit (4029)',
  restart: 'server stopping (1012)',
  error: 'could not read (1011)',
  policy: 'broke the protocol (1008)',
}

/** The realtime plane on this instance: sockets open, and the closes since start by reason (only the reasons that happened). */
function SocketsCard({ stats }: { stats: SocketStats }) {
  const closes = (Object.keys(CLOSE_WORDS) as CloseReason[]).filter((reason) => stats.closes[reason] > 0)
  return (
    <li class="card sockets-card">
      <span class="value">{stats.open}</span>
      <br />
      <span class="label">event sockets open on this instance</span>
      <span class="detail">
        {closes.length === 0 ? (
          'No socket closed since this instance started.'
        ) : (
          <>
            {'Closed since this instance started: '}
            {closes.map((reason, i) => `${i > 0 ? ', ' : ''}${stats.closes[reason]} ${CLOSE_WORDS[reason]}`).join('')}
            {'.'}
          </>
        )}
      </span>
    </li>
  )
}

/** Matchmaking now: tickets waiting in every open queue, and matches holding stakes (counted up to QUEUE_LIMIT + 1: "200+"). */
export interface MatchmakingNow {
  ticketsWaiting: number
  stakesHeld: number
  /** Payouts held for review by integrity signals (docs/integrity.md). */
  payoutsHeld: number
}

export function DashboardCards({ d, sockets, matchmaking }: { d: Dashboard; sockets: SocketStats; matchmaking: MatchmakingNow }) {
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
        <Card href="/console/payouts" value={matchmaking.payoutsHeld} label="payouts held for review" alert={matchmaking.payoutsHeld > 0} />
        <Card href="/console/games" value={matchmaking.ticketsWaiting} label="tickets waiting in queues" />
        <Card href="/console/matchmaking#stakes-held" value={matchmaking.stakesHeld > QUEUE_LIMIT ? `${QUEUE_LIMIT}+` : matchmaking.stakesHeld} label="matches holding stakes" />
      </ul>
      <h2 id="system">System</h2>
      <ul class="cards" aria-labelledby="system">
        <ChainCard chain="security" label="security-event chain" head={d.securityChain} check={d.securityCheck} verifyHref="/console/security?verify=1" />
        <ChainCard chain="audit" label="audit chain (operator actions)" head={d.auditChain} check={d.auditCheck} verifyHref="/console/audit?verify=1" />
        <Card value={formatBytes(d.databaseBytes)} label={`database size (${d.engine === 'sqlite' ? 'SQLite file' : 'PostgreSQL database'})`} />
        <SocketsCard stats={sockets} />
      </ul>
    </>
  )
}

export function dashboardPage(services: Services) {
  return (app: ConsoleApp) =>
    app.get(
      '',
      async ({ request, query }) => {
        const read = services.storage.read.matchmaking
        const [dashboard, waiting, held, payoutsHeld] = await Promise.all([services.operations.dashboard(), read.countOpenTickets(), read.stakesHeld(QUEUE_LIMIT + 1), services.storage.read.payouts.heldCount()])
        const matchmaking = { ticketsWaiting: waiting.reduce((sum, q) => sum + q.open, 0), stakesHeld: held.length, payoutsHeld }
        return opsPage(request, { title: 'Dashboard', section: '/console', notice: query.notice, children: <DashboardCards d={dashboard} sockets={services.sockets.stats()} matchmaking={matchmaking} /> })
      },
      { query: NoticeQuery, ...consoleRoute('viewer') },
    )
}
