// The notices a console form leaves for the next page (post/redirect/get).
// The URL carries a code, never a sentence: a link to
// `/console/users?notice=Your session expired, sign in again at https://…`
// would otherwise show anyone's words in the console's own success banner (a
// phishing aid; issue 33). Each code has one fixed text, written here; a code
// that is not listed shows nothing.
import { PASSWORD_STEP_TTL_MS } from '../modules/operators/sessions'

export const NOTICES = {
  signed_in: 'Signed in',
  signed_out: 'Signed out',
  password_chosen: 'Your new password is set: sign in with it from now on',
  password_step_ended: `The step to choose a new password has ended (it lasts ${PASSWORD_STEP_TTL_MS / 60_000} minutes, and ends once a password is chosen): sign in again`,
  own_session_ended: 'Your session has ended',
  session_ended: 'The session has ended',
  totp_enabled: 'Authenticator set up: signing in now asks for its code',
  totp_disabled: 'Authenticator turned off: signing in asks for your password only',
  operator_disabled: 'The operator is disabled: its sessions have ended',
  operator_enabled: 'The operator is enabled: it may sign in again',
  operator_role_changed: 'The operator has the new role now',
  operator_totp_reset: 'The operator signs in without an authenticator code now',
  user_banned: 'The user is banned: the ban is shown below',
  user_unbanned: "The user's ban is lifted",
  identity_unlinked: 'Unlinked the identity: the user can no longer sign in with it',
  pin_unlocked: 'The PIN lock is lifted: its failures and doubling are forgotten',
  pin_nothing_to_lift: 'The PIN had nothing to lift: nothing was changed',
  withdrawal_approved: 'Approved the withdrawal: it is being sent',
  withdrawal_approved_held: 'Approved the withdrawal: held until its hold ends',
  withdrawal_rejected: 'Rejected the withdrawal: the amount is back in the wallet',
  payout_released: 'Released the payout: the winner is paid',
  payout_voided: 'Voided the payout: the stakes are back with both players, or the prize with the house',
  dispute_resolved: 'Resolved the dispute: the winner moves on',
  game_created: 'Created the game: copy its key below now',
  game_key_rotated: 'Rotated the key: the old key no longer works',
  queue_created: 'Opened the queue: players may join it now',
  queue_updated: 'Saved the queue: tickets waiting keep their place, matches made keep their terms',
  queue_closed: 'Closed the queue: its waiting tickets are cancelled, its players told',
  game_results_set: "Set who reports the game's results: from the next claim or server result",
  game_server_added: 'Added the game server: results signed with its key decide matches',
  game_server_rotated: "Rotated the game server's key: the old key no longer works",
  game_server_disabled: 'Disabled the game server: its results are refused from now on',
  webhook_created: 'Added the webhook endpoint: copy its signing secret below now',
  webhook_saved: 'Saved the webhook endpoint: deliveries queued from now on follow it',
  webhook_enabled: 'Enabled the webhook endpoint: its waiting deliveries are sent again',
  webhook_disabled: 'Disabled the webhook endpoint: nothing is sent to it until it is enabled',
  webhook_secret_rotated: 'Rotated the signing secret: copy the new one below now; the old one signs beside it for 24 hours',
  webhook_deleted: 'Deleted the webhook endpoint with its deliveries',
  webhook_delivery_resent: 'The delivery is queued again: it is sent shortly, with the same webhook-id',
  challenge_rake_set: "Set the game's challenge rake: challenges accepted from now on take it",
  match_cancelled: 'Cancelled the match: both stakes are back in the wallets, both players told',
  season_scheduled: 'Scheduled the season: it starts by itself at its start time, resetting every rating of the game',
  tournament_created: 'Created the tournament',
  tournament_started: 'Started: the first matches are open',
  tournament_cancelled: 'Cancelled: every participant is told why',
  tournament_funded: 'Funded: the amount is in the prize escrow',
  participant_disqualified: 'Disqualified: their match goes to the opponent',
  match_corrected: 'Corrected the result',
} as const

export type NoticeCode = keyof typeof NOTICES

/** The fixed text of a notice code from a URL; null for no code or one that is not listed. */
export function noticeText(code: string | null | undefined): string | null {
  if (code === null || code === undefined || !Object.hasOwn(NOTICES, code)) return null
  return NOTICES[code as NoticeCode]
}
