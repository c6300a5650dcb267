// Tournaments players sign up for: list them, register, leave before the
// start, check in within the check-in window. Refusals are ArenaApiException
// with the server's code: 409 registration_closed, tournament_full,
// already_registered, not_registered, check_in_closed; 403 account_banned;
// 422 insufficient_funds (a register short of the tournament's entryFee).
using System.Collections.Generic;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private TournamentsApi tournaments;

        /// <summary>Tournaments: list, register, leave, check in.</summary>
        public TournamentsApi Tournaments { get { return tournaments ?? (tournaments = new TournamentsApi(this)); } }

        /// <summary>The signed-in player's open matches (waiting, running or disputed): tournaments', queues' and challenges'.</summary>
        public async Task<IList<MyMatch>> MyMatchesAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await GetAsync<MyMatchesAnswer>("/api/v1/me/matches", cancellationToken).ConfigureAwait(false)).Matches;
        }

        /// <summary>A tournament with its participants and bracket (as <see cref="TournamentsApi.GetAsync"/>).</summary>
        public Task<Tournament> TournamentAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Tournaments.GetAsync(id, cancellationToken);
        }
    }

    /// <summary>Tournaments players sign up for (<see cref="ArenaClient.Tournaments"/>).</summary>
    public sealed class TournamentsApi
    {
        private readonly ArenaClient client;

        internal TournamentsApi(ArenaClient client) { this.client = client; }

        /// <summary>
        /// One page of tournaments, oldest first; pass its <c>Cursor</c> as <paramref name="after"/> for the
        /// next (null at the end). <paramref name="status"/> (<see cref="TournamentStatuses"/>): only
        /// tournaments in it, <c>registration</c> for the ones players may join. <paramref name="limit"/>: 1 to 100; default 50.
        /// </summary>
        public Task<TournamentsPage> ListAsync(string status = null, string after = null, int? limit = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var query = new Dictionary<string, string>
            {
                { "status", status },
                { "after", after },
                { "limit", limit.HasValue ? limit.Value.ToString(CultureInfo.InvariantCulture) : null },
            };
            return client.GetAsync<TournamentsPage>("/api/v1/tournaments", cancellationToken, query);
        }

        /// <summary>The tournaments open for registration, every page.</summary>
        public async Task<IList<TournamentSummary>> OpenAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var all = new List<TournamentSummary>();
            string after = null;
            do
            {
                var page = await ListAsync(TournamentStatuses.Registration, after, 100, cancellationToken).ConfigureAwait(false);
                all.AddRange(page.Tournaments);
                after = page.Cursor;
            } while (after != null);
            return all;
        }

        /// <summary>A tournament with its participants and bracket.</summary>
        public async Task<Tournament> GetAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.GetAsync<TournamentAnswer>(Path(id), cancellationToken).ConfigureAwait(false)).Tournament;
        }

        /// <summary>Joins a tournament in registration (taking its entry fee, if any, from the wallet).</summary>
        public async Task<RegistrationView> RegisterAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.CallAsync<RegistrationAnswer>(new Call("POST", Path(id) + "/registration"), cancellationToken).ConfigureAwait(false)).Registration;
        }

        /// <summary>Leaves a tournament before it starts (its entry fee refunded).</summary>
        public async Task LeaveAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            await client.CallAsync<LeftAnswer>(new Call("DELETE", Path(id) + "/registration"), cancellationToken).ConfigureAwait(false);
        }

        /// <summary>Checks in, within the tournament's check-in window; again answers the same.</summary>
        public async Task<RegistrationView> CheckInAsync(string id, CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.CallAsync<RegistrationAnswer>(new Call("POST", Path(id) + "/check-in"), cancellationToken).ConfigureAwait(false)).Registration;
        }

        private static string Path(string id)
        {
            return "/api/v1/tournaments/" + ArenaClient.Segment(id);
        }
    }
}
