// Play and wallet calls: the routes, headers and bodies the TypeScript SDK
// sends, and the answers unwrapped from their envelopes.
using System;
using System.Linq;
using System.Text;
using System.Threading.Tasks;

namespace Arena.Sdk.Tests
{
    public static class PlayTests
    {
        private static async Task<ArenaClient> SignedIn(FakeTransport transport)
        {
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            await client.Auth.LoginAsync("alice", "secret");
            return client;
        }

        private static FakeTransport Answering(Func<FakeTransport.Sent, TransportResponse> handler)
        {
            return new FakeTransport(request => request.Path == "/api/v1/user/login" ? FakeTransport.Tokens("1") : handler(request));
        }

        [Test]
        public static async Task SessionsAndClaimsCarryTheGameKeyAndTheSessionToken()
        {
            var transport = Answering(request =>
            {
                if (request.Path.EndsWith("/sessions"))
                    return FakeTransport.Reply(201, new { sessionId = "gs_1", token = "session-token-1", expiresAt = "2026-01-01T00:10:00.000Z", context = new { tournamentId = (string)null, matchId = "m_1", participantId = "p_1", slot = 2 } });
                return FakeTransport.Reply(200, new { decision = "pending", reason = "awaiting_other_claim", matchId = "m_1", tournamentId = (string)null });
            });
            var client = await SignedIn(transport);
            var game = client.Game("g/1", "gk_secret");
            var session = await game.OpenSessionAsync("m_1");
            Assert.Equal(2, session.Context.Slot, "slot");
            Assert.True(session.Context.TournamentId == null, "a queue's match has no tournament");
            var decision = await game.SubmitResultAsync(session, Claim.Win("p_1"));
            Assert.Equal(Decisions.Pending, decision.Kind, "decision");
            var open = transport.Requests[1];
            Assert.Equal("http://arena.test/api/v1/game-sdk/g%2F1/sessions", open.Url, "the game id escaped");
            Assert.Equal("gk_secret", open.Header("x-game-key"), "the game key");
            Assert.Equal("Bearer access-1", open.Header("authorization"), "the player's bearer");
            Assert.Equal("m_1", (string)open.Json["matchId"], "the match");
            var claim = transport.Requests[2];
            Assert.Equal("gk_secret", claim.Header("x-game-key"), "the game key with the claim");
            Assert.Equal("session-token-1", claim.Header("x-session-token"), "the session token");
            Assert.Equal("{\"outcome\":\"WIN\",\"winnerParticipantId\":\"p_1\"}", claim.Body, "the claim, nothing more");
            await game.SubmitResultAsync("other-token", Claim.Draw());
            Assert.Equal("{\"outcome\":\"DRAW\"}", transport.Requests[3].Body, "a draw names no one");
            Assert.Equal("other-token", transport.Requests[3].Header("x-session-token"), "a token given as a string");
        }

        [Test]
        public static async Task AClaimIsNotRetriedOnANetworkError()
        {
            var transport = Answering(request => { throw FakeTransport.NoAnswer(); });
            var client = await SignedIn(transport);
            await Assert.ThrowsAsync<ArenaNetworkException>(() => client.Game("g1", "k").SubmitResultAsync("t", Claim.Draw()));
            Assert.Equal(1, transport.Count("/api/v1/game-sdk/g1/results"), "one claim");
        }

        [Test]
        public static async Task TournamentCallsUnwrapTheirAnswers()
        {
            var registration = new { tournamentId = "t_1", participantId = "p_9", registeredAt = "2026-01-01T00:00:00.000Z", checkedInAt = (string)null };
            var transport = Answering(request =>
            {
                var route = request.Method + " " + request.Path;
                switch (route)
                {
                    case "GET /api/v1/tournaments": return FakeTransport.Reply(200, new { tournaments = new object[0], cursor = (string)null });
                    case "POST /api/v1/tournaments/t_1/registration": return FakeTransport.Reply(201, new { registration = registration });
                    case "POST /api/v1/tournaments/t_1/check-in": return FakeTransport.Reply(200, new { registration = registration });
                    case "DELETE /api/v1/tournaments/t_1/registration": return FakeTransport.Reply(200, new { left = true });
                    case "GET /api/v1/me/matches": return FakeTransport.Reply(200, new { matches = new[] { new { matchId = "m_1", kind = "queue", tournamentId = (string)null, tournamentName = (string)null, gameId = "g1", bracket = "winners", round = 1, position = 1, status = "running", participantId = "p_1", slot = 1, opponent = new { participantId = "p_2", userId = "u_2", username = "bob" } } } });
                    default: return FakeTransport.Error(404, "not_found");
                }
            });
            var client = await SignedIn(transport);
            var page = await client.Tournaments.ListAsync(TournamentStatuses.Registration, limit: 10);
            Assert.Equal(0, page.Tournaments.Count, "empty page");
            Assert.True(page.Cursor == null, "the end");
            Assert.True(transport.Requests[1].Url.EndsWith("/api/v1/tournaments?status=registration&limit=10"), "the query, without the absent cursor: " + transport.Requests[1].Url);
            Assert.Equal("p_9", (await client.Tournaments.RegisterAsync("t_1")).ParticipantId, "registered");
            Assert.Equal("p_9", (await client.Tournaments.CheckInAsync("t_1")).ParticipantId, "checked in");
            await client.Tournaments.LeaveAsync("t_1");
            var mine = await client.MyMatchesAsync();
            Assert.Equal("bob", mine[0].Opponent.Username, "my match's opponent");
            var missing = await Assert.ThrowsAsync<ArenaApiException>(() => client.TournamentAsync("nope"));
            Assert.Equal("not_found", missing.Code, "an unknown tournament");
        }

        [Test]
        public static async Task QueuesMatchesAndChallengesUseTheirRoutes()
        {
            var ticket = new { id = "tk_1", gameId = "g1", queue = "ranked duo", status = "open", display = 1350.5, window = 50, waitingSince = "x", matchId = (string)null, createdAt = "x", closedAt = (string)null, closeReason = (string)null };
            var challenge = new { id = "c_1", gameId = "g1", challenger = new { userId = "u1", username = "alice" }, opponent = new { userId = "u2", username = "bob" }, stake = "5", status = "open", expiresAt = "x", matchId = (string)null, createdAt = "x", closedAt = (string)null };
            var transport = Answering(request =>
            {
                if (request.Path.Contains("/tickets")) return FakeTransport.Reply(request.Method == "POST" ? 201 : 200, new { ticket = ticket });
                if (request.Path.StartsWith("/api/v1/matches/")) return FakeTransport.Reply(request.Path.EndsWith("/evidence") ? 201 : 200, request.Path.EndsWith("/evidence")
                    ? (object)new { evidence = new { id = "ev_1", sha256 = "ab", type = "text/plain", size = 5, createdAt = "x" } }
                    : new { match = new { id = "m_1", kind = "queue", gameId = "g1", tournamentId = (string)null, queue = "ranked duo", challengeId = (string)null, status = "running", rated = true, stake = "5", rake = "0.05", players = new object[0], readyBy = (string)null, deadline = (string)null, createdAt = "x", decision = (object)null } });
                if (request.Path == "/api/v1/me/challenges") return FakeTransport.Reply(200, new { challenges = new[] { challenge } });
                return FakeTransport.Reply(request.Path.EndsWith("/challenges") ? 201 : 200, new { challenge = challenge });
            });
            var client = await SignedIn(transport);
            Assert.Equal(1350.5, (await client.Queues.JoinAsync("g1", "ranked duo")).Display, "joined");
            await client.Queues.CurrentAsync("g1", "ranked duo");
            await client.Queues.LeaveAsync("g1", "ranked duo");
            await client.Matches.ReadyAsync("m_1");
            var evidence = await client.Matches.AttachEvidenceAsync("m_1", Encoding.UTF8.GetBytes("hello"), EvidenceTypes.Text);
            Assert.Equal("ev_1", evidence.Id, "evidence");
            await client.Challenges.CreateAsync("g1", "bob", "5");
            await client.Challenges.MineAsync("open");
            await client.Challenges.AcceptAsync("c_1");
            await client.Challenges.DeclineAsync("c_1");
            await client.Challenges.CancelAsync("c_1");
            var sent = transport.Requests.Skip(1).Select(r => r.Method + " " + r.Url.Substring("http://arena.test".Length)).ToArray();
            var expected = new[]
            {
                "POST /api/v1/games/g1/queues/ranked%20duo/tickets",
                "GET /api/v1/games/g1/queues/ranked%20duo/tickets/current",
                "DELETE /api/v1/games/g1/queues/ranked%20duo/tickets/current",
                "POST /api/v1/matches/m_1/ready",
                "POST /api/v1/matches/m_1/evidence",
                "POST /api/v1/games/g1/challenges",
                "GET /api/v1/me/challenges?status=open",
                "POST /api/v1/challenges/c_1/accept",
                "POST /api/v1/challenges/c_1/decline",
                "POST /api/v1/challenges/c_1/cancel",
            };
            Assert.Equal(string.Join("\n", expected), string.Join("\n", sent), "the routes");
            var upload = transport.Requests[5];
            Assert.Equal("text/plain", upload.Header("content-type"), "the evidence's type");
            Assert.Equal("hello", upload.Body, "the evidence's bytes as they are");
            Assert.Equal("{\"opponent\":\"bob\",\"stake\":\"5\"}", transport.Requests[6].Body, "the challenge, its stake a string, no expiry when not given");
        }

        [Test]
        public static async Task AllTransactionsReadsPageAfterPage()
        {
            var calls = 0;
            var transport = Answering(request =>
            {
                calls++;
                var count = calls == 1 ? 100 : 3;
                var items = Enumerable.Range(0, count).Select(i => new { id = "ltx_" + calls + "_" + i, kind = "credit", amount = "1", balanceAfter = "1", reference = (string)null, createdAt = "x" }).ToArray();
                return FakeTransport.Reply(200, new { transactions = items, cursor = "c" + calls, held = new object[0] });
            });
            var client = await SignedIn(transport);
            var all = await client.Wallet.AllTransactionsAsync("c0");
            Assert.Equal(103, all.Transactions.Count, "both pages");
            Assert.Equal("c2", all.Cursor, "the last cursor");
            Assert.True(transport.Requests[1].Url.EndsWith("/api/v1/wallet/transactions?after=c0&limit=100"), transport.Requests[1].Url);
            Assert.True(transport.Requests[2].Url.EndsWith("/api/v1/wallet/transactions?after=c1&limit=100"), transport.Requests[2].Url);
        }
    }
}
