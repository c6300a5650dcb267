// The signed-in player's wallet and its history: Wallet.GetAsync is the
// balance and address; TransactionsAsync every movement with the balance
// after it, WithdrawalsAsync the withdrawals, both oldest first, a page at a time.
using System.Collections.Generic;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private WalletApi wallet;

        /// <summary>The signed-in player's wallet: balance, address, movements, withdrawals.</summary>
        public WalletApi Wallet { get { return wallet ?? (wallet = new WalletApi(this)); } }
    }

    /// <summary>The signed-in player's wallet and its history (<see cref="ArenaClient.Wallet"/>).</summary>
    public sealed class WalletApi
    {
        /// <summary>The largest page the server gives (what <see cref="AllTransactionsAsync"/> asks for).</summary>
        private const int Page = 100;
        private readonly ArenaClient client;

        internal WalletApi(ArenaClient client) { this.client = client; }

        /// <summary>Balance and custody address (the wallet is created on first use).</summary>
        public Task<Wallet> GetAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.GetAsync<Wallet>("/api/v1/wallet", cancellationToken);
        }

        /// <summary>
        /// One page of the wallet's movements, oldest first, after <paramref name="after"/> (absent: from
        /// the start). The cursor always comes back: keep it and pass it later to read only what
        /// moved since. Fewer than <paramref name="limit"/> movements (1 to 100; default 50): there is nothing more yet.
        /// </summary>
        public Task<TransactionsPage> TransactionsAsync(string after = null, int? limit = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.GetAsync<TransactionsPage>("/api/v1/wallet/transactions", cancellationToken, PageQuery(after, limit));
        }

        /// <summary>Every movement after <paramref name="after"/> (all of them without it), page after page, and the cursor to read on from later.</summary>
        public async Task<TransactionsPage> AllTransactionsAsync(string after = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var all = new List<WalletTransaction>();
            var cursor = after;
            for (;;)
            {
                var page = await TransactionsAsync(cursor, Page, cancellationToken).ConfigureAwait(false);
                all.AddRange(page.Transactions);
                cursor = page.Cursor;
                if (page.Transactions.Count < Page) return new TransactionsPage { Transactions = all, Cursor = cursor, Held = page.Held };
            }
        }

        /// <summary>One page of the player's withdrawals, oldest first; pass its <c>Cursor</c> as <paramref name="after"/> for the next (null at the end). <paramref name="limit"/>: 1 to 100; default 50.</summary>
        public Task<WithdrawalsPage> WithdrawalsAsync(string after = null, int? limit = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.GetAsync<WithdrawalsPage>("/api/v1/wallet/withdrawals", cancellationToken, PageQuery(after, limit));
        }

        /// <summary>The <c>after</c> and <c>limit</c> query of a paged list (null values are left out).</summary>
        internal static IDictionary<string, string> PageQuery(string after, int? limit)
        {
            return new Dictionary<string, string>
            {
                { "after", after },
                { "limit", limit.HasValue ? limit.Value.ToString(CultureInfo.InvariantCulture) : null },
            };
        }
    }
}
