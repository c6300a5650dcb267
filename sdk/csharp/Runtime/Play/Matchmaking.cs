// Matchmaking (ArenaClient.Queues, .Matches, .Challenges): join a game's queue
// and be paired with a player of similar rating, confirm the match found
// before its ready check ends, or challenge a named player, with an optional
// stake held in escrow from both until the match is settled. Refusals are
// ArenaApiException with the server's code: 409 ticket_open (already waiting
// in a queue of the game), ready_check_over, match_not_waiting,
// challenge_closed, challenge_unfunded (the challenger no longer has the
// stake: the challenge is cancelled); 422 insufficient_funds (the stake is not
// in the wallet); 403 forbidden (answering a challenge that is not yours to
// answer); 404 not_found (an unknown game, queue, match or challenge, or one
// of other players).
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private QueuesApi queues;
        private MatchesApi matches;
        private ChallengesApi challenges;

        /// <summary>A game's queues: join, see the open ticket, leave.</summary>
        public QueuesApi Queues { get { return queues ?? (queues = new QueuesApi(this)); } }

        /// <summary>The signed-in player's matches: read one, confirm a ready check, attach evidence to a dispute.</summary>
        public MatchesApi Matches { get { return matches ?? (matches = new MatchesApi(this)); } }

        /// <summary>Challenges to named players, made and received.</summary>
        public ChallengesApi Challenges { get { return challenges ?? (challenges = new ChallengesApi(this)); } }

        internal static string GamePath(string gameId)
        {
            return "/api/v1/games/" + Segment(gameId);
        }
    }

    /// <summary>A game's queues (<see cref="ArenaClient.Queues"/>).</summary>
    public sealed class QueuesApi
    {
        private readonly ArenaClient client;

        internal QueuesApi(ArenaClient client) { this.client = client; }

        /// <summary>The game's open queues.</summary>
        public async Task<IList<MatchmakingQueue>> ListAsync(string gameId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.GetAsync<QueuesAnswer>(ArenaClient.GamePath(gameId) + "/queues", cancellationToken).ConfigureAwait(false)).Queues;
        }

        /// <summary>Joins the queue: the new open ticket. A staked queue needs the stake in the wallet (it is taken when a match is found).</summary>
        public Task<Ticket> JoinAsync(string gameId, string name, CancellationToken cancellationToken = default(CancellationToken))
        {
            return TicketAsync(new Call("POST", TicketPath(gameId, name)), cancellationToken);
        }

        /// <summary>The signed-in player's open ticket in the queue, with its window now; 404 when there is none (matched, left or cancelled: see Matches and the events).</summary>
        public Task<Ticket> CurrentAsync(string gameId, string name, CancellationToken cancellationToken = default(CancellationToken))
        {
            return TicketAsync(new Call("GET", TicketPath(gameId, name) + "/current"), cancellationToken);
        }

        /// <summary>Leaves the queue: the ticket, closed (<c>left</c>).</summary>
        public Task<Ticket> LeaveAsync(string gameId, string name, CancellationToken cancellationToken = default(CancellationToken))
        {
            return TicketAsync(new Call("DELETE", TicketPath(gameId, name) + "/current"), cancellationToken);
        }

        private async Task<Ticket> TicketAsync(Call call, CancellationToken cancellationToken)
        {
            return (await client.CallAsync<TicketAnswer>(call, cancellationToken).ConfigureAwait(false)).Ticket;
        }

        private static string TicketPath(string gameId, string name)
        {
            return ArenaClient.GamePath(gameId) + "/queues/" + ArenaClient.Segment(name) + "/tickets";
        }
    }

    /// <summary>The signed-in player's matches (<see cref="ArenaClient.Matches"/>).</summary>
    public sealed class MatchesApi
    {
        private readonly ArenaClient client;

        internal MatchesApi(ArenaClient client) { this.client = client; }

        /// <summary>A match the signed-in player plays in: its kind, stake, players (with the participant ids claims name), status and decision.</summary>
        public async Task<MatchView> GetAsync(string matchId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.GetAsync<MatchAnswer>(Path(matchId), cancellationToken).ConfigureAwait(false)).Match;
        }

        /// <summary>Confirms a match a queue found (<c>match.found</c>) before its <c>ReadyBy</c>; once both players have, it runs (<c>match.ready</c>). Again answers the same.</summary>
        public async Task<MatchView> ReadyAsync(string matchId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.CallAsync<MatchAnswer>(new Call("POST", Path(matchId) + "/ready"), cancellationToken).ConfigureAwait(false)).Match;
        }

        /// <summary>
        /// Attaches a file to a disputed match the signed-in player plays in, for the operator who
        /// resolves it: at most 1 MiB, its bytes of <paramref name="type"/> (<see cref="EvidenceTypes"/>);
        /// at most 5 per player and match, 30 per account a day. Refusals: 409 <c>match_not_disputed</c>,
        /// <c>evidence_limit</c>; 403 <c>not_a_participant</c>; 413 <c>payload_too_large</c>; 415
        /// <c>unsupported_media_type</c>; 422 <c>evidence_type_mismatch</c> (the bytes are not
        /// <paramref name="type"/>); 429 <c>rate_limited</c>.
        /// </summary>
        public async Task<Evidence> AttachEvidenceAsync(string matchId, byte[] bytes, string type, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (bytes == null) throw new ArgumentNullException("bytes");
            if (type == null) throw new ArgumentNullException("type");
            var call = new Call("POST", Path(matchId) + "/evidence") { RawBody = bytes, RawContentType = type };
            return (await client.CallAsync<EvidenceAnswer>(call, cancellationToken).ConfigureAwait(false)).Evidence;
        }

        private static string Path(string matchId)
        {
            return "/api/v1/matches/" + ArenaClient.Segment(matchId);
        }
    }

    /// <summary>Challenges to named players (<see cref="ArenaClient.Challenges"/>).</summary>
    public sealed class ChallengesApi
    {
        private readonly ArenaClient client;

        internal ChallengesApi(ArenaClient client) { this.client = client; }

        /// <summary>
        /// Challenges <paramref name="opponent"/> (a username or a user id) in the game. With a
        /// <paramref name="stake"/> (what each player puts in, a decimal string; null: none), the
        /// challenger must have it now (it is taken when the challenge is accepted).
        /// <paramref name="expiresInS"/>: seconds the challenge stays open, 30 to 86 400; default 300.
        /// </summary>
        public Task<Challenge> CreateAsync(string gameId, string opponent, string stake = null, int? expiresInS = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (opponent == null) throw new ArgumentNullException("opponent");
            var body = new CreateChallengeBody { Opponent = opponent, Stake = stake, ExpiresInS = expiresInS };
            return ChallengeAsync(new Call("POST", ArenaClient.GamePath(gameId) + "/challenges", body), cancellationToken);
        }

        /// <summary>A challenge the signed-in player made or received.</summary>
        public Task<Challenge> GetAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return ChallengeAsync(new Call("GET", Path(id)), cancellationToken);
        }

        /// <summary>The signed-in player's challenges, made and received, newest first (at most 100); <paramref name="status"/> <c>open</c> for open ones only, <c>all</c> or null for all.</summary>
        public async Task<IList<Challenge>> MineAsync(string status = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = new Dictionary<string, string> { { "status", status } };
            return (await client.GetAsync<ChallengesAnswer>("/api/v1/me/challenges", cancellationToken, query).ConfigureAwait(false)).Challenges;
        }

        /// <summary>Accepts a challenge received: the match is made at once and runs (<see cref="Challenge.MatchId"/>), both stakes in escrow.</summary>
        public Task<Challenge> AcceptAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return ChallengeAsync(new Call("POST", Path(id) + "/accept"), cancellationToken);
        }

        /// <summary>Declines a challenge received.</summary>
        public Task<Challenge> DeclineAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return ChallengeAsync(new Call("POST", Path(id) + "/decline"), cancellationToken);
        }

        /// <summary>Withdraws a challenge made, while it is open.</summary>
        public Task<Challenge> CancelAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return ChallengeAsync(new Call("POST", Path(id) + "/cancel"), cancellationToken);
        }

        private async Task<Challenge> ChallengeAsync(Call call, CancellationToken cancellationToken)
        {
            return (await client.CallAsync<ChallengeAnswer>(call, cancellationToken).ConfigureAwait(false)).Challenge;
        }

        private static string Path(string id)
        {
            return "/api/v1/challenges/" + ArenaClient.Segment(id);
        }
    }
}
