// PIN purchases: integrity checks first (COMPROMISED blocks before anything is
// minted), then one PIN session and exactly one verify — never retried when
// it got no answer, never replayed after a token rotation.
using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk.Tests
{
    public static class PurchaseTests
    {
        private const string Mint = "/api/v1/security/pin-session";
        private const string Verify = "/api/v1/security/pin-session/pns_1/verify";
        private const string Events = "/api/v1/security/events";
        private const string Validate = "/api/v1/auth/validate";
        private const string Key = "0b5f1d7e-7f4c-4e0a-9d5e-3d1c2b4a5f60";

        /// <summary>A server that signs in, mints pns_1, accepts security events and answers the verify with <paramref name="verify"/>.</summary>
        private static FakeTransport Server(Func<FakeTransport.Sent, TransportResponse> verify)
        {
            return new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == Validate) return FakeTransport.Tokens("2");
                if (request.Path == Mint) return FakeTransport.Reply(201, new { sessionId = "pns_1", sessionToken = "secure-token-1", expiresAt = "2026-01-01T00:05:00.000Z", maxAttempts = 5 });
                if (request.Path == Events) return FakeTransport.Reply(202, new { accepted = true });
                if (request.Path == Verify) return verify(request);
                return FakeTransport.Error(404, "not_found");
            });
        }

        private static async Task<ArenaClient> SignedIn(FakeTransport transport)
        {
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            await client.Auth.LoginAsync("alice", "secret");
            return client;
        }

        private static object Signed(string key)
        {
            return new
            {
                valid = true,
                locked = false,
                attempt = 0,
                withdrawal = new { id = "wd_1", status = "signed", amount = "12.50", asset = "USDC", destinationAddress = "Dest111", idempotencyKey = key, signature = "sig", createdAt = "2026-01-01T00:00:00.000Z" },
            };
        }

        [Test]
        public static async Task GoodPathMintsVerifiesOnceAndReturnsTheWithdrawal()
        {
            var transport = Server(request => FakeTransport.Reply(200, Signed((string)request.Json["idempotencyKey"])));
            var client = await SignedIn(transport);
            var result = await client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111", Key);
            Assert.True(result.Valid, "valid");
            Assert.Equal("signed", result.Withdrawal.Status, "the withdrawal");
            Assert.Equal(Key, result.IdempotencyKey, "the key given");
            Assert.Equal("pns_1", result.PinSessionId, "the session minted");
            Assert.Equal(1, transport.Count(Mint), "one mint");
            Assert.Equal(1, transport.Count(Verify), "one verify");
            Assert.Equal(0, transport.Count(Events), "SAFE reports nothing");
            var mint = transport.Requests.Single(r => r.Path == Mint);
            Assert.Equal("{}", mint.Body, "the mint's body is empty JSON");
            var verify = transport.Requests.Single(r => r.Path == Verify);
            Assert.Equal("secure-token-1", verify.Header("x-secure-session"), "the session token");
            Assert.Equal("Bearer access-1", verify.Header("authorization"), "the bearer");
            Assert.Equal("1234", (string)verify.Json["pin"], "pin");
            Assert.Equal("12.50", (string)verify.Json["amount"], "amount as a string");
            Assert.Equal(Newtonsoft.Json.Linq.JTokenType.String, verify.Json["amount"].Type, "amount is never a number");
            Assert.Equal("Dest111", (string)verify.Json["destinationAddress"], "destination");
            Assert.Equal(Key, (string)verify.Json["idempotencyKey"], "key");
        }

        [Test]
        public static async Task AWrongPinIsAnAnswerNotAnError()
        {
            var transport = Server(request => FakeTransport.Reply(200, new { valid = false, locked = false, attempt = 2 }));
            var client = await SignedIn(transport);
            var result = await client.Purchases.AuthorizeAsync("0000", "1", "Dest111");
            Assert.True(!result.Valid, "not valid");
            Assert.Equal(2, result.Attempt, "attempt");
            Assert.True(result.Withdrawal == null, "no withdrawal");
            Assert.True(Guid.Parse(result.IdempotencyKey) != Guid.Empty, "a new UUID key by default");
        }

        [Test]
        public static async Task AVerifyWithoutAnswerIsOutcomeUnknownAndNeverSentAgain()
        {
            var transport = Server(request => { throw FakeTransport.NoAnswer(); });
            var client = await SignedIn(transport);
            var error = await Assert.ThrowsAsync<OutcomeUnknownException>(() => client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111", Key));
            Assert.Equal(Key, error.IdempotencyKey, "the key to ask again with");
            Assert.Equal("pns_1", error.PinSessionId, "the session");
            Assert.True(error.InnerException is ArenaNetworkException, "the cause");
            Assert.Equal(1, transport.Count(Verify), "exactly one verify");
            Assert.Equal(Key, (string)transport.Requests.Single(r => r.Path == Verify).Json["idempotencyKey"], "sent with the key");

            // The key made by default is the one the exception names.
            var again = await Assert.ThrowsAsync<OutcomeUnknownException>(() => client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111"));
            Assert.Equal((string)transport.Requests.Last(r => r.Path == Verify).Json["idempotencyKey"], again.IdempotencyKey, "the default key");
            Assert.Equal(2, transport.Count(Verify), "one verify per authorize");
        }

        [Test]
        public static async Task AFiveHundredOrAnUnreadableAnswerIsOutcomeUnknown()
        {
            var answers = new[] { FakeTransport.Error(502, "bad_gateway"), FakeTransport.Reply(200, "<html>") };
            var next = 0;
            var transport = Server(request => answers[next++]);
            var client = await SignedIn(transport);
            var fiveHundred = await Assert.ThrowsAsync<OutcomeUnknownException>(() => client.Purchases.AuthorizeAsync("1234", "1", "Dest111", Key));
            Assert.True(fiveHundred.InnerException is ArenaApiException, "the 502 as the cause");
            await Assert.ThrowsAsync<OutcomeUnknownException>(() => client.Purchases.AuthorizeAsync("1234", "1", "Dest111", Key));
            Assert.Equal(2, transport.Count(Verify), "one verify each");
        }

        [Test]
        public static async Task AVerifyAnswered401IsNotReplayedAfterARotation()
        {
            var transport = Server(request => FakeTransport.Error(401, "unauthorized"));
            var client = await SignedIn(transport);
            var error = await Assert.ThrowsAsync<ArenaApiException>(() => client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111", Key));
            Assert.Equal(401, error.Status, "the 401 itself");
            Assert.Equal("unauthorized", error.Code, "its code");
            Assert.Equal(1, transport.Count(Verify), "one verify request");
            Assert.Equal(0, transport.Count(Validate), "no rotation to replay it after");
        }

        [Test]
        public static async Task ACancellationWhileTheVerifyIsInFlightIsOutcomeUnknown()
        {
            var cancel = new CancellationTokenSource();
            var transport = Server(request => { cancel.Cancel(); throw new OperationCanceledException(cancel.Token); });
            var client = await SignedIn(transport);
            var error = await Assert.ThrowsAsync<OutcomeUnknownException>(() => client.Purchases.AuthorizeAsync("1234", "1", "Dest111", Key, cancel.Token));
            Assert.Equal(Key, error.IdempotencyKey, "the key");
            Assert.Equal(1, transport.Count(Verify), "one verify");
        }

        [Test]
        public static async Task NoTokenForTheVerifyIsAnOrdinaryErrorAndNothingIsSent()
        {
            // The access token expires between the mint and the verify, and its rotation gets no answer.
            var now = DateTimeOffset.UtcNow;
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1", 900);
                if (request.Path == Validate) throw FakeTransport.NoAnswer();
                if (request.Path == Mint)
                {
                    now = now.AddHours(1);
                    return FakeTransport.Reply(201, new { sessionId = "pns_1", sessionToken = "t", expiresAt = "x", maxAttempts = 5 });
                }
                return FakeTransport.Reply(200, Signed(Key));
            });
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport, Now = () => now });
            await client.Auth.LoginAsync("alice", "secret");
            await Assert.ThrowsAsync<ArenaNetworkException>(() => client.Purchases.AuthorizeAsync("1234", "1", "Dest111", Key));
            Assert.Equal(1, transport.Count(Validate), "the rotation was tried");
            Assert.Equal(0, transport.Count(Verify), "no verify without a token");
        }

        [Test]
        public static async Task PinRefusalsAreTyped()
        {
            var answers = new[]
            {
                FakeTransport.Error(429, "pin_locked"),
                FakeTransport.Reply(429, "Too Many Requests"),
                FakeTransport.Error(429, "rate_limited"),
                FakeTransport.Error(410, "session_expired"),
                FakeTransport.Reply(410, "Gone"),
                FakeTransport.Error(403, "forbidden"),
            };
            var next = 0;
            var transport = Server(request => answers[next++]);
            var client = await SignedIn(transport);
            Func<Task> authorize = () => client.Purchases.AuthorizeAsync("1234", "1", "Dest111");
            await Assert.ThrowsAsync<PinLockedException>(authorize, "429 pin_locked");
            await Assert.ThrowsAsync<PinLockedException>(authorize, "a bare 429 on the PIN route is the lock");
            await Assert.ThrowsAsync<RateLimitedException>(authorize, "429 rate_limited");
            await Assert.ThrowsAsync<PinSessionExpiredException>(authorize, "410 session_expired");
            await Assert.ThrowsAsync<PinSessionExpiredException>(authorize, "a bare 410");
            var forbidden = await Assert.ThrowsAsync<ArenaApiException>(authorize, "403");
            Assert.Equal(typeof(ArenaApiException), forbidden.GetType(), "other refusals stay ArenaApiException");
            Assert.Equal(6, transport.Count(Verify), "one verify each");
        }

        [Test]
        public static async Task ACompromisedCheckBlocksBeforeAnythingIsMinted()
        {
            var transport = Server(request => FakeTransport.Reply(200, Signed(Key)));
            var client = await SignedIn(transport);
            client.Purchases.AddIntegrityCheck("debugger", () => IntegrityVerdict.Safe());
            client.Purchases.AddIntegrityCheck("root", () => IntegrityVerdict.Compromised("su found"));
            var error = await Assert.ThrowsAsync<IntegrityBlockedException>(() => client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111", Key));
            Assert.True(error.Reported, "the report got through");
            Assert.Equal(IntegrityLevels.Compromised, error.Level, "level");
            Assert.True(error.Message.Contains("root") && !error.Message.Contains("debugger"), "the message names the compromised check: " + error.Message);
            Assert.Equal(0, transport.Count(Mint), "no mint");
            Assert.Equal(0, transport.Count(Verify), "no verify");
            Assert.Equal(1, transport.Count(Events), "one report");
            var report = transport.Requests.Single(r => r.Path == Events).Json;
            Assert.Equal("ENV_COMPROMISED", (string)report["kind"], "kind");
            Assert.Equal("COMPROMISED", (string)report["level"], "level");
            var findings = report["details"]["findings"];
            Assert.Equal("root", (string)findings[1]["check"], "the finding's check");
            Assert.Equal("su found", (string)findings[1]["reason"], "the finding's reason");
            Assert.Equal("SAFE", (string)findings[0]["level"], "the other finding");
        }

        private sealed class Throwing : IIntegrityCheck
        {
            public string Name { get { return "frida"; } }
            public Task<IntegrityVerdict> CheckAsync(CancellationToken cancellationToken) { throw new InvalidOperationException("hooked"); }
        }

        [Test]
        public static async Task AThrowingCheckCountsAsCompromised()
        {
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == Events) return FakeTransport.Error(500, "internal");
                return FakeTransport.Reply(201, new { sessionId = "pns_1", sessionToken = "t", expiresAt = "x", maxAttempts = 5 });
            });
            var client = await SignedIn(transport);
            client.Purchases.AddIntegrityCheck(new Throwing());
            client.Purchases.AddIntegrityCheck("async", async ct => { await Task.Yield(); throw new Exception("broken"); });
            client.Purchases.AddIntegrityCheck("", () => null);
            var report = await client.Purchases.CheckIntegrityAsync();
            Assert.Equal(IntegrityLevels.Compromised, report.Level, "worst level");
            Assert.Equal("check failed: hooked", report.Findings[0].Reason, "a synchronous throw");
            Assert.Equal("check failed: broken", report.Findings[1].Reason, "an asynchronous throw");
            Assert.Equal("check_3", report.Findings[2].Check, "a nameless check is named by position");
            Assert.Equal("check returned no level", report.Findings[2].Reason, "no verdict");
            var error = await Assert.ThrowsAsync<IntegrityBlockedException>(() => client.Purchases.AuthorizeAsync("1234", "1", "Dest111"));
            Assert.True(!error.Reported, "a report the server refused is not reported, and still blocks");
            Assert.Equal(0, transport.Count(Mint), "no mint");
        }

        [Test]
        public static async Task AWarningIsReportedAndThePurchaseGoesOn()
        {
            var transport = Server(request => FakeTransport.Reply(200, Signed(Key)));
            var client = await SignedIn(transport);
            client.Purchases.AddIntegrityCheck("emulator", () => IntegrityVerdict.Warn("ranchu"));
            var result = await client.Purchases.AuthorizeAsync("1234", "12.50", "Dest111", Key);
            Assert.True(result.Valid, "purchased");
            var report = transport.Requests.Single(r => r.Path == Events).Json;
            Assert.Equal("ENV_WARN", (string)report["kind"], "ENV_WARN reported");
            Assert.Equal("WARN", (string)report["level"], "level");
            var order = transport.Requests.Select(r => r.Path).Where(p => p != "/api/v1/user/login").ToArray();
            Assert.Equal(Events + " " + Mint + " " + Verify, string.Join(" ", order), "report, mint, verify");
        }

        [Test]
        public static async Task NoChecksIsSafe()
        {
            var client = await SignedIn(Server(request => FakeTransport.Reply(200, Signed(Key))));
            var report = await client.Purchases.CheckIntegrityAsync();
            Assert.Equal(IntegrityLevels.Safe, report.Level, "SAFE");
            Assert.Equal(0, report.Findings.Count, "no findings");
        }

        [Test]
        public static async Task SetPinSendsThePinAndThePassword()
        {
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                return FakeTransport.Reply(200, new { ok = true });
            });
            var client = await SignedIn(transport);
            await client.Purchases.SetPinAsync("123456", "secret");
            var sent = transport.Requests.Last();
            Assert.Equal("PUT /api/v1/security/pin", sent.Method + " " + sent.Path, "the route");
            Assert.Equal("123456", (string)sent.Json["pin"], "pin");
            Assert.Equal("secret", (string)sent.Json["password"], "password");
        }
    }
}
