// The game side (the /api/v1/game-sdk routes): a single-use match session per
// player, then one result claim that consumes it. The game key goes with both
// as x-game-key, the signed-in player's bearer as usual.
using System;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        /// <summary>The game side of <paramref name="gameId"/>: match sessions and result claims, sent with the game's key.</summary>
        public GameClient Game(string gameId, string gameKey)
        {
            return new GameClient(this, gameId, gameKey);
        }
    }

    /// <summary>A game's match sessions and result claims for the signed-in player (<see cref="ArenaClient.Game"/>).</summary>
    public sealed class GameClient
    {
        private readonly ArenaClient client;
        private readonly string gameKey;

        /// <summary>The game.</summary>
        public string GameId { get; private set; }

        internal GameClient(ArenaClient client, string gameId, string gameKey)
        {
            if (gameId == null) throw new ArgumentNullException("gameId");
            if (gameKey == null) throw new ArgumentNullException("gameKey");
            this.client = client;
            GameId = gameId;
            this.gameKey = gameKey;
        }

        /// <summary>Issues a single-use session for the signed-in player in <paramref name="matchId"/>.</summary>
        public Task<GameSession> OpenSessionAsync(string matchId, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (matchId == null) throw new ArgumentNullException("matchId");
            var call = new Call("POST", Path("sessions"), new SessionBody { MatchId = matchId }).With("x-game-key", gameKey);
            return client.CallAsync<GameSession>(call, cancellationToken);
        }

        /// <summary>
        /// Claims a result with the session's token, which this consumes whatever the decision.
        /// Not retried on a network error: the claim may have counted, and a claim with a new
        /// session then answers 409 <c>already_claimed</c>.
        /// </summary>
        public Task<Decision> SubmitResultAsync(GameSession session, Claim claim, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (session == null) throw new ArgumentNullException("session");
            return SubmitResultAsync(session.Token, claim, cancellationToken);
        }

        /// <summary>Claims a result with a session token (<see cref="GameSession.Token"/>); as <see cref="SubmitResultAsync(GameSession, Claim, CancellationToken)"/>.</summary>
        public Task<Decision> SubmitResultAsync(string sessionToken, Claim claim, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (sessionToken == null) throw new ArgumentNullException("sessionToken");
            if (claim == null) throw new ArgumentNullException("claim");
            var call = new Call("POST", Path("results"), claim).With("x-game-key", gameKey).With("x-session-token", sessionToken);
            return client.CallAsync<Decision>(call, cancellationToken);
        }

        private string Path(string leaf)
        {
            return "/api/v1/game-sdk/" + ArenaClient.Segment(GameId) + "/" + leaf;
        }
    }
}
