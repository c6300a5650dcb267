// The C# SDK's journey against the compiled binary (test/sdk-csharp/journey.test.ts
// runs `arena seed`, makes a staked queue with the CLI, starts `dist/arena serve`
// and runs this under mono with the server's URL and the seed's JSON file).
// Everything here goes through Arena.Sdk's public API, as a Unity game would:
// a guest, the seeded players by password, a double-fired rotation, a
// tournament match through sessions and claims heard on a socket, a PIN
// purchase to `signed`, and a queue match with a stake. Each step prints one
// JSON line of what it saw; the test checks those facts against the server.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Journey
{
    public static class JourneyProgram
    {
        private static string baseUrl;
        private static JObject seed;
        private static string gameId;
        private static string gameKey;

        public static int Main(string[] args)
        {
            try
            {
                baseUrl = args[0];
                seed = JObject.Parse(File.ReadAllText(args[1]));
                gameId = (string)seed["game"]["id"];
                gameKey = (string)seed["gameKey"];
                RunAsync().GetAwaiter().GetResult();
                return 0;
            }
            catch (Exception error)
            {
                Console.WriteLine("FAIL " + error);
                return 1;
            }
        }

        private static async Task RunAsync()
        {
            await Guest();
            var players = await Passwords();
            await Rotation();
            await TournamentHeardOnSocket(players);
            await Purchase(players[0]);
            await StakedQueue(players[2], players[3]);
            foreach (var player in players) player.Dispose();
        }

        private static void Step(string name, object facts)
        {
            var line = JObject.FromObject(facts);
            line.AddFirst(new JProperty("step", name));
            Console.WriteLine(line.ToString(Formatting.None));
        }

        private static void Check(bool condition, string what)
        {
            if (!condition) throw new Exception("check failed: " + what);
        }

        /// <summary>Every request any client of the journey sent, as "METHOD /path" (the SDK's own traffic).</summary>
        private static readonly RecordingTransport Sent = new RecordingTransport(new HttpClientTransport());

        private static ArenaClient NewClient(IArenaStore store = null)
        {
            return new ArenaClient(new ArenaClientOptions { BaseUrl = baseUrl, Store = store, Transport = Sent });
        }

        /// <summary>A transport that passes every request on and writes down its method and path.</summary>
        private sealed class RecordingTransport : ITransport
        {
            private readonly ITransport inner;
            private readonly List<string> sent = new List<string>();

            public RecordingTransport(ITransport inner) { this.inner = inner; }

            public int Count(Func<string, bool> which) { lock (sent) return sent.Count(which); }

            public Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken)
            {
                lock (sent) sent.Add(request.Method + " " + new Uri(request.Url).AbsolutePath);
                return inner.SendAsync(request, cancellationToken);
            }
        }

        private static decimal Amount(string value)
        {
            return decimal.Parse(value, NumberStyles.Number, CultureInfo.InvariantCulture);
        }

        private static string Text(decimal value)
        {
            return value.ToString("0.##########", CultureInfo.InvariantCulture);
        }

        /// <summary>A guest made on this "device", then the game restarted: the store's secret signs it in again.</summary>
        private static async Task Guest()
        {
            var store = new MemoryArenaStore();
            var created = new List<bool>();
            string userId;
            using (var first = NewClient(store))
            {
                var guest = await first.Auth.LoginAsGuestAsync();
                created.Add(guest.Created);
                userId = guest.User.Id;
                Check(store.Get(ArenaStoreKeys.DeviceSecret) == guest.DeviceSecret, "the secret kept in the store");
            }
            List<string> identities;
            using (var again = NewClient(store))
            {
                // A restart: the tokens come back from the store; sign in again with the kept secret anyway.
                Check(again.Auth.IsSignedIn, "the tokens restored from the store");
                again.Auth.Clear();
                var guest = await again.Auth.LoginAsGuestAsync();
                created.Add(guest.Created);
                Check(guest.User.Id == userId, "the same guest account");
                identities = (await again.MeAsync()).Identities;
            }
            Step("guest", new { userId, created, identities });
        }

        private static async Task<List<ArenaClient>> Passwords()
        {
            var players = new List<ArenaClient>();
            var ids = new List<string>();
            foreach (var player in seed["players"])
            {
                var client = NewClient();
                var user = await client.Auth.LoginAsync((string)player["username"], (string)seed["password"]);
                ids.Add(user.Id);
                players.Add(client);
            }
            Step("password", new { userIds = ids });
            return players;
        }

        /// <summary>
        /// Two copies of one signed-in game (two processes sharing saved tokens, or a refresh
        /// fired twice) rotate the same refresh token at once: within the server's retry grace
        /// both get a new pair, and the player stays signed in on both.
        /// </summary>
        private static async Task Rotation()
        {
            var store = new MemoryArenaStore();
            string userId;
            using (var original = NewClient(store))
                userId = (await original.Auth.LoginAsync((string)seed["players"][0]["username"], (string)seed["password"])).Id;
            var a = NewClient(store);
            var b = NewClient(store);
            Check(a.Auth.Current.RefreshToken == b.Auth.Current.RefreshToken, "both copies hold the same refresh token");
            Func<string, bool> isRotation = line => line == "POST /api/v1/auth/validate";
            var rotationsBefore = Sent.Count(isRotation);
            await Task.WhenAll(a.Auth.RefreshAsync(), b.Auth.RefreshAsync());
            var rotations = Sent.Count(isRotation) - rotationsBefore;
            var tokens = new HashSet<string> { a.Auth.Current.AccessToken, b.Auth.Current.AccessToken };
            var meA = await a.MeAsync();
            var meB = await b.MeAsync();
            Check(meA.Id == userId && meB.Id == userId, "both copies still act as the player");
            Step("rotation", new { rotations, distinctAccessTokens = tokens.Count, stillSignedIn = a.Auth.IsSignedIn && b.Auth.IsSignedIn, meAfter = meA.Id });
            a.Dispose();
            b.Dispose();
        }

        /// <summary>
        /// The single-elimination cup's first running match, played by its two players through
        /// single-use game sessions and agreeing claims, while the winner listens on an event socket.
        /// </summary>
        private static async Task<string> TournamentHeardOnSocket(List<ArenaClient> players)
        {
            var cupId = (string)seed["tournaments"][0]["id"];
            var sides = new List<KeyValuePair<ArenaClient, MyMatch>>();
            string matchId = null;
            foreach (var player in players)
            {
                var mine = (await player.MyMatchesAsync()).Where(m => m.TournamentId == cupId && m.Status == MatchStatuses.Running).OrderBy(m => m.MatchId, StringComparer.Ordinal).FirstOrDefault();
                if (mine == null) continue;
                if (matchId == null) matchId = mine.MatchId;
                if (mine.MatchId == matchId) sides.Add(new KeyValuePair<ArenaClient, MyMatch>(player, mine));
            }
            Check(sides.Count == 2, "two players in the cup's first match");
            var winner = sides.Single(s => s.Value.Slot == 1);

            // Subscribe from the newest cursor: the decision then arrives on the socket whether it
            // commits before the socket has subscribed (sent first, as missed) or after (live).
            var topics = new List<string> { EventTopics.Status };
            string cursor;
            while (true)
            {
                var page = await winner.Key.Events.PollAsync(topics: topics);
                if (page.Events.Count == 0) { cursor = page.Cursor; break; }
            }
            var heard = new List<string>();
            var decided = new TaskCompletionSource<bool>();
            var options = new SubscribeOptions { Transport = EventTransport.Socket, Topics = topics, After = cursor };
            // Handlers run on the thread pool here (no SynchronizationContext in a console program).
            var subscription = winner.Key.Events.Subscribe(batch =>
            {
                lock (heard)
                    foreach (var e in batch)
                    {
                        heard.Add(e.Type);
                        if (e.Type == EventTypes.MatchDecided && (string)e.Data["matchId"] == matchId) decided.TrySetResult(true);
                    }
            }, options);
            try
            {
                var decisions = new List<string>();
                foreach (var side in new[] { sides.Single(s => s.Value.Slot == 2), winner })
                {
                    var game = side.Key.Game(gameId, gameKey);
                    var session = await game.OpenSessionAsync(matchId);
                    Check(session.Context.MatchId == matchId, "the session is for the match");
                    var decision = await game.SubmitResultAsync(session, Claim.Win(winner.Value.ParticipantId));
                    decisions.Add(decision.Kind);
                }
                Step("tournament", new { matchId, winnerParticipantId = winner.Value.ParticipantId, decisions });
                await Within(decided.Task, "match.decided on the socket");
                Check(subscription.Transport == EventTransport.Socket, "still on the socket");
                lock (heard) Step("socket", new { matchId, heard = heard.Distinct().ToList() });
            }
            finally
            {
                await subscription.StopAsync();
            }
            return matchId;
        }

        /// <summary>A withdrawal authorized by the seeded PIN in one PIN session and one verify, signed by custody.</summary>
        private static async Task Purchase(ArenaClient player)
        {
            var before = Amount((await player.Wallet.GetAsync()).Balance);
            Func<string, bool> isVerify = line => line.StartsWith("POST /api/v1/security/pin-session/", StringComparison.Ordinal) && line.EndsWith("/verify", StringComparison.Ordinal);
            var verifiesBefore = Sent.Count(isVerify);
            var result = await player.Purchases.AuthorizeAsync((string)seed["pin"], "25", (string)seed["destination"]);
            var verifies = Sent.Count(isVerify) - verifiesBefore;
            Check(result.Valid, "the PIN accepted");
            // Custody signs within the request or just after: read the withdrawal until it is signed.
            var withdrawal = result.Withdrawal;
            for (var i = 0; i < 100 && withdrawal.Status != WithdrawalStatuses.Signed; i++)
            {
                await Task.Delay(100);
                withdrawal = (await player.Wallet.WithdrawalsAsync()).Withdrawals.Single(w => w.Id == result.Withdrawal.Id);
            }
            var after = Amount((await player.Wallet.GetAsync()).Balance);
            Step("purchase", new { withdrawalId = withdrawal.Id, status = withdrawal.Status, valid = result.Valid, verifies, balanceDrop = Text(before - after) });
        }

        /// <summary>Two players join the staked queue, are paired by the matcher, confirm, and play; the pot less the rake goes to the winner.</summary>
        private static async Task StakedQueue(ArenaClient alice, ArenaClient bob)
        {
            var queue = (string)seed["queue"];
            var aliceBefore = Amount((await alice.Wallet.GetAsync()).Balance);
            var bobBefore = Amount((await bob.Wallet.GetAsync()).Balance);
            await alice.Queues.JoinAsync(gameId, queue);
            await bob.Queues.JoinAsync(gameId, queue);
            MyMatch found = null;
            for (var i = 0; i < 200 && found == null; i++)
            {
                found = (await alice.MyMatchesAsync()).FirstOrDefault(m => m.Kind == MatchKinds.Queue);
                if (found == null) await Task.Delay(100);
            }
            Check(found != null, "the matcher paired them");
            await alice.Matches.ReadyAsync(found.MatchId);
            var view = await bob.Matches.ReadyAsync(found.MatchId);
            Check(view.Status == MatchStatuses.Running, "both ready: it runs");
            var winner = found.ParticipantId;
            foreach (var side in new[] { bob, alice })
            {
                var game = side.Game(gameId, gameKey);
                await game.SubmitResultAsync(await game.OpenSessionAsync(found.MatchId), Claim.Win(winner));
            }
            var decided = await alice.Matches.GetAsync(found.MatchId);
            var aliceAfter = Amount((await alice.Wallet.GetAsync()).Balance);
            var bobAfter = Amount((await bob.Wallet.GetAsync()).Balance);
            Step("queue", new { matchId = found.MatchId, status = decided.Status, winnerGain = Text(aliceAfter - aliceBefore), loserLoss = Text(bobBefore - bobAfter) });
        }

        private static async Task Within(Task task, string what)
        {
            if (await Task.WhenAny(task, Task.Delay(TimeSpan.FromSeconds(20))) != task) throw new TimeoutException("waited 20 s for " + what);
            await task;
        }
    }
}
