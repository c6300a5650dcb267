// Arena.Sdk against a real server (test/sdk-csharp/play.test.ts starts it and
// sets up the game, the players, a started tournament, a staked queue and a
// funded buyer; it passes them as JSON in ARENA_PLAY): a tournament match
// played through sessions and claims to a decision; a queue match with a
// stake, the winner paid the pot less the rake; challenges declined, withdrawn
// and accepted with a stake, the match disputed and evidence attached to it;
// a PIN purchase blocked by an
// integrity check, refused for a wrong PIN, then signed. Prints "ok <step>"
// per step and "withdrawal <id>" at the end; any failure exits non-zero with
// the reason.
using System;
using System.Globalization;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Live
{
    public static class PlayProgram
    {
        private static JObject setup;
        private static string baseUrl;

        public static int Main(string[] args)
        {
            try
            {
                baseUrl = Environment.GetEnvironmentVariable("ARENA_URL");
                setup = JObject.Parse(Environment.GetEnvironmentVariable("ARENA_PLAY"));
                RunAsync().GetAwaiter().GetResult();
                return 0;
            }
            catch (Exception error)
            {
                Console.WriteLine("FAIL " + error);
                return 1;
            }
        }

        private static void Check(bool condition, string what)
        {
            if (!condition) throw new Exception("check failed: " + what);
        }

        private static void Same<T>(T expected, T actual, string what)
        {
            if (!Equals(expected, actual)) throw new Exception("check failed: " + what + ": expected <" + expected + ">, got <" + actual + ">");
        }

        private static decimal Amount(string value)
        {
            return decimal.Parse(value, NumberStyles.Number, CultureInfo.InvariantCulture);
        }

        private static async Task<ArenaClient> SignIn(string username)
        {
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = baseUrl });
            await client.Auth.LoginAsync(username, (string)setup["password"]);
            return client;
        }

        private static async Task RunAsync()
        {
            await TournamentAsync();
            await QueueAsync();
            await ChallengeAsync();
            await PurchaseAsync();
        }

        private static async Task TournamentAsync()
        {
            var gameId = (string)setup["gameId"];
            var gameKey = (string)setup["gameKey"];
            var tournamentId = (string)setup["tournament"]["id"];
            var names = setup["tournament"]["players"].Select(p => (string)p).ToArray();
            var a = await SignIn(names[0]);
            var b = await SignIn(names[1]);
            var seatA = (await a.MyMatchesAsync()).Single(m => m.TournamentId == tournamentId);
            var seatB = (await b.MyMatchesAsync()).Single(m => m.TournamentId == tournamentId);
            Same(MatchKinds.Tournament, seatA.Kind, "a tournament's match");
            Same(seatA.MatchId, seatB.MatchId, "the same match");
            Same(seatB.ParticipantId, seatA.Opponent.ParticipantId, "each other's opponent");
            Same(MatchStatuses.Running, seatA.Status, "running");
            Console.WriteLine("ok tournament: both players see their match");

            var winner = seatA.ParticipantId;
            var sessionA = await a.Game(gameId, gameKey).OpenSessionAsync(seatA.MatchId);
            var sessionB = await b.Game(gameId, gameKey).OpenSessionAsync(seatB.MatchId);
            Same(tournamentId, sessionA.Context.TournamentId, "the session's tournament");
            Same(seatA.ParticipantId, sessionA.Context.ParticipantId, "the session's seat");
            var first = await a.Game(gameId, gameKey).SubmitResultAsync(sessionA, Claim.Win(winner));
            Same(Decisions.Pending, first.Kind, "the first claim waits");
            var second = await b.Game(gameId, gameKey).SubmitResultAsync(sessionB, Claim.Win(winner));
            Check(second.Kind == Decisions.GameAdvance || second.Kind == Decisions.GameAdvancePendingFinalization, "the second claim decides: " + second.Kind);
            Same(Outcomes.Win, second.Outcome, "a win");
            Same(winner, second.WinnerParticipantId, "the winner");
            var spent = await Refused(() => a.Game(gameId, gameKey).SubmitResultAsync(sessionA, Claim.Win(winner)));
            Console.WriteLine("ok tournament: claims decided the match (" + second.Kind + "; a spent session answers " + spent + ")");

            var tournament = await a.TournamentAsync(tournamentId);
            var match = tournament.Matches.Single(m => m.Id == seatA.MatchId);
            Same(MatchStatuses.Decided, match.Status, "the bracket's match");
            Same(winner, match.WinnerParticipantId, "the bracket's winner");
            Check(tournament.Status == TournamentStatuses.Finalizing || tournament.Status == TournamentStatuses.Completed, "the tournament ends: " + tournament.Status);
            Same(tournament.Id, (await b.Tournaments.GetAsync(tournamentId)).Id, "Tournaments.GetAsync");
            Check((await a.MyMatchesAsync()).All(m => m.MatchId != seatA.MatchId), "no longer an open match");
            var seasons = await a.Ratings.SeasonsAsync(gameId);
            var me = await a.Ratings.MeAsync(gameId);
            Check(seasons.Any(s => s.Id == me.SeasonId && s.Status == "current"), "my rating is of the current season");
            var board = await a.Ratings.LeaderboardAsync(gameId, limit: 10);
            Same(me.SeasonId, board.Season.Id, "the current season's board");
            await a.Ratings.HistoryAsync(gameId);
            Console.WriteLine("ok tournament: the bracket, ratings, seasons and leaderboard read");
        }

        /// <summary>The status and code a call is refused with (a 4xx).</summary>
        private static async Task<string> Refused(Func<Task> call)
        {
            try
            {
                await call();
            }
            catch (ArenaApiException error)
            {
                Check(error.Status >= 400 && error.Status < 500, "refused with a 4xx: " + error.Status + " " + error.Code);
                return error.Status + " " + error.Code;
            }
            throw new Exception("check failed: a spent session was accepted");
        }

        private static async Task QueueAsync()
        {
            var gameId = (string)setup["gameId"];
            var gameKey = (string)setup["gameKey"];
            var queue = (string)setup["queue"]["name"];
            var names = setup["queue"]["players"].Select(p => (string)p).ToArray();
            var alice = await SignIn(names[0]);
            var bob = await SignIn(names[1]);
            var listed = (await alice.Queues.ListAsync(gameId)).Single(q => q.Name == queue);
            Same("4", listed.Stake, "the stake");
            Same("0.25", listed.Rake, "the rake");
            Same(Amount("10"), Amount((await alice.Wallet.GetAsync()).Balance), "alice's funds");

            var ticket = await alice.Queues.JoinAsync(gameId, queue);
            Same(TicketStatuses.Open, ticket.Status, "an open ticket");
            Same(ticket.Id, (await alice.Queues.CurrentAsync(gameId, queue)).Id, "the current ticket");
            await bob.Queues.JoinAsync(gameId, queue);
            Console.WriteLine("ok queue: both joined");

            // The test's matcher ticks in the background: wait for the match it finds.
            MyMatch found = null;
            for (var i = 0; i < 300 && found == null; i++)
            {
                found = (await alice.MyMatchesAsync()).FirstOrDefault(m => m.Kind == MatchKinds.Queue);
                if (found == null) await Task.Delay(50);
            }
            Check(found != null, "the matcher paired them");
            var matchId = found.MatchId;
            var view = await bob.Matches.GetAsync(matchId);
            Same(MatchStatuses.Waiting, view.Status, "in its ready check");
            Same("4", view.Stake, "staked");
            Same(queue, view.Queue, "its queue");
            Same(Amount("6"), Amount((await alice.Wallet.GetAsync()).Balance), "the stake in escrow");
            try
            {
                await alice.Queues.CurrentAsync(gameId, queue);
                throw new Exception("check failed: a matched ticket is not current");
            }
            catch (ArenaApiException error)
            {
                Same("not_found", error.Code, "no open ticket once matched");
            }

            view = await alice.Matches.ReadyAsync(matchId);
            Same(MatchStatuses.Waiting, view.Status, "one ready");
            view = await bob.Matches.ReadyAsync(matchId);
            Same(MatchStatuses.Running, view.Status, "both ready: it runs");
            Console.WriteLine("ok queue: matched and ready");

            var winner = view.Players.Single(p => p.Username == names[0]).ParticipantId;
            var decisions = new System.Collections.Generic.List<Decision>();
            foreach (var side in new[] { alice, bob })
            {
                var game = side.Game(gameId, gameKey);
                var session = await game.OpenSessionAsync(matchId);
                Check(session.Context.TournamentId == null, "a queue's match has no tournament");
                decisions.Add(await game.SubmitResultAsync(session, Claim.Win(winner)));
            }
            Same(Decisions.Pending + " " + Decisions.GameAdvance, string.Join(" ", decisions.Select(d => d.Kind)), "the decisions");
            var decided = await bob.Matches.GetAsync(matchId);
            Same(Outcomes.Win, decided.Decision.Outcome, "decided");
            Same(winner, decided.Decision.WinnerParticipantId, "alice won");
            Same("played", decided.Decision.DecidedBy, "by play");
            // Pot 8, rake 25 % = 2 to the house: alice 6 + 6, bob 6.
            Same(Amount("12"), Amount((await alice.Wallet.GetAsync()).Balance), "the winner paid the pot less the rake");
            Same(Amount("6"), Amount((await bob.Wallet.GetAsync()).Balance), "the loser's stake gone");
            var moves = (await alice.Wallet.TransactionsAsync()).Transactions.Select(t => t.Kind + " " + t.Amount + " " + (t.Kind == TransactionKinds.Credit ? "" : t.Reference));
            Same(TransactionKinds.Credit + " 10 |" + TransactionKinds.Stake + " -4 " + matchId + "|" + TransactionKinds.StakePayout + " 6 " + matchId, string.Join("|", moves), "alice's movements");
            Console.WriteLine("ok queue: the winner paid the pot less the rake");
        }

        private static async Task ChallengeAsync()
        {
            var gameId = (string)setup["gameId"];
            var gameKey = (string)setup["gameKey"];
            var names = setup["challenge"]["players"].Select(p => (string)p).ToArray();
            var frank = await SignIn(names[0]);
            var gina = await SignIn(names[1]);

            var declined = await frank.Challenges.CreateAsync(gameId, names[1], expiresInS: 600);
            Same(ChallengeStatuses.Open, declined.Status, "open");
            Check(declined.Stake == null, "no stake");
            Same(names[1], declined.Opponent.Username, "the opponent");
            Check((await gina.Challenges.MineAsync(ChallengeStatuses.Open)).Any(c => c.Id == declined.Id), "received");
            Same(ChallengeStatuses.Declined, (await gina.Challenges.DeclineAsync(declined.Id)).Status, "declined");
            var withdrawn = await frank.Challenges.CreateAsync(gameId, names[1]);
            Same(ChallengeStatuses.Cancelled, (await frank.Challenges.CancelAsync(withdrawn.Id)).Status, "withdrawn");
            Same(ChallengeStatuses.Cancelled, (await gina.Challenges.GetAsync(withdrawn.Id)).Status, "seen withdrawn");
            Console.WriteLine("ok challenge: declined and withdrawn");

            var staked = await frank.Challenges.CreateAsync(gameId, names[1], "1");
            Same("1", staked.Stake, "staked");
            var accepted = await gina.Challenges.AcceptAsync(staked.Id);
            Same(ChallengeStatuses.Accepted, accepted.Status, "accepted");
            Check(accepted.MatchId != null, "a match made");
            var match = await frank.Matches.GetAsync(accepted.MatchId);
            Same(MatchKinds.Challenge, match.Kind, "a challenge's match");
            Same(staked.Id, match.ChallengeId, "its challenge");
            Same(MatchStatuses.Running, match.Status, "running at once");
            Same(Amount("4"), Amount((await frank.Wallet.GetAsync()).Balance), "the stake in escrow");

            // Each claims their own win: a dispute, and evidence for the operator.
            var kinds = new System.Collections.Generic.List<string>();
            foreach (var side in new[] { frank, gina })
            {
                var game = side.Game(gameId, gameKey);
                var session = await game.OpenSessionAsync(accepted.MatchId);
                kinds.Add((await game.SubmitResultAsync(session, Claim.Win(session.Context.ParticipantId))).Kind);
            }
            Same(Decisions.Pending + " " + Decisions.Dispute, string.Join(" ", kinds), "disputed");
            Same(MatchStatuses.Disputed, (await gina.Matches.GetAsync(accepted.MatchId)).Status, "the match disputed");
            var bytes = System.Text.Encoding.UTF8.GetBytes("frank won 3-1\n");
            var evidence = await frank.Matches.AttachEvidenceAsync(accepted.MatchId, bytes, EvidenceTypes.Text);
            string hex;
            using (var sha = System.Security.Cryptography.SHA256.Create()) hex = string.Concat(sha.ComputeHash(bytes).Select(b => b.ToString("x2")));
            Same(hex, evidence.Sha256, "the bytes as sent");
            Same(bytes.Length, evidence.Size, "their size");
            Same(EvidenceTypes.Text, evidence.Type, "their type");
            Console.WriteLine("ok challenge: staked, accepted, disputed, evidence attached");
            Console.WriteLine("evidence " + accepted.MatchId + " " + evidence.Id);
        }

        private static async Task PurchaseAsync()
        {
            var buyer = setup["buyer"];
            var pin = (string)buyer["pin"];
            var to = (string)buyer["address"];
            var erin = await SignIn((string)buyer["username"]);
            await erin.Purchases.SetPinAsync(pin, (string)setup["password"]);
            Same(Amount("100"), Amount((await erin.Wallet.GetAsync()).Balance), "funded");

            var rooted = true;
            erin.Purchases.AddIntegrityCheck("root", () => rooted ? IntegrityVerdict.Compromised("su found") : IntegrityVerdict.Safe());
            try
            {
                await erin.Purchases.AuthorizeAsync(pin, "12.5", to);
                throw new Exception("check failed: a compromised device purchased");
            }
            catch (IntegrityBlockedException blocked)
            {
                Check(blocked.Reported, "ENV_COMPROMISED reached the server");
            }
            Console.WriteLine("ok purchase: blocked on a compromised device");
            rooted = false;

            var wrong = await erin.Purchases.AuthorizeAsync(pin == "000000" ? "111111" : "000000", "12.5", to);
            Check(!wrong.Valid && !wrong.Locked, "a wrong PIN is not valid, not locked");
            Same(1, wrong.Attempt, "the first failure");
            Check(wrong.Withdrawal == null, "no withdrawal");
            Console.WriteLine("ok purchase: a wrong PIN refused");

            var paid = await erin.Purchases.AuthorizeAsync(pin, "12.5", to);
            Check(paid.Valid, "the right PIN");
            Same(0, paid.Attempt, "failures reset");
            Same(WithdrawalStatuses.Signed, paid.Withdrawal.Status, "signed by custody");
            Same(Amount("12.5"), Amount(paid.Withdrawal.Amount), "the amount");
            Same(to, paid.Withdrawal.DestinationAddress, "the destination");
            Same(paid.IdempotencyKey, paid.Withdrawal.IdempotencyKey, "the key");
            Check(!string.IsNullOrEmpty(paid.Withdrawal.Signature), "a signature");
            Same(Amount("87.5"), Amount((await erin.Wallet.GetAsync()).Balance), "debited once");
            var withdrawals = await erin.Wallet.WithdrawalsAsync();
            Same(paid.Withdrawal.Id + " " + WithdrawalStatuses.Signed, string.Join(",", withdrawals.Withdrawals.Select(w => w.Id + " " + w.Status)), "the history");
            var last = (await erin.Wallet.AllTransactionsAsync()).Transactions.Last();
            Same(TransactionKinds.Withdrawal + " " + paid.Withdrawal.Id, last.Kind + " " + last.Reference, "the movement");
            Same(Amount("-12.5"), Amount(last.Amount), "its amount");
            Console.WriteLine("ok purchase: signed");
            Console.WriteLine("withdrawal " + paid.Withdrawal.Id + " " + paid.PinSessionId);
        }
    }
}
