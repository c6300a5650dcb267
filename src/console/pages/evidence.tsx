// Evidence for disputes in the console (contract §17): the files a match's
// players attached, listed on its page (/console/matches/:id) and counted on
// the disputes page, each downloaded from /console/evidence/:id (viewer) as
// the admin API's GET /admin/evidence/{id} answers it: an attachment,
// nosniff, sandboxed, never shown inline. Images are linked, not embedded:
// nothing a player uploaded is rendered in the console's own pages.
import type { Services } from '../../services'
import type { MatchEvidence } from '../../modules/evidence/model'
import { downloadResponse } from '../../modules/evidence/service'
import { Time } from '../page'
import { consoleRoute } from '../session'
import { formatBytes, IdParams, type ConsoleApp } from './ops-kit'

export const evidencePath = (id: string) => `/console/evidence/${encodeURIComponent(id)}`

/** A match's files, oldest first, each with its download link. */
export function EvidenceList({ evidence, players }: { evidence: MatchEvidence[]; players: { participantId: string; username: string }[] }) {
  if (evidence.length === 0) return <p class="muted">No evidence attached.</p>
  const who = (participantId: string) => players.find((p) => p.participantId === participantId)?.username ?? participantId
  return (
    <table>
      <caption class="muted">Files the players attached to the dispute, oldest first. A download is saved as a file, never opened here.</caption>
      <thead>
        <tr>
          <th scope="col">From</th>
          <th scope="col">Type</th>
          <th scope="col">Size</th>
          <th scope="col">Attached</th>
          <th scope="col">SHA-256</th>
          <th scope="col">File</th>
        </tr>
      </thead>
      <tbody>
        {evidence.map((e) => (
          <tr>
            <td>{who(e.participantId)}</td>
            <td>{e.type}</td>
            <td>{formatBytes(e.size)}</td>
            <td>
              <Time iso={e.createdAt} />
            </td>
            <td class="mono" title={e.sha256}>
              {e.sha256.slice(0, 16)}…
            </td>
            <td>
              <a href={evidencePath(e.id)} download>
                download
              </a>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export function evidencePages(services: Services) {
  return (app: ConsoleApp) =>
    app.get('/evidence/:id', async ({ params }) => downloadResponse(await services.evidence.download(params.id)), { params: IdParams, ...consoleRoute('viewer') })
}
