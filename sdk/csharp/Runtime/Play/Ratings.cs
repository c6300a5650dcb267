// Ratings, leaderboards and seasons of a game (ArenaClient.Ratings): the
// signed-in player's Glicko-2 rating and its history, a season's leaderboard a
// page at a time, the game's seasons (to find a past season's id). An unknown
// game, or a season of another game, is ArenaApiException 404 not_found; a
// cursor the server did not give, 400 or 422 (validation_failed).
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private RatingsApi ratings;

        /// <summary>Ratings, leaderboards and seasons of a game.</summary>
        public RatingsApi Ratings { get { return ratings ?? (ratings = new RatingsApi(this)); } }
    }

    /// <summary>Ratings, leaderboards and seasons (<see cref="ArenaClient.Ratings"/>).</summary>
    public sealed class RatingsApi
    {
        private readonly ArenaClient client;

        internal RatingsApi(ArenaClient client) { this.client = client; }

        /// <summary>The signed-in player's rating in the game this season, inactivity applied: 1500/350/0.06, provisional, before their first rated match.</summary>
        public Task<MyRating> MeAsync(string gameId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.GetAsync<MyRating>(Game(gameId) + "/ratings/me", cancellationToken);
        }

        /// <summary>One page of the signed-in player's rating changes in the game, oldest first; pass its <c>Cursor</c> as <paramref name="after"/> for the next (null at the end). <paramref name="limit"/>: 1 to 100; default 50.</summary>
        public Task<RatingHistoryPage> HistoryAsync(string gameId, string after = null, int? limit = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.GetAsync<RatingHistoryPage>(Game(gameId) + "/ratings/history", cancellationToken, WalletApi.PageQuery(after, limit));
        }

        /// <summary>
        /// One page of a season's leaderboard, highest <c>display</c> first; pass its <c>Cursor</c> as
        /// <paramref name="after"/> for the next (null at the end). A page never repeats or skips a player
        /// whose rating did not move between the two requests. <paramref name="season"/>: a season id of the
        /// game (see <see cref="SeasonsAsync"/>); null, the current season. A scheduled season's board is empty.
        /// </summary>
        public Task<Leaderboard> LeaderboardAsync(string gameId, string season = null, string after = null, int? limit = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = WalletApi.PageQuery(after, limit);
            query["season"] = season;
            return client.GetAsync<Leaderboard>(Game(gameId) + "/leaderboard", cancellationToken, query);
        }

        /// <summary>The game's seasons, scheduled, current and ended.</summary>
        public async Task<IList<Season>> SeasonsAsync(string gameId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.GetAsync<SeasonsAnswer>(Game(gameId) + "/seasons", cancellationToken).ConfigureAwait(false)).Seasons;
        }

        private static string Game(string gameId)
        {
            return "/api/v1/games/" + ArenaClient.Segment(gameId);
        }
    }
}
