// Security events (viewer): the tamper-evident log of what happened to
// accounts (logins, bans, PIN failures, reports), newest first, and on demand
// the state of both hash chains: this log's and the audit log's (a check the
// dashboard then shows too).
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'
import { ChainState, consolePage, Details, Named, NOTICE_FIELDS, Pager, queryOf, Time } from '../page'
import { consoleRoute } from '../session'

const SECTION = '/console/security'
const PAGE = 50

export function securityPages(services: Services) {
  const { securityLog, chainChecks, operations } = services
  return (app: Elysia<'/console'>) =>
    app.get(
      '/security',
      async ({ request, query }) => {
        const before = query.before ?? null
        const verifying = query.verify === '1'
        const [page, securityChain, auditChain] = await Promise.all([
          securityLog.newest(before, PAGE),
          verifying ? chainChecks.check('security') : null,
          verifying ? chainChecks.check('audit') : null,
        ])
        const stats = securityLog.stats()
        const names = await operations.namesOf(page.events.map((e) => e.userId))
        const verifyHref = `${SECTION}${queryOf({ before, verify: 1 })}`
        return consolePage(request, { title: 'Security events', section: SECTION, query }, (
          <>
            <ChainState label="Security-event chain" chain="security" check={securityChain} verifyHref={verifyHref} />
            <ChainState label="Audit chain" chain="audit" check={auditChain} verifyHref={verifyHref} />
            <p class="muted">
              {`Waiting to be written: ${stats.buffered}. Shed since start (buffer full): ${stats.shed}.`}
            </p>
            <table>
              <caption class="muted">Stored events, newest first (events are written in batches, within a second)</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    #
                  </th>
                  <th scope="col">Received</th>
                  <th scope="col">Level</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Source</th>
                  <th scope="col">User</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {page.events.length === 0 && (
                  <tr>
                    <td colSpan={7} class="muted">
                      {before === null ? 'No events yet.' : 'No older events.'}
                    </td>
                  </tr>
                )}
                {page.events.map((e) => (
                  <tr>
                    <td class="num">{e.seq}</td>
                    <td>
                      <Time iso={e.receivedAt} />
                    </td>
                    <td class={e.level === 'SAFE' ? 'ok' : e.level === 'WARN' ? '' : 'bad'}>{e.level}</td>
                    <td>
                      <code class="name">{e.kind}</code>
                    </td>
                    <td>{e.source}</td>
                    <td>
                      <Named id={e.userId} names={names} />
                    </td>
                    <td>
                      <Details value={e.details} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager next={page.before === null ? null : `${SECTION}${queryOf({ before: page.before })}`} first={before === null ? null : SECTION} />
          </>
        ))
      },
      {
        query: t.Object({ before: t.Optional(t.Numeric({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, multipleOf: 1 })), verify: t.Optional(t.Literal('1')), ...NOTICE_FIELDS }),
        ...consoleRoute('viewer'),
      },
    )
}
