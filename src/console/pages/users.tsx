// Users (viewer): search every account, read one in full (the account, the
// ways it signs in, its sessions, wallet and ledger, its ban, its PIN), for a
// moderator, ban and unban and unlink an identity, and for finance, lift a PIN lock.
// The same services as the admin API's user routes (src/modules/admin/users.ts).
import { Elysia, t } from 'elysia'
import type { Services } from '../../services'
import { AppError } from '../../shared/errors'
import { isId } from '../../shared/ids'
import { USERS_PAGE_DEFAULT } from '../../modules/auth/user-directory'
import { roleAllows } from '../../modules/operators/roles'
import { redirect } from '../http'
import { Csrf } from '../layout'
import { attempt, consolePage, NOTICE_FIELDS, Pager, queryOf, Time } from '../page'
import { consoleRoute, consoleSession } from '../session'
import { ConfirmButton, confirmPage } from '../confirm'
import { UserRatingsSection, userRatingsOf } from './game-ratings'

const SECTION = '/console/users'
const LEDGER_PAGE = 25

type UserDetail = Awaited<ReturnType<Services['users']['detail']>>
type Ledger = Awaited<ReturnType<Services['wallet']['transactions']>>
type Pin = Awaited<ReturnType<Services['pins']['state']>>
type Identity = UserDetail['identities'][number]

/** A provider as the page names it: `oidc:google` is "google (OpenID Connect)". */
function providerLabel(provider: string): string {
  if (provider === 'password') return 'Password (email and password)'
  if (provider === 'device') return 'Guest (a secret kept on the device)'
  if (provider === 'steam') return 'Steam'
  if (provider.startsWith('oidc:')) return `${provider.slice('oidc:'.length)} (OpenID Connect)`
  return provider
}

/** Where an identity's Unlink button leads: its confirmation page, which posts to the same path. */
function unlinkPath(userId: string, provider: string): string {
  return `${userPath(userId)}/identities/${encodeURIComponent(provider)}/unlink`
}

/** A ban's `until` from the form: a datetime-local value is read as UTC; a time with a zone as written; empty is "until lifted". */
export function untilFromForm(value: string | undefined): Date | null {
  const text = value?.trim() ?? ''
  if (text === '') return null
  const local = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(text)
  const date = new Date(local ? `${text}${text.length === 16 ? ':00' : ''}Z` : text)
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d\d-\d\d/.test(text)) {
    throw new AppError('validation_failed', 'Request failed validation', { details: [{ path: 'body/until', message: 'Expected a date and time (UTC), e.g. 2026-12-01T18:00' }] })
  }
  return date
}

/** A user's page; the id as the path had it, encoded again (a refused form's junk id must not become another path or a broken header). */
function userPath(id: string): string {
  return `${SECTION}/${encodeURIComponent(id)}`
}

/** An identity's subject and email, for a sentence: ` (76561198000000000, a@b.c)`, or nothing. */
function identitySummary(identity: Identity): string {
  const parts = [identity.subject, identity.email].filter((part): part is string => part !== undefined)
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`
}

function userStatus(user: Pick<UserDetail['user'], 'deletedAt' | 'ban'>) {
  if (user.deletedAt !== null) return <span class="muted">deleted</span>
  if (user.ban?.inForce) return <span class="bad">banned</span>
  return <span class="ok">active</span>
}

export function userPages(services: Services) {
  const { users, bans, wallet, pins, identities } = services
  return (app: Elysia<'/console'>) =>
    app
      .get(
        '/users',
        async ({ request, query }) => {
          const text = query.q?.trim() ?? ''
          // A cursor this server did not issue starts from the first page.
          const after = query.after !== undefined && isId('user', query.after) ? query.after : null
          const found = await users.search({ query: text === '' ? null : text, after, limit: USERS_PAGE_DEFAULT })
          return consolePage(request, { title: 'Users', section: SECTION, query }, (
            <>
              <form method="get" action="/console/users" class="row" role="search">
                <label>
                  Search by id, or part of a username or email
                  <input name="q" type="search" value={text} maxlength={254} size={40} />
                </label>
                <button type="submit">Search</button>
              </form>
              <table>
                <caption class="muted">{text === '' ? 'Every user, in the order they registered' : `Users matching “${text}”`}</caption>
                <thead>
                  <tr>
                    <th scope="col">Username</th>
                    <th scope="col">Email</th>
                    <th scope="col">Country</th>
                    <th scope="col">Registered</th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {found.users.length === 0 && (
                    <tr>
                      <td colSpan={5} class="muted">
                        No users{text === '' ? ' yet' : ' match'}.
                      </td>
                    </tr>
                  )}
                  {found.users.map((user) => (
                    <tr>
                      <td>
                        <a href={`/console/users/${user.id}`}>{user.username}</a>
                      </td>
                      <td>{user.email ?? <span class="muted">none</span>}</td>
                      <td>{user.country}</td>
                      <td>
                        <Time iso={user.createdAt} />
                      </td>
                      <td>{userStatus(user)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                next={found.cursor === null ? null : `/console/users${queryOf({ q: text, after: found.cursor })}`}
                first={after === null ? null : `/console/users${queryOf({ q: text })}`}
                nextLabel="Next page"
                firstLabel="First page"
              />
            </>
          ))
        },
        {
          query: t.Object({ q: t.Optional(t.String({ maxLength: 254 })), after: t.Optional(t.String({ maxLength: 64 })), ...NOTICE_FIELDS }),
          ...consoleRoute('viewer'),
        },
      )
      .get(
        '/users/:id',
        async ({ request, params, query }) => {
          const detail = await users.detail(params.id)
          const [ledger, pin, rated] = await Promise.all([wallet.transactions(params.id, { limit: LEDGER_PAGE, ...(query.ledgerAfter ? { after: query.ledgerAfter } : {}) }), pins.state(params.id), userRatingsOf(services, detail.user.id)])
          const role = consoleSession(request).actor.operator.role
          const may = { moderate: roleAllows(role, 'moderator'), unlockPin: roleAllows(role, 'finance') }
          return consolePage(request, { title: `User ${detail.user.username}`, section: SECTION, query }, (
            <UserDetailPage detail={detail} pin={pin} ledger={ledger} ledgerAfter={query.ledgerAfter ?? null} may={may} csrf={consoleSession(request).csrf} sockets={services.sockets.openFor(detail.user.id)} rated={rated} />
          ))
        },
        {
          params: t.Object({ id: t.String({ maxLength: 64 }) }),
          query: t.Object({ ledgerAfter: t.Optional(t.String({ maxLength: 64 })), ...NOTICE_FIELDS }),
          ...consoleRoute('viewer'),
        },
      )
      .get(
        '/users/:id/ban',
        async ({ request, params, query }) => {
          const { user, sessions, ban } = await users.detail(params.id)
          if (user.deletedAt !== null) throw new AppError('conflict', `${user.username} is deleted: there is nobody to ban`)
          const live = sessions.filter((s) => s.live).length
          return confirmPage(request, {
            title: ban?.inForce ? `Replace the ban of ${user.username}?` : `Ban ${user.username}?`,
            section: SECTION,
            query,
            consequences: [
              `Every live session of ${user.username} ends now (${live} live): their tokens are refused at the next request, on every instance.`,
              `Logging in is refused (403 account_banned) until the end you set below, or until a moderator lifts the ban; a PIN or game session they hold is useless, and a withdrawal of theirs is not signed while the ban is in force.`,
              `${user.username} gets an account.banned event with your reason.`,
              ...(ban?.inForce ? [`It replaces the ban in force (“${ban.reason}”): the new reason and end count.`] : []),
            ],
            action: `${userPath(user.id)}/ban`,
            submit: ban?.inForce ? 'Replace the ban' : `Ban ${user.username}`,
            back: `${userPath(user.id)}#ban`,
            fields: (
              <>
                <label>
                  Reason (the user is told it)
                  <textarea name="reason" required maxLength={500} rows={2} />
                </label>
                <label>
                  Until (UTC; leave empty to ban until lifted)
                  <input name="until" type="datetime-local" />
                </label>
              </>
            ),
          })
        },
        { params: t.Object({ id: t.String({ maxLength: 64 }) }), query: t.Object(NOTICE_FIELDS), ...consoleRoute('moderator') },
      )
      .post(
        '/users/:id/ban',
        ({ request, params, body }) =>
          attempt(request, `${userPath(params.id)}/ban`, async () => {
            await bans.ban(params.id, { reason: body.reason.trim(), until: untilFromForm(body.until) }, consoleSession(request).actor)
            return redirect(userPath(params.id), 'user_banned')
          }),
        {
          params: t.Object({ id: t.String({ maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: t.String({ minLength: 1, maxLength: 500 }), until: t.Optional(t.String({ maxLength: 40 })) }),
          ...consoleRoute('moderator'),
        },
      )
      .post(
        '/users/:id/unban',
        ({ request, params }) =>
          attempt(request, userPath(params.id), async () => {
            await bans.unban(params.id, consoleSession(request).actor)
            return redirect(userPath(params.id), 'user_unbanned')
          }),
        {
          params: t.Object({ id: t.String({ maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }) }),
          ...consoleRoute('moderator'),
        },
      )
      .get(
        '/users/:id/identities/:provider/unlink',
        async ({ request, params, query }) => {
          const { user, identities: linked } = await users.detail(params.id)
          if (user.deletedAt !== null) throw new AppError('not_found', `${user.username} is deleted: its identities were erased with it`)
          const identity = linked.find((i) => i.provider === params.provider)
          if (!identity) throw new AppError('not_found', `${user.username} has no ${params.provider} identity`)
          if (linked.length === 1) throw new AppError('last_identity', `This is the only way ${user.username} signs in: link another first`)
          const others = linked.filter((i) => i !== identity).map((i) => providerLabel(i.provider))
          return confirmPage(request, {
            title: `Unlink ${providerLabel(identity.provider)} from ${user.username}?`,
            section: SECTION,
            query,
            consequences: [
              `${user.username} can no longer sign in with ${providerLabel(identity.provider)}${identitySummary(identity)}; they still sign in with ${others.join(', ')}.`,
              ...(identity.provider === 'password'
                ? [`The account's email address${identity.email ? ` (${identity.email})` : ''} and password are removed with it: no sign-in, password reset or mail reaches them that way any more.`]
                : []),
              `The identity is free again: this player, or another account, may link it.`,
              `Sessions open now stay open (a ban ends them).`,
              `${user.username} gets an account.identity_unlinked event; the audit log records the unlink with your reason.`,
            ],
            action: unlinkPath(user.id, identity.provider),
            submit: `Unlink ${providerLabel(identity.provider)}`,
            back: `${userPath(user.id)}#identities`,
            fields: (
              <label>
                Reason (recorded in the audit log)
                <textarea name="reason" required maxLength={500} rows={2} />
              </label>
            ),
          })
        },
        { params: t.Object({ id: t.String({ maxLength: 64 }), provider: t.String({ maxLength: 64 }) }), query: t.Object(NOTICE_FIELDS), ...consoleRoute('moderator') },
      )
      .post(
        '/users/:id/identities/:provider/unlink',
        ({ request, params, body }) =>
          attempt(request, unlinkPath(params.id, params.provider), async () => {
            await identities.unlink(params.id, params.provider, { actor: consoleSession(request).actor, reason: body.reason.trim() })
            return redirect(`${userPath(params.id)}#identities`, 'identity_unlinked')
          }),
        {
          params: t.Object({ id: t.String({ maxLength: 64 }), provider: t.String({ maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: t.String({ minLength: 1, maxLength: 500 }) }),
          ...consoleRoute('moderator'),
        },
      )
      .post(
        '/users/:id/pin/unlock',
        ({ request, params, body }) =>
          attempt(request, userPath(params.id), async () => {
            const { lifted } = await pins.unlock(params.id, body.reason.trim(), consoleSession(request).actor)
            return redirect(`${userPath(params.id)}#pin`, lifted ? 'pin_unlocked' : 'pin_nothing_to_lift')
          }),
        {
          params: t.Object({ id: t.String({ maxLength: 64 }) }),
          body: t.Object({ _csrf: t.String({ maxLength: 128 }), reason: t.String({ minLength: 1, maxLength: 500 }) }),
          ...consoleRoute('finance'),
        },
      )
}

function UserDetailPage({
  detail,
  pin,
  ledger,
  ledgerAfter,
  may,
  csrf,
  sockets,
  rated,
}: {
  detail: UserDetail
  pin: Pin
  ledger: Ledger
  ledgerAfter: string | null
  may: { moderate: boolean; unlockPin: boolean }
  csrf: string
  /** Event sockets the user holds open on this instance (other instances hold their own). */
  sockets: number
  /** The player's ratings, per game, with their latest changes. */
  rated: Awaited<ReturnType<typeof userRatingsOf>>
}) {
  const { user, sessions, wallet, ban, identities } = detail
  const base = `/console/users/${user.id}`
  return (
    <>
      <section aria-labelledby="account">
        <h2 id="account">Account</h2>
        <dl class="facts">
          <dt>Id</dt>
          <dd class="mono">{user.id}</dd>
          <dt>Username</dt>
          <dd>{user.username}</dd>
          <dt>Email</dt>
          <dd>
            {user.email === null ? (
              <span class="muted">none (no password identity)</span>
            ) : (
              <>
                {user.email} {user.emailVerified ? <span class="ok">(verified)</span> : <span class="muted">(not verified)</span>}
              </>
            )}
          </dd>
          <dt>Country</dt>
          <dd>{user.country}</dd>
          <dt>Registered</dt>
          <dd>
            <Time iso={user.createdAt} />
          </dd>
          <dt>Status</dt>
          <dd>{userStatus(user)}</dd>
          {user.deletedAt !== null && (
            <>
              <dt>Deleted</dt>
              <dd>
                <Time iso={user.deletedAt} />
              </dd>
            </>
          )}
        </dl>
      </section>

      <section aria-labelledby="identities">
        <h2 id="identities">Identities</h2>
        <table>
          <caption class="muted">Every way the account signs in, in the order they were linked</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Subject</th>
              <th scope="col">Email</th>
              <th scope="col">Linked</th>
              {may.moderate && <th scope="col">Unlink</th>}
            </tr>
          </thead>
          <tbody>
            {identities.length === 0 && (
              <tr>
                <td colSpan={may.moderate ? 5 : 4} class="muted">
                  {user.deletedAt === null ? 'None.' : 'None: erased with the account.'}
                </td>
              </tr>
            )}
            {identities.map((identity) => (
              <tr>
                <td>
                  {providerLabel(identity.provider)} <span class="mono muted">{identity.provider}</span>
                </td>
                <td class="mono">{identity.subject ?? <span class="muted">—</span>}</td>
                <td>{identity.email ?? <span class="muted">—</span>}</td>
                <td>
                  <Time iso={identity.linkedAt} />
                </td>
                {may.moderate && (
                  <td>
                    {identities.length > 1 ? (
                      <ConfirmButton href={unlinkPath(user.id, identity.provider)} label="Unlink" ariaLabel={`Unlink ${providerLabel(identity.provider)}…`} kind="secondary" />
                    ) : (
                      <span class="muted">the only way in</span>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="ban">
        <h2 id="ban">Ban</h2>
        {ban === null ? (
          <p>Not banned.</p>
        ) : (
          <dl class="facts">
            <dt>State</dt>
            <dd>{ban.inForce ? <span class="bad">in force</span> : <span class="muted">expired</span>}</dd>
            <dt>Reason</dt>
            <dd>{ban.reason}</dd>
            <dt>Banned</dt>
            <dd>
              <Time iso={ban.bannedAt} />
            </dd>
            <dt>Until</dt>
            <dd>{ban.until === null ? 'lifted by an operator' : <Time iso={ban.until} />}</dd>
          </dl>
        )}
        {may.moderate && user.deletedAt === null && (
          <div class="actions">
            <ConfirmButton href={`${base}/ban`} label={ban?.inForce ? 'Replace the ban' : 'Ban'} />
            {ban !== null && (
              <form method="post" action={`${base}/unban`} class="row" aria-label="Lift the ban">
                <Csrf token={csrf} />
                <button type="submit" class="secondary">
                  Lift the ban
                </button>
              </form>
            )}
          </div>
        )}
      </section>

      <section aria-labelledby="pin">
        <h2 id="pin">PIN</h2>
        {!pin.set ? (
          <p class="muted">No PIN set.</p>
        ) : (
          <dl class="facts">
            <dt>State</dt>
            <dd>{pin.locked ? <span class="bad">locked</span> : <span class="ok">usable</span>}</dd>
            {pin.lockedUntil !== null && (
              <>
                <dt>{pin.locked ? 'Locked until' : 'Last lock ended'}</dt>
                <dd>
                  <Time iso={pin.lockedUntil} />
                </dd>
              </>
            )}
            <dt>Wrong PINs since the last lock</dt>
            <dd>{pin.failures}</dd>
            <dt>Locks in a row</dt>
            <dd>{pin.locks}</dd>
          </dl>
        )}
        {may.unlockPin && user.deletedAt === null && (pin.locked || pin.failures > 0 || pin.locks > 0) && (
          <form method="post" action={`${base}/pin/unlock`} class="stack" aria-label="Lift the PIN lock">
            <Csrf token={csrf} />
            <label>
              Reason (recorded in the audit log)
              <textarea name="reason" required maxLength={500} rows={2} />
            </label>
            <button type="submit" class="secondary">
              Lift the PIN lock
            </button>
          </form>
        )}
      </section>

      <section aria-labelledby="wallet">
        <h2 id="wallet">Wallet</h2>
        <dl class="facts">
          <dt>Address</dt>
          <dd class="mono">{wallet.address ?? <span class="muted">none yet</span>}</dd>
          <dt>Withdrawals in progress</dt>
          <dd>{wallet.pendingWithdrawals}</dd>
        </dl>
        <table>
          <caption class="muted">Balances</caption>
          <thead>
            <tr>
              <th scope="col">Asset</th>
              <th scope="col" class="num">
                Balance
              </th>
            </tr>
          </thead>
          <tbody>
            {wallet.balances.length === 0 && (
              <tr>
                <td colSpan={2} class="muted">
                  Never held anything.
                </td>
              </tr>
            )}
            {wallet.balances.map((b) => (
              <tr>
                <td>{b.asset}</td>
                <td class="num">{b.balance}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="ledger">
        <h2 id="ledger">Ledger</h2>
        <table>
          <caption class="muted">Every movement on the wallet, oldest first, with the balance it left</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">
                Amount
              </th>
              <th scope="col" class="num">
                Balance after
              </th>
              <th scope="col">Reference</th>
              <th scope="col">Movement</th>
            </tr>
          </thead>
          <tbody>
            {ledger.transactions.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  {ledgerAfter === null ? 'No movements.' : 'No later movements.'}
                </td>
              </tr>
            )}
            {ledger.transactions.map((tx) => (
              <tr>
                <td>
                  <Time iso={tx.createdAt} />
                </td>
                <td>{tx.kind.replaceAll('_', ' ')}</td>
                <td class={`num ${tx.amount.startsWith('-') ? 'bad' : 'ok'}`}>{tx.amount}</td>
                <td class="num">{tx.balanceAfter}</td>
                <td class="mono">{tx.reference ?? ''}</td>
                <td class="mono">{tx.id}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <Pager
          next={ledger.transactions.length === LEDGER_PAGE ? `${base}${queryOf({ ledgerAfter: ledger.cursor })}#ledger` : null}
          first={ledgerAfter === null ? null : `${base}#ledger`}
          nextLabel="Later movements"
          firstLabel="Earliest movements"
        />
      </section>

      <UserRatingsSection {...rated} />

      <section aria-labelledby="sessions">
        <h2 id="sessions">Sessions</h2>
        <p id="sockets">
          {`Event sockets open on this instance: ${sockets}`}
          <span class="muted">{' (each live session may hold some; other instances count their own)'}</span>
        </p>
        <table>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Device</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {sessions.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  Never signed in.
                </td>
              </tr>
            )}
            {sessions.map((s) => (
              <tr>
                <td>
                  <Time iso={s.createdAt} />
                </td>
                <td>
                  <Time iso={s.lastUsedAt} />
                </td>
                <td>
                  <Time iso={s.expiresAt} />
                </td>
                <td>{s.userAgent ?? <span class="muted">unknown</span>}</td>
                <td>{s.live ? <span class="ok">live</span> : s.revokedAt !== null ? `ended${s.revokedReason ? `: ${s.revokedReason}` : ''}` : 'expired'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  )
}
