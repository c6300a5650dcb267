// The audit log (viewer): every operator action, newest first, with who did
// it (name and role), through what (api, console, cli), to what, why, and the
// request it came in; the chain's state on demand.
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'
import { auditView } from '../../modules/audit/log'
import { ChainState, consolePage, Details, Named, NOTICE_FIELDS, Pager, queryOf, seesOperators, Time } from '../page'
import { consoleRoute } from '../session'

const SECTION = '/console/audit'
const PAGE = 50

export function auditPages(services: Services) {
  const { storage, operations, chainChecks } = services
  return (app: Elysia<'/console'>) =>
    app.get(
      '/audit',
      async ({ request, query }) => {
        const before = query.before ?? null
        const [rows, chain] = await Promise.all([storage.read.audit.auditBefore(before, PAGE), query.verify === '1' ? chainChecks.check('audit') : null])
        const records = rows.map((row) => ({ ...auditView(row), seq: row.seq }))
        const names = await operations.namesOf(records.map((r) => r.target))
        const operatorsPage = seesOperators(request)
        const older = rows.length === PAGE ? `${SECTION}${queryOf({ before: rows.at(-1)!.seq })}` : null
        return consolePage(request, { title: 'Audit log', section: SECTION, query }, (
          <>
            <ChainState label="Audit chain" chain="audit" check={chain} verifyHref={`${SECTION}${queryOf({ before, verify: 1 })}`} />
            <table>
              <caption class="muted">Every operator action, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Operator</th>
                  <th scope="col">Role</th>
                  <th scope="col">Via</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Details</th>
                  <th scope="col">Request</th>
                </tr>
              </thead>
              <tbody>
                {records.length === 0 && (
                  <tr>
                    <td colSpan={9} class="muted">
                      {before === null ? 'No operator has acted yet.' : 'No older records.'}
                    </td>
                  </tr>
                )}
                {records.map((r) => (
                  <tr id={`seq-${r.seq}`}>
                    <td>
                      <Time iso={r.at} />
                    </td>
                    <td>
                      {r.operator.id === null ? (
                        r.operator.name
                      ) : operatorsPage ? (
                        <a href="/console/operators" title={r.operator.id}>
                          {r.operator.name}
                        </a>
                      ) : (
                        <span title={r.operator.id}>{r.operator.name}</span>
                      )}
                    </td>
                    <td>{r.operator.role}</td>
                    <td>{r.via}</td>
                    <td>
                      <code class="name">{r.action}</code>
                    </td>
                    <td>
                      <Named id={r.target} names={names} operatorsPage={operatorsPage} />
                    </td>
                    <td>{r.reason ?? <span class="muted">—</span>}</td>
                    <td>
                      <Details value={r.details} />
                    </td>
                    <td class="mono">{r.requestId ?? <span class="muted">—</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pager next={older} first={before === null ? null : SECTION} />
          </>
        ))
      },
      {
        query: t.Object({ before: t.Optional(t.Numeric({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, multipleOf: 1 })), verify: t.Optional(t.Literal('1')), ...NOTICE_FIELDS }),
        ...consoleRoute('viewer'),
      },
    )
}
