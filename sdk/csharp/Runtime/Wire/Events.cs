// Wire types of the event plane (GET /api/v1/events and the event socket).
// Field names are the server's ([JsonProperty]); the drift check holds them to
// the server's OpenAPI document. An event's `data` stays a JObject: the server
// may add event types, and each type's fields are listed in docs/api.md
// "Event types" (EventTypes below names the ones this SDK knows).
using System.Collections.Generic;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    /// <summary>
    /// One event of the event plane, for the signed-in user, as the server sends it. The server
    /// may add event types: compare <see cref="Type"/> with <see cref="EventTypes"/> and read
    /// <see cref="Data"/> (or <see cref="DataAs{T}"/>) for the types the game knows; ignore the rest.
    /// </summary>
    [Wire("GET /api/v1/events 200", "events[]")]
    public sealed class PlaneEvent
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>One of <see cref="EventTopics"/>.</summary>
        [JsonProperty("topic")] public string Topic { get; set; }
        /// <summary>e.g. <c>wallet.credited</c>, <c>match.decided</c>: one of <see cref="EventTypes"/>, or one this SDK does not know yet.</summary>
        [JsonProperty("type")] public string Type { get; set; }
        /// <summary>The fields of its type, as the server wrote them (amounts and balances are decimal strings, dates ISO-8601 strings).</summary>
        [JsonProperty("data")] public JObject Data { get; set; }
        /// <summary>ISO-8601 UTC.</summary>
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }

        /// <summary>Whether the event is of type <paramref name="type"/> (an <see cref="EventTypes"/> constant). It compares the type only.</summary>
        public bool Is(string type) { return Type == type; }

        /// <summary>A string field of <see cref="Data"/> (an amount, an id, a date), or null when absent, null or not a string.</summary>
        public string DataString(string name)
        {
            var value = Data == null ? null : Data[name];
            return value != null && value.Type == JTokenType.String ? (string)value : null;
        }

        /// <summary>
        /// <see cref="Data"/> read into the game's own class (its properties named with
        /// [JsonProperty] after the fields docs/api.md lists for the type); dates and amounts stay strings.
        /// </summary>
        public T DataAs<T>()
        {
            if (Data == null) return default(T);
            return Data.ToObject<T>(JsonSerializer.Create(Json.Settings));
        }
    }

    /// <summary>One page of GET /api/v1/events: the events after the cursor asked for, oldest first, and the cursor to ask after next.</summary>
    [Wire("GET /api/v1/events 200")]
    public sealed class EventsPage
    {
        [JsonProperty("events")] public List<PlaneEvent> Events { get; set; }
        /// <summary>Opaque: pass it as <c>after</c> to read on from here.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
    }

    /// <summary><c>POST /api/v1/events/socket-ticket</c>: opens one socket, once, within <see cref="ExpiresIn"/> seconds.</summary>
    [Wire("POST /api/v1/events/socket-ticket 200")]
    public sealed class SocketTicketResponse
    {
        [JsonProperty("ticket")] public string Ticket { get; set; }
        /// <summary>Seconds.</summary>
        [JsonProperty("expiresIn")] public int ExpiresIn { get; set; }
    }

    /// <summary>The topics of the event plane.</summary>
    public static class EventTopics
    {
        /// <summary>The user's auth sessions.</summary>
        public const string Session = "session";
        /// <summary>The account itself.</summary>
        public const string Account = "account";
        public const string Wallet = "wallet";
        /// <summary>Tournaments (to every participant), matches (to their players), queues, challenges, ratings.</summary>
        public const string Status = "status";

        /// <summary>Every topic, in the server's order.</summary>
        public static readonly IList<string> All = new List<string> { Session, Account, Wallet, Status }.AsReadOnly();
    }

    /// <summary>The event types the server sends (docs/api.md "Event types" lists each one's data fields).</summary>
    public static class EventTypes
    {
        /// <summary>data: sessionId, newDevice (the user had logged in before, but never from this user agent).</summary>
        public const string SessionLogin = "session.login";
        /// <summary>data: sessionId.</summary>
        public const string SessionRefreshed = "session.refreshed";
        /// <summary>data: sessionId, reason (logout, logout_all, logout_others, revoked, password_changed, password_reset, banned, superseded).</summary>
        public const string SessionLogout = "session.logout";
        /// <summary>data: sessionId, reason (refresh_token_reused).</summary>
        public const string SessionReuseRevoked = "session.reuse_revoked";

        /// <summary>A one-time code was mailed. data: purpose (verify_email, reset_password).</summary>
        public const string AccountCodeSent = "account.code_sent";
        /// <summary>data: verifiedAt.</summary>
        public const string AccountEmailVerified = "account.email_verified";
        /// <summary>data: revoked (how many other sessions the change ended).</summary>
        public const string AccountPasswordChanged = "account.password_changed";
        /// <summary>data: revoked (how many sessions the reset ended: all of them).</summary>
        public const string AccountPasswordReset = "account.password_reset";
        /// <summary>data: reason, until (null: until an operator lifts it).</summary>
        public const string AccountBanned = "account.banned";
        /// <summary>data: unbannedAt.</summary>
        public const string AccountUnbanned = "account.unbanned";
        /// <summary>A finance operator lifted the PIN lock. data: unlockedAt.</summary>
        public const string AccountPinUnlocked = "account.pin_unlocked";
        /// <summary>data: deletedAt.</summary>
        public const string AccountDeleted = "account.deleted";
        /// <summary>A way to sign in was added. data: provider (password, device, steam, oidc:&lt;name&gt;).</summary>
        public const string AccountIdentityLinked = "account.identity_linked";
        /// <summary>A way to sign in was taken away. data: provider, byOperator.</summary>
        public const string AccountIdentityUnlinked = "account.identity_unlinked";

        /// <summary>data: asset, amount, reference, balance.</summary>
        public const string WalletCredited = "wallet.credited";
        /// <summary>An operator adjustment. data: asset, amount (signed), reference, reason, balance.</summary>
        public const string WalletAdjusted = "wallet.adjusted";
        /// <summary>data: withdrawalId, amount, asset.</summary>
        public const string WalletWithdrawalPending = "wallet.withdrawal_pending";
        /// <summary>data: withdrawalId, signature.</summary>
        public const string WalletWithdrawalSigned = "wallet.withdrawal_signed";
        /// <summary>data: withdrawalId, reason.</summary>
        public const string WalletWithdrawalFailed = "wallet.withdrawal_failed";
        /// <summary>data: withdrawalId, releasesAt (optional).</summary>
        public const string WalletWithdrawalAwaitingApproval = "wallet.withdrawal_awaiting_approval";
        /// <summary>data: withdrawalId, releasesAt.</summary>
        public const string WalletWithdrawalHeld = "wallet.withdrawal_held";
        /// <summary>data: withdrawalId, status (pending_signature, held), releasesAt (optional).</summary>
        public const string WalletWithdrawalApproved = "wallet.withdrawal_approved";
        /// <summary>data: withdrawalId.</summary>
        public const string WalletWithdrawalReleased = "wallet.withdrawal_released";
        /// <summary>data: withdrawalId, reason.</summary>
        public const string WalletWithdrawalRejected = "wallet.withdrawal_rejected";
        /// <summary>A payout kept in escrow for review. data: holdId, kind (stake, prize), amount, asset, matchId, tournamentId.</summary>
        public const string WalletPayoutHeld = "wallet.payout_held";
        /// <summary>A held payout released. data: holdId, kind, amount, asset, matchId, tournamentId.</summary>
        public const string WalletPayoutReleased = "wallet.payout_released";
        /// <summary>A held payout voided. data: holdId, kind, amount, asset, matchId, tournamentId, reason.</summary>
        public const string WalletPayoutVoided = "wallet.payout_voided";

        /// <summary>data: tournamentId.</summary>
        public const string TournamentStarted = "tournament.started";
        /// <summary>To a registrant removed at the start. data: tournamentId, reason (not_checked_in).</summary>
        public const string TournamentDropped = "tournament.dropped";
        /// <summary>data: tournamentId, winnerParticipantId.</summary>
        public const string TournamentFinalizing = "tournament.finalizing";
        /// <summary>data: tournamentId, winnerParticipantId, participantId, place (the recipient's own rank).</summary>
        public const string TournamentCompleted = "tournament.completed";
        /// <summary>data: tournamentId, reason.</summary>
        public const string TournamentCancelled = "tournament.cancelled";
        /// <summary>To the disqualified player. data: tournamentId, participantId, reason.</summary>
        public const string TournamentDisqualified = "tournament.disqualified";
        /// <summary>The match can be played now. data: tournamentId (null without one), matchId, round.</summary>
        public const string MatchReady = "match.ready";
        /// <summary>data: tournamentId, matchId, winnerParticipantId, outcome (WIN, DRAW), reason (optional: bye, no_show, disqualified).</summary>
        public const string MatchDecided = "match.decided";
        /// <summary>data: tournamentId, matchId, reason (mutual_draw, server_draw).</summary>
        public const string MatchReplay = "match.replay";
        /// <summary>data: tournamentId, matchId, reason (claims_conflict, winner_not_in_match, deadline_passed).</summary>
        public const string MatchDisputed = "match.disputed";
        /// <summary>An operator changed the decided result. data: tournamentId, matchId, winnerParticipantId, previousWinnerParticipantId, reason.</summary>
        public const string MatchCorrected = "match.corrected";
        /// <summary>A queue paired the recipient: confirm the ready check before readyBy. data: matchId, gameId, queue, readyBy, stake.</summary>
        public const string MatchFound = "match.found";
        /// <summary>data: matchId, gameId, reason (ready_timeout, operator), detail (optional).</summary>
        public const string MatchCancelled = "match.cancelled";
        /// <summary>data: ticketId, gameId, queue, reason (ready_timeout, insufficient_funds, queue_closed).</summary>
        public const string TicketCancelled = "ticket.cancelled";
        /// <summary>To the opponent. data: challengeId, gameId, challengerId, challengerUsername, stake, expiresAt.</summary>
        public const string ChallengeReceived = "challenge.received";
        /// <summary>To the challenger. data: challengeId, gameId, matchId.</summary>
        public const string ChallengeAccepted = "challenge.accepted";
        /// <summary>data: challengeId, gameId.</summary>
        public const string ChallengeDeclined = "challenge.declined";
        /// <summary>data: challengeId, gameId.</summary>
        public const string ChallengeExpired = "challenge.expired";
        /// <summary>data: challengeId, gameId, reason (withdrawn, challenger_unfunded, account_closed).</summary>
        public const string ChallengeCancelled = "challenge.cancelled";
        /// <summary>The recipient's rating moved. data: gameId, seasonId, matchId, reason (match, correction), change, rating.</summary>
        public const string RatingUpdated = "rating.updated";
    }
}
