// Wire types of play: game sessions and claims, tournaments, ratings, queues,
// matches and challenges. Field names are the server's ([JsonProperty]); a
// string-literal union of the server (a status, an outcome) is a string with
// a class of constants beside it; the drift check holds every type to the
// server's OpenAPI document.
using System.Collections.Generic;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    // ---- Constants -------------------------------------------------------

    /// <summary>A claim's or a decided match's outcome: a win names the winner; a draw names no one (a result only in round robin, Swiss and queues whose draws decide).</summary>
    public static class Outcomes
    {
        public const string Win = "WIN";
        public const string Draw = "DRAW";
    }

    /// <summary>A match's status (<see cref="BracketMatch.Status"/>, <see cref="MatchView.Status"/>, <see cref="MyMatch.Status"/>).</summary>
    public static class MatchStatuses
    {
        /// <summary>Not playable yet; for a queue's match, in its ready check.</summary>
        public const string Waiting = "waiting";
        public const string Running = "running";
        /// <summary>The claims disagreed: an operator resolves it (evidence may be attached).</summary>
        public const string Disputed = "disputed";
        public const string Decided = "decided";
        /// <summary>Its tournament was cancelled before it was decided, its ready check failed, or an operator cancelled it (stakes refunded).</summary>
        public const string Cancelled = "cancelled";
    }

    /// <summary>What made a match (<see cref="MatchView.Kind"/>, <see cref="MyMatch.Kind"/>).</summary>
    public static class MatchKinds
    {
        public const string Tournament = "tournament";
        public const string Queue = "queue";
        public const string Challenge = "challenge";
    }

    /// <summary>The part of a tournament a match belongs to (<see cref="BracketMatch.Bracket"/>).</summary>
    public static class Brackets
    {
        /// <summary>Every single-elimination match but the third-place one; the winners bracket of double elimination.</summary>
        public const string Winners = "winners";
        public const string Losers = "losers";
        public const string GrandFinal = "grand_final";
        public const string ThirdPlace = "third_place";
        public const string RoundRobin = "round_robin";
        public const string Swiss = "swiss";
    }

    /// <summary>How a tournament is played (<see cref="Tournament.Format"/>).</summary>
    public static class TournamentFormats
    {
        public const string SingleElimination = "single_elimination";
        public const string DoubleElimination = "double_elimination";
        public const string RoundRobin = "round_robin";
        public const string Swiss = "swiss";
    }

    /// <summary>A tournament's status (<see cref="Tournament.Status"/>); list with <c>registration</c> for the ones players may join.</summary>
    public static class TournamentStatuses
    {
        public const string Draft = "draft";
        public const string Registration = "registration";
        public const string Running = "running";
        public const string Finalizing = "finalizing";
        public const string Completed = "completed";
        public const string Cancelled = "cancelled";
    }

    /// <summary>The arbiter's answer to a claim (<see cref="Decision.Kind"/>).</summary>
    public static class Decisions
    {
        /// <summary>Waiting for the other player's claim.</summary>
        public const string Pending = "pending";
        /// <summary>Play the match again (an agreed draw where draws replay).</summary>
        public const string Replay = "replay";
        /// <summary>The match is decided.</summary>
        public const string GameAdvance = "game_advance";
        /// <summary>The match is decided; the tournament is finalizing.</summary>
        public const string GameAdvancePendingFinalization = "game_advance_pending_finalization";
        /// <summary>The claims disagree: an operator resolves the match.</summary>
        public const string Dispute = "dispute";
    }

    /// <summary>A queue ticket's status (<see cref="Ticket.Status"/>).</summary>
    public static class TicketStatuses
    {
        public const string Open = "open";
        public const string Matched = "matched";
        public const string Cancelled = "cancelled";
    }

    /// <summary>Why a ticket was closed (<see cref="Ticket.CloseReason"/>).</summary>
    public static class TicketCloseReasons
    {
        public const string Left = "left";
        public const string Matched = "matched";
        public const string ReadyTimeout = "ready_timeout";
        public const string InsufficientFunds = "insufficient_funds";
        public const string QueueClosed = "queue_closed";
        public const string AccountClosed = "account_closed";
    }

    /// <summary>A challenge's status (<see cref="Challenge.Status"/>); read as <c>expired</c> once past its expiry.</summary>
    public static class ChallengeStatuses
    {
        public const string Open = "open";
        public const string Accepted = "accepted";
        public const string Declined = "declined";
        public const string Expired = "expired";
        public const string Cancelled = "cancelled";
    }

    /// <summary>What a file attached to a disputed match may be (<see cref="MatchesApi.AttachEvidenceAsync"/>): its bytes must prove it.</summary>
    public static class EvidenceTypes
    {
        public const string Png = "image/png";
        public const string Jpeg = "image/jpeg";
        public const string Webm = "video/webm";
        public const string Text = "text/plain";
        public const string Json = "application/json";
    }

    // ---- Game sessions and claims -----------------------------------------

    /// <summary>Whose seat a game session is (<see cref="GameSession.Context"/>).</summary>
    [Wire("POST /api/v1/game-sdk/{gameId}/sessions 201", "context")]
    public sealed class GameSessionContext
    {
        /// <summary>Null for a queue's or a challenge's match.</summary>
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        [JsonProperty("matchId")] public string MatchId { get; set; }
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        /// <summary>1 or 2.</summary>
        [JsonProperty("slot")] public int Slot { get; set; }
    }

    /// <summary>A single-use match session (<see cref="GameClient.OpenSessionAsync"/>).</summary>
    [Wire("POST /api/v1/game-sdk/{gameId}/sessions 201")]
    public sealed class GameSession
    {
        [JsonProperty("sessionId")] public string SessionId { get; set; }
        /// <summary>Single use: sent as x-session-token with the result.</summary>
        [JsonProperty("token")] public string Token { get; set; }
        [JsonProperty("expiresAt")] public string ExpiresAt { get; set; }
        [JsonProperty("context")] public GameSessionContext Context { get; set; }
    }

    [Wire("POST /api/v1/game-sdk/{gameId}/sessions body")]
    internal sealed class SessionBody
    {
        [JsonProperty("matchId")] public string MatchId { get; set; }
    }

    /// <summary>A result claim: a win names the winner's participant id; a draw names no one. Make one with <see cref="Win"/> or <see cref="Draw"/>.</summary>
    [Wire("POST /api/v1/game-sdk/{gameId}/results body")]
    public sealed class Claim
    {
        /// <summary>One of <see cref="Outcomes"/>.</summary>
        [JsonProperty("outcome")] public string Outcome { get; set; }
        /// <summary>With a win: the winner's participant id (<see cref="GameSessionContext.ParticipantId"/>, <see cref="MatchPlayer.ParticipantId"/>); null for a draw.</summary>
        [JsonProperty("winnerParticipantId")] public string WinnerParticipantId { get; set; }
        /// <summary>The game's own score, kept with the claim; may be null.</summary>
        [JsonProperty("score")] public JObject Score { get; set; }

        /// <summary>A win of <paramref name="winnerParticipantId"/>.</summary>
        public static Claim Win(string winnerParticipantId, JObject score = null)
        {
            if (winnerParticipantId == null) throw new System.ArgumentNullException("winnerParticipantId");
            return new Claim { Outcome = Outcomes.Win, WinnerParticipantId = winnerParticipantId, Score = score };
        }

        /// <summary>A draw.</summary>
        public static Claim Draw(JObject score = null)
        {
            return new Claim { Outcome = Outcomes.Draw, Score = score };
        }
    }

    /// <summary>The arbiter's answer to a claim (<see cref="GameClient.SubmitResultAsync(GameSession, Claim, System.Threading.CancellationToken)"/>).</summary>
    [Wire("POST /api/v1/game-sdk/{gameId}/results 200")]
    public sealed class Decision
    {
        /// <summary>One of <see cref="Decisions"/>.</summary>
        [JsonProperty("decision")] public string Kind { get; set; }
        [JsonProperty("reason")] public string Reason { get; set; }
        [JsonProperty("matchId")] public string MatchId { get; set; }
        /// <summary>Null for a queue's or a challenge's match.</summary>
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        /// <summary>With a <c>game_advance…</c> decision (<see cref="Outcomes"/>): <c>DRAW</c> is a result in round robin and Swiss. Null otherwise.</summary>
        [JsonProperty("outcome")] public string Outcome { get; set; }
        /// <summary>With a <c>game_advance…</c> decision that is a win; null otherwise.</summary>
        [JsonProperty("winnerParticipantId")] public string WinnerParticipantId { get; set; }
        /// <summary>The match the winner moves to, when there is one.</summary>
        [JsonProperty("nextMatchId")] public string NextMatchId { get; set; }
    }

    // ---- Tournaments ------------------------------------------------------

    /// <summary>A match of a tournament's bracket (the TypeScript SDK's <c>Match</c>; named so it does not clash with System.Text.RegularExpressions.Match).</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.matches[]")]
    public sealed class BracketMatch
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>One of <see cref="Brackets"/>.</summary>
        [JsonProperty("bracket")] public string Bracket { get; set; }
        /// <summary>From 1, within its bracket.</summary>
        [JsonProperty("round")] public int Round { get; set; }
        [JsonProperty("position")] public int Position { get; set; }
        /// <summary>One of <see cref="MatchStatuses"/>; <c>cancelled</c>: its tournament was cancelled before it was decided.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        [JsonProperty("slot1ParticipantId")] public string Slot1ParticipantId { get; set; }
        [JsonProperty("slot2ParticipantId")] public string Slot2ParticipantId { get; set; }
        /// <summary>Null until decided, and for a draw.</summary>
        [JsonProperty("winnerParticipantId")] public string WinnerParticipantId { get; set; }
        /// <summary>Once decided (<see cref="Outcomes"/>): <c>DRAW</c> only in round robin and Swiss; null before.</summary>
        [JsonProperty("outcome")] public string Outcome { get; set; }
        /// <summary>Where the winner goes; null for none.</summary>
        [JsonProperty("nextMatchId")] public string NextMatchId { get; set; }
        /// <summary>Where the loser goes: the losers bracket (double elimination) or the third-place match; null for none.</summary>
        [JsonProperty("loserNextMatchId")] public string LoserNextMatchId { get; set; }
        /// <summary>ISO time at which the match, if still running, is settled (<c>no_show</c> or <c>deadline_passed</c>); null: no deadline, or not running yet.</summary>
        [JsonProperty("deadline")] public string Deadline { get; set; }
    }

    /// <summary>A tournament's creation options.</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.options")]
    public sealed class TournamentOptions
    {
        /// <summary>Whether its results move the players' ratings in the game; absent (null): true.</summary>
        [JsonProperty("rated")] public bool? Rated { get; set; }
        /// <summary>Seconds a match may run before it is settled; absent: no deadline.</summary>
        [JsonProperty("matchDeadlineS")] public int? MatchDeadlineS { get; set; }
        /// <summary>Single elimination: the semi-final losers play for third place (4 or more players).</summary>
        [JsonProperty("thirdPlaceMatch")] public bool? ThirdPlaceMatch { get; set; }
        /// <summary>Double elimination (default <c>reset</c>): <c>simple</c> or <c>reset</c>, a second grand final when the losers-bracket champion wins the first.</summary>
        [JsonProperty("grandFinal")] public string GrandFinal { get; set; }
        /// <summary>Swiss: rounds to play, at most players − 1 (default ⌈log2 players⌉).</summary>
        [JsonProperty("rounds")] public int? Rounds { get; set; }
    }

    /// <summary>One row of a tournament's standings.</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.standings[]")]
    public sealed class Standing
    {
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        /// <summary>1..n, distinct: ties are broken by each format's own tie-breaks.</summary>
        [JsonProperty("rank")] public int Rank { get; set; }
        [JsonProperty("wins")] public int Wins { get; set; }
        [JsonProperty("draws")] public int Draws { get; set; }
        [JsonProperty("losses")] public int Losses { get; set; }
        /// <summary>Win 3, draw 1, loss 0.</summary>
        [JsonProperty("points")] public int Points { get; set; }
    }

    /// <summary>The check-in window of a registration.</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.registration.checkIn")]
    [Wire("GET /api/v1/tournaments 200", "tournaments[].registration.checkIn")]
    public sealed class CheckInWindow
    {
        [JsonProperty("opensAt")] public string OpensAt { get; set; }
        [JsonProperty("closesAt")] public string ClosesAt { get; set; }
    }

    /// <summary>How players sign up (<see cref="Tournament.Registration"/>); null for a tournament an operator created with its participants.</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.registration")]
    [Wire("GET /api/v1/tournaments 200", "tournaments[].registration")]
    public sealed class Registration
    {
        /// <summary>Joining is possible until then (exclusive).</summary>
        [JsonProperty("closesAt")] public string ClosesAt { get; set; }
        [JsonProperty("maxPlayers")] public int MaxPlayers { get; set; }
        /// <summary>Registrants who did not check in within [opensAt, closesAt) are dropped at the start; null: no check-in.</summary>
        [JsonProperty("checkIn")] public CheckInWindow CheckIn { get; set; }
        /// <summary>When it starts by itself.</summary>
        [JsonProperty("startsAt")] public string StartsAt { get; set; }
        /// <summary><c>registration</c>: seeds in join order; <c>random</c>: a shuffle reproducible from <see cref="Seed"/>; <c>rating</c>: by display rating in the game at the start, ties in join order.</summary>
        [JsonProperty("seeding")] public string Seeding { get; set; }
        /// <summary>The random seeding's seed, once the tournament started; null before and for <c>registration</c> seeding.</summary>
        [JsonProperty("seed")] public string Seed { get; set; }
    }

    /// <summary>A participant of a tournament.</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament.participants[]")]
    public sealed class TournamentParticipant
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("userId")] public string UserId { get; set; }
        /// <summary>The bracket seed (1 = top); before the start of a registration, the registrant's number in join order.</summary>
        [JsonProperty("seed")] public int Seed { get; set; }
        /// <summary>Null for a participant the operator listed.</summary>
        [JsonProperty("registeredAt")] public string RegisteredAt { get; set; }
        [JsonProperty("checkedInAt")] public string CheckedInAt { get; set; }
        /// <summary>When an operator disqualified them; null if not.</summary>
        [JsonProperty("disqualifiedAt")] public string DisqualifiedAt { get; set; }
    }

    /// <summary>A tournament with its participants and bracket (<see cref="TournamentsApi.GetAsync"/>).</summary>
    [Wire("GET /api/v1/tournaments/{id} 200", "tournament")]
    public sealed class Tournament
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        [JsonProperty("name")] public string Name { get; set; }
        /// <summary>One of <see cref="TournamentFormats"/>.</summary>
        [JsonProperty("format")] public string Format { get; set; }
        /// <summary>One of <see cref="TournamentStatuses"/>.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        [JsonProperty("participants")] public List<TournamentParticipant> Participants { get; set; }
        [JsonProperty("matches")] public List<BracketMatch> Matches { get; set; }
        /// <summary>Live for round robin and Swiss; for the elimination formats empty until nothing is left to play (from <c>finalizing</c> on).</summary>
        [JsonProperty("standings")] public List<Standing> Standings { get; set; }
        [JsonProperty("winnerParticipantId")] public string WinnerParticipantId { get; set; }
        /// <summary>Null for a tournament an operator created with its participants.</summary>
        [JsonProperty("registration")] public Registration Registration { get; set; }
        [JsonProperty("options")] public TournamentOptions Options { get; set; }
        /// <summary>What registering takes from the wallet into the tournament's escrow (refunded on leaving before the start, on being dropped at it, on cancellation); null: free.</summary>
        [JsonProperty("entryFee")] public string EntryFee { get; set; }
        /// <summary>Prizes by final rank, rank 1 first, paid at completion (decimal strings).</summary>
        [JsonProperty("prizes")] public List<string> Prizes { get; set; }
    }

    /// <summary>A tournament in a list (<see cref="TournamentsApi.ListAsync"/>).</summary>
    [Wire("GET /api/v1/tournaments 200", "tournaments[]")]
    public sealed class TournamentSummary
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        [JsonProperty("name")] public string Name { get; set; }
        /// <summary>One of <see cref="TournamentFormats"/>.</summary>
        [JsonProperty("format")] public string Format { get; set; }
        /// <summary>One of <see cref="TournamentStatuses"/>.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        /// <summary>Registrants so far while in registration.</summary>
        [JsonProperty("participantCount")] public int ParticipantCount { get; set; }
        [JsonProperty("registration")] public Registration Registration { get; set; }
        /// <summary>What registering costs; null: free.</summary>
        [JsonProperty("entryFee")] public string EntryFee { get; set; }
        /// <summary>Prizes by final rank, rank 1 first.</summary>
        [JsonProperty("prizes")] public List<string> Prizes { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        [JsonProperty("startedAt")] public string StartedAt { get; set; }
    }

    /// <summary>A page of tournaments.</summary>
    [Wire("GET /api/v1/tournaments 200")]
    public sealed class TournamentsPage
    {
        [JsonProperty("tournaments")] public List<TournamentSummary> Tournaments { get; set; }
        /// <summary>Pass as <c>after</c> for the next page; null at the end.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
    }

    /// <summary>The signed-in player's seat in a tournament they registered for (<see cref="TournamentsApi.RegisterAsync"/>, <see cref="TournamentsApi.CheckInAsync"/>).</summary>
    [Wire("POST /api/v1/tournaments/{id}/registration 201", "registration")]
    [Wire("POST /api/v1/tournaments/{id}/check-in 200", "registration")]
    public sealed class RegistrationView
    {
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        [JsonProperty("registeredAt")] public string RegisteredAt { get; set; }
        /// <summary>Null until checked in.</summary>
        [JsonProperty("checkedInAt")] public string CheckedInAt { get; set; }
    }

    [Wire("GET /api/v1/tournaments/{id} 200")]
    internal sealed class TournamentAnswer
    {
        [JsonProperty("tournament")] public Tournament Tournament { get; set; }
    }

    [Wire("POST /api/v1/tournaments/{id}/registration 201")]
    [Wire("POST /api/v1/tournaments/{id}/check-in 200")]
    internal sealed class RegistrationAnswer
    {
        [JsonProperty("registration")] public RegistrationView Registration { get; set; }
    }

    [Wire("DELETE /api/v1/tournaments/{id}/registration 200")]
    internal sealed class LeftAnswer
    {
        [JsonProperty("left")] public bool Left { get; set; }
    }

    /// <summary>The other seat of one of the signed-in player's matches.</summary>
    [Wire("GET /api/v1/me/matches 200", "matches[].opponent")]
    public sealed class MatchOpponent
    {
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        [JsonProperty("userId")] public string UserId { get; set; }
        [JsonProperty("username")] public string Username { get; set; }
    }

    /// <summary>One of the signed-in player's open matches (<see cref="ArenaClient.MyMatchesAsync"/>).</summary>
    [Wire("GET /api/v1/me/matches 200", "matches[]")]
    public sealed class MyMatch
    {
        [JsonProperty("matchId")] public string MatchId { get; set; }
        /// <summary>What made it (<see cref="MatchKinds"/>): a tournament's bracket, a queue's matcher, a challenge accepted.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        /// <summary>Null for a queue's or a challenge's match.</summary>
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        [JsonProperty("tournamentName")] public string TournamentName { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        /// <summary>One of <see cref="Brackets"/>.</summary>
        [JsonProperty("bracket")] public string Bracket { get; set; }
        [JsonProperty("round")] public int Round { get; set; }
        [JsonProperty("position")] public int Position { get; set; }
        /// <summary><c>waiting</c>, <c>running</c> or <c>disputed</c> (<see cref="MatchStatuses"/>).</summary>
        [JsonProperty("status")] public string Status { get; set; }
        /// <summary>The player's seat: what claims and sessions name.</summary>
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        /// <summary>1 or 2.</summary>
        [JsonProperty("slot")] public int Slot { get; set; }
        /// <summary>Null while the other seat is empty.</summary>
        [JsonProperty("opponent")] public MatchOpponent Opponent { get; set; }
    }

    [Wire("GET /api/v1/me/matches 200")]
    internal sealed class MyMatchesAnswer
    {
        [JsonProperty("matches")] public List<MyMatch> Matches { get; set; }
    }

    // ---- Ratings ----------------------------------------------------------

    /// <summary>A player's Glicko-2 rating in a game (<see cref="RatingsApi.MeAsync"/>, each leaderboard entry), inactivity applied as of the answer.</summary>
    [Wire("GET /api/v1/games/{gameId}/ratings/me 200", "rating")]
    [Wire("GET /api/v1/games/{gameId}/leaderboard 200", "entries[].rating")]
    public sealed class RatingView
    {
        /// <summary>2 decimals; 1500 to start.</summary>
        [JsonProperty("rating")] public double Rating { get; set; }
        /// <summary>Rating deviation (2 decimals): 350 to start, shrinks with play, grows with inactivity (up to 350).</summary>
        [JsonProperty("deviation")] public double Deviation { get; set; }
        /// <summary>6 decimals; 0.06 to start.</summary>
        [JsonProperty("volatility")] public double Volatility { get; set; }
        /// <summary>rating − 2 × deviation (2 decimals): what the leaderboard ranks by.</summary>
        [JsonProperty("display")] public double Display { get; set; }
        /// <summary>Fewer than 10 rated matches this season.</summary>
        [JsonProperty("provisional")] public bool Provisional { get; set; }
        /// <summary>Rated matches this season.</summary>
        [JsonProperty("matches")] public int Matches { get; set; }
    }

    /// <summary>The signed-in player's rating in a game: the initial, provisional one before their first rated match.</summary>
    [Wire("GET /api/v1/games/{gameId}/ratings/me 200")]
    public sealed class MyRating
    {
        [JsonProperty("rating")] public RatingView Rating { get; set; }
        /// <summary>The current season.</summary>
        [JsonProperty("seasonId")] public string SeasonId { get; set; }
    }

    /// <summary>A season of a game's ratings (<see cref="RatingsApi.SeasonsAsync"/>); every game has a current one.</summary>
    [Wire("GET /api/v1/games/{gameId}/seasons 200", "seasons[]")]
    [Wire("GET /api/v1/games/{gameId}/leaderboard 200", "season")]
    public sealed class Season
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        /// <summary>1 for the season a game is created with.</summary>
        [JsonProperty("number")] public int Number { get; set; }
        [JsonProperty("name")] public string Name { get; set; }
        /// <summary>How the season's start resets every rating: <c>soft</c> half-way to 1500 (deviation at least 200), <c>hard</c> back to 1500/350/0.06.</summary>
        [JsonProperty("reset")] public string Reset { get; set; }
        /// <summary><c>scheduled</c>, <c>current</c> or <c>ended</c>.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        [JsonProperty("startsAt")] public string StartsAt { get; set; }
        [JsonProperty("startedAt")] public string StartedAt { get; set; }
        [JsonProperty("endedAt")] public string EndedAt { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
    }

    [Wire("GET /api/v1/games/{gameId}/seasons 200")]
    internal sealed class SeasonsAnswer
    {
        [JsonProperty("seasons")] public List<Season> Seasons { get; set; }
    }

    /// <summary>One row of a leaderboard.</summary>
    [Wire("GET /api/v1/games/{gameId}/leaderboard 200", "entries[]")]
    public sealed class LeaderboardEntry
    {
        /// <summary>1 the top; distinct, ties broken by user id (descending).</summary>
        [JsonProperty("rank")] public int Rank { get; set; }
        [JsonProperty("userId")] public string UserId { get; set; }
        /// <summary>Null in a past season's board for an account deleted since.</summary>
        [JsonProperty("username")] public string Username { get; set; }
        [JsonProperty("rating")] public RatingView Rating { get; set; }
    }

    /// <summary>A page of a season's leaderboard, by <c>display</c>, highest first.</summary>
    [Wire("GET /api/v1/games/{gameId}/leaderboard 200")]
    public sealed class Leaderboard
    {
        [JsonProperty("season")] public Season Season { get; set; }
        [JsonProperty("entries")] public List<LeaderboardEntry> Entries { get; set; }
        /// <summary>Pass as <c>after</c> for the next page; null at the end.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
    }

    /// <summary>A rating before or after a change.</summary>
    [Wire("GET /api/v1/games/{gameId}/ratings/history 200", "history[].before")]
    [Wire("GET /api/v1/games/{gameId}/ratings/history 200", "history[].after")]
    public sealed class RatingPoint
    {
        [JsonProperty("rating")] public double Rating { get; set; }
        [JsonProperty("deviation")] public double Deviation { get; set; }
        [JsonProperty("volatility")] public double Volatility { get; set; }
    }

    /// <summary>One move of the signed-in player's rating (<see cref="RatingsApi.HistoryAsync"/>).</summary>
    [Wire("GET /api/v1/games/{gameId}/ratings/history 200", "history[]")]
    public sealed class RatingChange
    {
        /// <summary>1, 2, 3… per player and game, without a gap.</summary>
        [JsonProperty("seq")] public int Seq { get; set; }
        /// <summary><c>match</c>, <c>correction</c> or <c>season_reset</c>.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        [JsonProperty("seasonId")] public string SeasonId { get; set; }
        [JsonProperty("matchId")] public string MatchId { get; set; }
        [JsonProperty("opponentUserId")] public string OpponentUserId { get; set; }
        /// <summary>The player's result, <c>win</c>, <c>loss</c> or <c>draw</c> (as corrected, for a correction); null for a season reset.</summary>
        [JsonProperty("outcome")] public string Outcome { get; set; }
        /// <summary>Just before the update, inactivity applied.</summary>
        [JsonProperty("before")] public RatingPoint Before { get; set; }
        [JsonProperty("after")] public RatingPoint After { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
    }

    /// <summary>A page of a player's rating history, oldest first.</summary>
    [Wire("GET /api/v1/games/{gameId}/ratings/history 200")]
    public sealed class RatingHistoryPage
    {
        [JsonProperty("history")] public List<RatingChange> History { get; set; }
        /// <summary>Pass as <c>after</c> for the next page; null at the end.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
    }

    // ---- Queues, matches, challenges ----------------------------------------

    /// <summary>A queue's rating window: two tickets are paired when their displays are within both windows.</summary>
    [Wire("GET /api/v1/games/{gameId}/queues 200", "queues[].window")]
    public sealed class QueueWindow
    {
        /// <summary>Half-width of a new ticket's window, in display points.</summary>
        [JsonProperty("initial")] public double Initial { get; set; }
        /// <summary>How much the half-width grows each second waited.</summary>
        [JsonProperty("widenPerSecond")] public double WidenPerSecond { get; set; }
        /// <summary>The largest half-width; at least <see cref="Initial"/>.</summary>
        [JsonProperty("max")] public double Max { get; set; }
    }

    /// <summary>A game's queue (<see cref="QueuesApi.ListAsync"/>): players join it and are paired by rating. The TypeScript SDK's <c>Queue</c>, named so it does not clash with System.Collections.Queue, which Unity's script template imports.</summary>
    [Wire("GET /api/v1/games/{gameId}/queues 200", "queues[]")]
    public sealed class MatchmakingQueue
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        /// <summary>Unique among the game's open queues: what join, current and leave name.</summary>
        [JsonProperty("name")] public string Name { get; set; }
        /// <summary>Its matches update ratings.</summary>
        [JsonProperty("rated")] public bool Rated { get; set; }
        /// <summary>What each player puts in (a decimal string); null: no stake.</summary>
        [JsonProperty("stake")] public string Stake { get; set; }
        /// <summary>The house's share of the pot, a decimal fraction (<c>"0.05"</c>).</summary>
        [JsonProperty("rake")] public string Rake { get; set; }
        [JsonProperty("window")] public QueueWindow Window { get; set; }
        /// <summary>Seconds both players have to confirm a match found (<see cref="MatchesApi.ReadyAsync"/>).</summary>
        [JsonProperty("readyCheckS")] public int ReadyCheckS { get; set; }
        /// <summary>Seconds to play once ready; null: no deadline.</summary>
        [JsonProperty("matchDeadlineS")] public int? MatchDeadlineS { get; set; }
        /// <summary>Two players are not paired again within this many seconds of their last match.</summary>
        [JsonProperty("rematchCooldownS")] public int RematchCooldownS { get; set; }
        /// <summary>What an agreed draw does: <c>replay</c> (default) plays it again; <c>result</c> decides the match (stakes refunded).</summary>
        [JsonProperty("draws")] public string Draws { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        [JsonProperty("updatedAt")] public string UpdatedAt { get; set; }
        /// <summary>When an operator closed it; null while open.</summary>
        [JsonProperty("closedAt")] public string ClosedAt { get; set; }
    }

    [Wire("GET /api/v1/games/{gameId}/queues 200")]
    internal sealed class QueuesAnswer
    {
        [JsonProperty("queues")] public List<MatchmakingQueue> Queues { get; set; }
    }

    /// <summary>The signed-in player's place in a queue (<see cref="QueuesApi.JoinAsync"/>, CurrentAsync, LeaveAsync): one open ticket per player and game.</summary>
    [Wire("POST /api/v1/games/{gameId}/queues/{name}/tickets 201", "ticket")]
    [Wire("GET /api/v1/games/{gameId}/queues/{name}/tickets/current 200", "ticket")]
    [Wire("DELETE /api/v1/games/{gameId}/queues/{name}/tickets/current 200", "ticket")]
    public sealed class Ticket
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        /// <summary>The queue's name.</summary>
        [JsonProperty("queue")] public string Queue { get; set; }
        /// <summary>One of <see cref="TicketStatuses"/>.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        /// <summary>The rating display the window is centred on (the player's when they joined).</summary>
        [JsonProperty("display")] public double Display { get; set; }
        /// <summary>The window's half-width now.</summary>
        [JsonProperty("window")] public double Window { get; set; }
        /// <summary>The place in line (kept when the other player failed a ready check).</summary>
        [JsonProperty("waitingSince")] public string WaitingSince { get; set; }
        /// <summary>The match it made; null before.</summary>
        [JsonProperty("matchId")] public string MatchId { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        [JsonProperty("closedAt")] public string ClosedAt { get; set; }
        /// <summary>One of <see cref="TicketCloseReasons"/>; null while open.</summary>
        [JsonProperty("closeReason")] public string CloseReason { get; set; }
    }

    [Wire("POST /api/v1/games/{gameId}/queues/{name}/tickets 201")]
    [Wire("GET /api/v1/games/{gameId}/queues/{name}/tickets/current 200")]
    [Wire("DELETE /api/v1/games/{gameId}/queues/{name}/tickets/current 200")]
    internal sealed class TicketAnswer
    {
        [JsonProperty("ticket")] public Ticket Ticket { get; set; }
    }

    /// <summary>A seat of a match (<see cref="MatchView.Players"/>).</summary>
    [Wire("GET /api/v1/matches/{id} 200", "match.players[]")]
    public sealed class MatchPlayer
    {
        /// <summary>The seat: what claims and sessions name.</summary>
        [JsonProperty("participantId")] public string ParticipantId { get; set; }
        [JsonProperty("userId")] public string UserId { get; set; }
        [JsonProperty("username")] public string Username { get; set; }
        /// <summary>1 or 2.</summary>
        [JsonProperty("slot")] public int Slot { get; set; }
        /// <summary>Confirmed the ready check (true once the match runs).</summary>
        [JsonProperty("ready")] public bool Ready { get; set; }
    }

    /// <summary>How a match was decided (<see cref="MatchView.Decision"/>).</summary>
    [Wire("GET /api/v1/matches/{id} 200", "match.decision")]
    public sealed class MatchDecision
    {
        /// <summary>One of <see cref="Outcomes"/>.</summary>
        [JsonProperty("outcome")] public string Outcome { get; set; }
        /// <summary>Null for a draw.</summary>
        [JsonProperty("winnerParticipantId")] public string WinnerParticipantId { get; set; }
        /// <summary><c>played</c>, <c>bye</c> or <c>walkover</c>.</summary>
        [JsonProperty("decidedBy")] public string DecidedBy { get; set; }
        [JsonProperty("decidedAt")] public string DecidedAt { get; set; }
    }

    /// <summary>A match the signed-in player plays in (<see cref="MatchesApi.GetAsync"/>, <see cref="MatchesApi.ReadyAsync"/>): a tournament's, a queue's or a challenge's.</summary>
    [Wire("GET /api/v1/matches/{id} 200", "match")]
    [Wire("POST /api/v1/matches/{id}/ready 200", "match")]
    public sealed class MatchView
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>One of <see cref="MatchKinds"/>.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        /// <summary>Null for a queue's or a challenge's match.</summary>
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        /// <summary>The queue that made it; null otherwise.</summary>
        [JsonProperty("queue")] public string Queue { get; set; }
        /// <summary>The challenge that made it; null otherwise.</summary>
        [JsonProperty("challengeId")] public string ChallengeId { get; set; }
        /// <summary>One of <see cref="MatchStatuses"/>: <c>waiting</c> a queue's match in its ready check; <c>cancelled</c> the ready check failed, or an operator cancelled it (stakes refunded).</summary>
        [JsonProperty("status")] public string Status { get; set; }
        [JsonProperty("rated")] public bool Rated { get; set; }
        /// <summary>What each player put in; null: none.</summary>
        [JsonProperty("stake")] public string Stake { get; set; }
        /// <summary>The house's share of the pot.</summary>
        [JsonProperty("rake")] public string Rake { get; set; }
        [JsonProperty("players")] public List<MatchPlayer> Players { get; set; }
        /// <summary>The ready check ends then (a match found, waiting for both players); null otherwise.</summary>
        [JsonProperty("readyBy")] public string ReadyBy { get; set; }
        [JsonProperty("deadline")] public string Deadline { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        /// <summary>Null until decided.</summary>
        [JsonProperty("decision")] public MatchDecision Decision { get; set; }
    }

    [Wire("GET /api/v1/matches/{id} 200")]
    [Wire("POST /api/v1/matches/{id}/ready 200")]
    internal sealed class MatchAnswer
    {
        [JsonProperty("match")] public MatchView Match { get; set; }
    }

    /// <summary>A file attached to a disputed match, as the server stored it.</summary>
    [Wire("POST /api/v1/matches/{id}/evidence 201", "evidence")]
    public sealed class Evidence
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>Hex SHA-256 of the bytes.</summary>
        [JsonProperty("sha256")] public string Sha256 { get; set; }
        /// <summary>One of <see cref="EvidenceTypes"/>.</summary>
        [JsonProperty("type")] public string Type { get; set; }
        /// <summary>Bytes.</summary>
        [JsonProperty("size")] public int Size { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
    }

    [Wire("POST /api/v1/matches/{id}/evidence 201")]
    internal sealed class EvidenceAnswer
    {
        [JsonProperty("evidence")] public Evidence Evidence { get; set; }
    }

    /// <summary>One side of a challenge.</summary>
    [Wire("GET /api/v1/challenges/{id} 200", "challenge.challenger")]
    [Wire("GET /api/v1/challenges/{id} 200", "challenge.opponent")]
    public sealed class ChallengeParty
    {
        [JsonProperty("userId")] public string UserId { get; set; }
        [JsonProperty("username")] public string Username { get; set; }
    }

    /// <summary>A challenge to a named player, made or received by the signed-in player.</summary>
    [Wire("GET /api/v1/challenges/{id} 200", "challenge")]
    [Wire("POST /api/v1/games/{gameId}/challenges 201", "challenge")]
    [Wire("GET /api/v1/me/challenges 200", "challenges[]")]
    public sealed class Challenge
    {
        [JsonProperty("id")] public string Id { get; set; }
        [JsonProperty("gameId")] public string GameId { get; set; }
        [JsonProperty("challenger")] public ChallengeParty Challenger { get; set; }
        [JsonProperty("opponent")] public ChallengeParty Opponent { get; set; }
        /// <summary>What each player puts in once accepted; null: none.</summary>
        [JsonProperty("stake")] public string Stake { get; set; }
        /// <summary>One of <see cref="ChallengeStatuses"/>; read as <c>expired</c> once past <see cref="ExpiresAt"/>.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        [JsonProperty("expiresAt")] public string ExpiresAt { get; set; }
        /// <summary>The match its acceptance made; null before.</summary>
        [JsonProperty("matchId")] public string MatchId { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        [JsonProperty("closedAt")] public string ClosedAt { get; set; }
    }

    [Wire("GET /api/v1/challenges/{id} 200")]
    [Wire("POST /api/v1/games/{gameId}/challenges 201")]
    [Wire("POST /api/v1/challenges/{id}/accept 200")]
    [Wire("POST /api/v1/challenges/{id}/decline 200")]
    [Wire("POST /api/v1/challenges/{id}/cancel 200")]
    internal sealed class ChallengeAnswer
    {
        [JsonProperty("challenge")] public Challenge Challenge { get; set; }
    }

    [Wire("GET /api/v1/me/challenges 200")]
    internal sealed class ChallengesAnswer
    {
        [JsonProperty("challenges")] public List<Challenge> Challenges { get; set; }
    }

    [Wire("POST /api/v1/games/{gameId}/challenges body")]
    internal sealed class CreateChallengeBody
    {
        /// <summary>A username or a user id.</summary>
        [JsonProperty("opponent")] public string Opponent { get; set; }
        /// <summary>What each player puts in (a decimal amount); null: none.</summary>
        [JsonProperty("stake")] public string Stake { get; set; }
        /// <summary>30 to 86 400; default 300.</summary>
        [JsonProperty("expiresInS")] public int? ExpiresInS { get; set; }
    }
}
