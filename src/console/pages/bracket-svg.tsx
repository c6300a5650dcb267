// The bracket of an elimination tournament as a picture: inline SVG drawn on
// the server from layoutBracket (../bracket-layout.ts). No script, no
// external file: the console's CSP allows neither, and none is needed. The
// picture is an image with a title for assistive technology; the match table
// under it carries the same facts as text.
import type { Match } from '../../modules/games/model'
import { BOX_HEIGHT, BOX_WIDTH, layoutBracket } from '../bracket-layout'

export interface Seat {
  name: string
  seed: number
}

const COLORS = { box: '#ffffff', line: '#8a96a3', text: '#1b1f24', muted: '#5b6470', winnerFill: '#e3f2e8', winnerText: '#17663a', disputed: '#a3191b', running: '#0b5cad' }

/** A short name for a match: W2 #1, L3 #2, Final (a winners match leading nowhere: single elimination's last), Grand final, Third place. */
export function matchLabel(match: Pick<Match, 'bracket' | 'round' | 'position'> & { nextMatchId?: string | null }): string {
  switch (match.bracket) {
    case 'winners':
      return match.nextMatchId === null ? 'Final' : `W${match.round} #${match.position}`
    case 'losers':
      return `L${match.round} #${match.position}`
    case 'grand_final':
      return match.round === 1 ? 'Grand final' : `Grand final ${match.round}`
    case 'third_place':
      return 'Third place'
    default:
      // The brackets of the formats that play by rounds, not a tree.
      return `Round ${match.round} #${match.position}`
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

function SlotLine({ match, slot, seats, x, y }: { match: Match; slot: 1 | 2; seats: Map<string, Seat>; x: number; y: number }) {
  const participantId = slot === 1 ? match.slot1ParticipantId : match.slot2ParticipantId
  const other = slot === 1 ? match.slot2ParticipantId : match.slot1ParticipantId
  const seat = participantId === null ? null : seats.get(participantId)
  const won = participantId !== null && match.winnerParticipantId === participantId
  // An empty slot of a decided match was a bye; of an open one, a player still to come.
  const empty = match.status === 'decided' && other !== null ? 'bye' : 'to be decided'
  const rowY = y + (slot === 1 ? 0 : BOX_HEIGHT / 2)
  return (
    <g>
      {won && <rect x={x + 1} y={rowY + 1} width={BOX_WIDTH - 2} height={BOX_HEIGHT / 2 - 1} fill={COLORS.winnerFill} />}
      <text x={x + 8} y={rowY + 17} font-size="12" fill={seat ? (won ? COLORS.winnerText : COLORS.text) : COLORS.muted} font-weight={won ? 'bold' : 'normal'} font-style={seat ? 'normal' : 'italic'}>
        {seat ? `${seat.seed}. ${truncate(seat.name, 17)}` : empty}
      </text>
      {won && (
        <text x={x + BOX_WIDTH - 8} y={rowY + 17} font-size="11" text-anchor="end" fill={COLORS.winnerText} font-weight="bold">
          won
        </text>
      )}
    </g>
  )
}

export function BracketPicture({ title, matches, seats }: { title: string; matches: Match[]; seats: Map<string, Seat> }) {
  const layout = layoutBracket(matches)
  const decided = matches.filter((m) => m.status === 'decided').length
  return (
    <div class="bracket">
      <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="bracket-title bracket-desc" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} font-family="system-ui, sans-serif">
        <title id="bracket-title">{title}</title>
        <desc id="bracket-desc">{`${matches.length} matches, ${decided} decided. The match table below lists every match as text.`}</desc>
        {layout.labels.map((label) => (
          <text x={label.x} y={label.y} font-size="14" font-weight="bold" fill={COLORS.text}>
            {label.text}
          </text>
        ))}
        {layout.connectors.map((c) => (
          <polyline points={c.points.map(([x, y]) => `${x},${y}`).join(' ')} fill="none" stroke={COLORS.line} stroke-width="1.5" />
        ))}
        {layout.boxes.map(({ match, x, y }) => {
          const border = match.status === 'disputed' ? COLORS.disputed : match.status === 'running' ? COLORS.running : COLORS.line
          return (
            <g>
              <text x={x} y={y - 4} font-size="10" fill={match.status === 'disputed' ? COLORS.disputed : COLORS.muted}>
                {`${matchLabel(match)} · ${match.status}`}
              </text>
              <rect x={x} y={y} width={BOX_WIDTH} height={BOX_HEIGHT} rx="3" fill={COLORS.box} stroke={border} stroke-width={match.status === 'disputed' || match.status === 'running' ? 2 : 1} />
              <SlotLine match={match} slot={1} seats={seats} x={x} y={y} />
              <line x1={x} y1={y + BOX_HEIGHT / 2} x2={x + BOX_WIDTH} y2={y + BOX_HEIGHT / 2} stroke={COLORS.line} stroke-width="0.5" />
              <SlotLine match={match} slot={2} seats={seats} x={x} y={y} />
            </g>
          )
        })}
      </svg>
    </div>
  )
}
