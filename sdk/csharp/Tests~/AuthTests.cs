// Sign-ins, the token store, rotation and the device-code poll, against
// FakeTransport: what the client sends, what it keeps, and when it rotates.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tests
{
    public static class AuthTests
    {
        private const string Base = "http://arena.test";

        private static ArenaClient Client(FakeTransport transport, IArenaStore store = null, Func<DateTimeOffset> now = null)
        {
            return new ArenaClient(new ArenaClientOptions { BaseUrl = Base, Transport = transport, Store = store, Now = now });
        }

        /// <summary>A fake server: sign-ins answer tokens tagged by count, /auth/validate rotates, /me answers only the current access token.</summary>
        private sealed class FakeServer
        {
            public int SignIns;
            public int Rotations;
            public string Valid;
            public readonly FakeTransport Transport;

            public FakeServer()
            {
                Transport = new FakeTransport(request => Handle(request));
            }

            private TransportResponse Handle(FakeTransport.Sent request)
            {
                lock (this)
                {
                    if (request.Path.StartsWith("/api/v1/user/login", StringComparison.Ordinal))
                    {
                        var tag = "s" + (++SignIns);
                        Valid = "access-" + tag;
                        var answer = FakeTransport.Tokens(tag, 900, request.Path == "/api/v1/user/login" ? (bool?)null : request.Path == "/api/v1/user/login/device" && request.Json["create"] != null);
                        // The server answers the device token it was sent.
                        return new TransportResponse(200, new Dictionary<string, string> { { "x-arena-device", request.Header("x-arena-device") } }, answer.Body);
                    }
                    if (request.Path == "/api/v1/auth/validate")
                    {
                        var tag = "r" + (++Rotations);
                        Valid = "access-" + tag;
                        return FakeTransport.Tokens(tag);
                    }
                    if (request.Path == "/api/v1/user/s/logout") return FakeTransport.Reply(200, new { revoked = 1 });
                    if (request.Header("authorization") != "Bearer " + Valid) return FakeTransport.Error(401, "unauthorized");
                    return FakeTransport.Reply(200, new { user = new { id = "usr_test", email = (string)null, username = "player_test", country = "ZZ", createdAt = "2026-01-01T00:00:00.000Z", emailVerified = false, identities = new[] { "device" } } });
                }
            }
        }

        // ---- the token store ----

        [Test]
        public static async Task TokensPersistAndARestartedClientUsesThem()
        {
            var server = new FakeServer();
            var store = new MemoryArenaStore();
            var first = Client(server.Transport, store);
            await first.Auth.LoginAsync("alice", "secret");
            Assert.Equal("access-s1", store.Get(ArenaStoreKeys.AccessToken), "access token stored");
            Assert.Equal("refresh-s1", store.Get(ArenaStoreKeys.RefreshToken), "refresh token stored");
            Assert.True(store.Get(ArenaStoreKeys.ExpiresAt) != null, "expiry stored");

            var second = Client(server.Transport, store);
            Assert.True(second.Auth.IsSignedIn, "a new client on the same store is signed in");
            Assert.Equal("access-s1", second.Auth.Current.AccessToken, "with the kept tokens");
            Assert.Equal("usr_test", (await second.MeAsync()).Id, "and they work");
            Assert.Equal("Bearer access-s1", server.Transport.Requests.Last().Header("authorization"), "sent with the kept access token");
        }

        [Test]
        public static async Task ClearAndLogoutForgetTheTokensButKeepTheDeviceTokenAndSecret()
        {
            var server = new FakeServer();
            var store = new MemoryArenaStore();
            var client = Client(server.Transport, store);
            var guest = await client.Auth.LoginAsGuestAsync();
            var device = client.Auth.DeviceToken;
            client.Auth.Clear();
            Assert.True(!client.Auth.IsSignedIn, "Clear signs out");
            Assert.Equal(null, store.Get(ArenaStoreKeys.AccessToken), "access token gone from the store");
            Assert.Equal(null, store.Get(ArenaStoreKeys.RefreshToken), "refresh token gone from the store");
            Assert.Equal(null, store.Get(ArenaStoreKeys.ExpiresAt), "expiry gone from the store");

            await client.Auth.LoginAsGuestAsync();
            var result = await client.Auth.LogoutAsync();
            Assert.Equal(1, result.Revoked, "the logout's answer");
            Assert.True(!client.Auth.IsSignedIn, "logout signs out");
            Assert.Equal(null, store.Get(ArenaStoreKeys.AccessToken), "logout empties the store's tokens");
            Assert.Equal(guest.DeviceSecret, store.Get(ArenaStoreKeys.DeviceSecret), "the guest's secret stays");
            Assert.Equal(device, client.Auth.DeviceToken, "the device token stays");
            Assert.Equal(device, Client(server.Transport, store).Auth.DeviceToken, "and a new client on the store has it");
        }

        [Test]
        public static async Task TheDeviceTokenAnsweredIsKeptAndSentWithEverySignIn()
        {
            var store = new MemoryArenaStore();
            var transport = new FakeTransport(request =>
            {
                var tokens = FakeTransport.Tokens("1", 900, false);
                return new TransportResponse(200, new Dictionary<string, string> { { "x-arena-device", "device-from-server" } }, tokens.Body);
            });
            var client = Client(transport, store);
            var made = client.Auth.DeviceToken;
            Assert.Equal(43, made.Length, "the SDK makes a 32-byte base64url device token");
            await client.Auth.LoginAsync("alice", "secret");
            Assert.Equal(made, transport.Requests[0].Header("x-arena-device"), "sent with the sign-in");
            Assert.Equal("device-from-server", store.Get(ArenaStoreKeys.DeviceToken), "the answered one kept");
            await Client(transport, store).Auth.LoginWithSteamAsync("abcd");
            Assert.Equal("device-from-server", transport.Requests[1].Header("x-arena-device"), "a new client sends the kept one");
        }

        [Test]
        public static async Task AGuestsSecretIsKeptAndReused()
        {
            var server = new FakeServer();
            var store = new MemoryArenaStore();
            var first = await Client(server.Transport, store).Auth.LoginAsGuestAsync();
            var sent = server.Transport.Requests[0].Json;
            Assert.Equal(43, first.DeviceSecret.Length, "a made secret: 32 bytes base64url");
            Assert.Equal(first.DeviceSecret, (string)sent["deviceSecret"], "sent");
            Assert.Equal(true, (bool)sent["create"], "a made secret creates the account");
            Assert.True(first.Created, "created");
            Assert.Equal(first.DeviceSecret, store.Get(ArenaStoreKeys.DeviceSecret), "kept in the store");

            var again = await Client(server.Transport, store).Auth.LoginAsGuestAsync();
            var resent = server.Transport.Requests[1].Json;
            Assert.Equal(first.DeviceSecret, again.DeviceSecret, "the kept secret reused");
            Assert.Equal(first.DeviceSecret, (string)resent["deviceSecret"], "and sent");
            Assert.True(resent["create"] == null, "a kept secret does not ask to create");

            await Client(server.Transport, store).Auth.LoginAsGuestAsync(create: true);
            Assert.Equal(first.DeviceSecret, (string)server.Transport.Requests[2].Json["deviceSecret"], "create: true with the kept secret");
            Assert.Equal(true, (bool)server.Transport.Requests[2].Json["create"], "asks to create (the kept secret's account was gone)");

            await Client(server.Transport, store).Auth.LoginAsGuestAsync("given-secret-of-enough-characters", true);
            Assert.Equal("given-secret-of-enough-characters", (string)server.Transport.Requests[3].Json["deviceSecret"], "a given secret wins");
            Assert.Equal("given-secret-of-enough-characters", store.Get(ArenaStoreKeys.DeviceSecret), "and is the one kept after");
        }

        [Test]
        public static async Task AFailedGuestSignInKeepsNoSecret()
        {
            var store = new MemoryArenaStore();
            var client = Client(new FakeTransport(request => FakeTransport.Error(429, "rate_limited")), store);
            await Assert.ThrowsAsync<RateLimitedException>(() => client.Auth.LoginAsGuestAsync(), "429");
            Assert.Equal(null, store.Get(ArenaStoreKeys.DeviceSecret), "nothing kept");
        }

        [Test]
        public static async Task DeletingAGuestForgetsItsSecret()
        {
            var store = new MemoryArenaStore();
            var transport = new FakeTransport(request =>
                request.Path == "/api/v1/me/delete" ? FakeTransport.Reply(200, new { deleted = true, deletedAt = "2026-01-01T00:00:00.000Z" }) : FakeTransport.Tokens("1", 900, true));
            var client = Client(transport, store);
            await client.Auth.LoginAsGuestAsync();
            var deleted = await client.Auth.DeleteAccountAsync();
            Assert.True(deleted.Deleted, "deleted");
            Assert.Equal("{}", transport.Requests[1].Body, "no password sent for a guest");
            Assert.True(!client.Auth.IsSignedIn, "signed out");
            Assert.Equal(null, store.Get(ArenaStoreKeys.DeviceSecret), "the dead secret forgotten");
        }

        [Test]
        public static void FileStoreKeepsValuesAcrossInstancesAndRefusesAGarbledFile()
        {
            var dir = Path.Combine(Path.GetTempPath(), "arena-store-" + Guid.NewGuid().ToString("N"));
            try
            {
                var file = Path.Combine(dir, "nested", "arena.json");
                var store = new FileArenaStore(file);
                Assert.Equal(null, store.Get("a"), "empty before");
                store.Set("a", "1");
                store.Set("b", "two \"quoted\"");
                store.Delete("a");
                var reopened = new FileArenaStore(file);
                Assert.Equal(null, reopened.Get("a"), "deleted stays deleted");
                Assert.Equal("two \"quoted\"", reopened.Get("b"), "kept across instances");
                Assert.Equal(1, Directory.GetFiles(Path.GetDirectoryName(file)).Length, "no temp file left behind");
                File.WriteAllText(file, "{ not json");
                ArenaException error = null;
                try { new FileArenaStore(file); } catch (ArenaException refused) { error = refused; }
                Assert.True(error != null && error.Message.Contains(file), "a garbled file is an ArenaException naming it");
            }
            finally
            {
                if (Directory.Exists(dir)) Directory.Delete(dir, true);
            }
        }

        [Test]
        public static async Task AClientOnAFileStoreIsSignedInAfterARestart()
        {
            var dir = Path.Combine(Path.GetTempPath(), "arena-store-" + Guid.NewGuid().ToString("N"));
            try
            {
                var file = Path.Combine(dir, "arena.json");
                var server = new FakeServer();
                var guest = await Client(server.Transport, new FileArenaStore(file)).Auth.LoginAsGuestAsync();
                var restarted = Client(server.Transport, new FileArenaStore(file));
                Assert.Equal("access-s1", restarted.Auth.Current.AccessToken, "tokens from the file");
                await restarted.Auth.LoginAsGuestAsync();
                Assert.Equal(guest.DeviceSecret, (string)server.Transport.Requests.Last().Json["deviceSecret"], "the secret from the file");
            }
            finally
            {
                if (Directory.Exists(dir)) Directory.Delete(dir, true);
            }
        }

        // ---- rotation ----

        [Test]
        public static async Task FiveCallsOnAnExpiredTokenShareOneRotation()
        {
            // The five 401s are held until all five calls were sent, so all five meet the expiry at once.
            var allSent = new TaskCompletionSource<bool>();
            var expired = 0;
            var rotations = 0;
            var transport = new FakeTransport(async request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == "/api/v1/auth/validate")
                {
                    Interlocked.Increment(ref rotations);
                    await Task.Delay(50).ConfigureAwait(false);
                    return FakeTransport.Tokens("2");
                }
                if (request.Header("authorization") != "Bearer access-2")
                {
                    if (Interlocked.Increment(ref expired) == 5) allSent.TrySetResult(true);
                    await allSent.Task.ConfigureAwait(false);
                    return FakeTransport.Error(401, "unauthorized");
                }
                return FakeTransport.Reply(200, new { user = new { id = "usr_test" } });
            });
            var client = Client(transport);
            await client.Auth.LoginAsync("alice", "secret");
            var users = await Task.WhenAll(Enumerable.Range(0, 5).Select(_ => Task.Run(() => client.MeAsync())));
            Assert.Equal(5, expired, "five calls sent with the expired token");
            Assert.True(users.All(user => user.Id == "usr_test"), "every call answered");
            Assert.Equal(1, rotations, "exactly one /auth/validate");
            var replays = transport.Requests.Count(r => r.Path == "/api/v1/me" && r.Header("authorization") == "Bearer access-2");
            Assert.Equal(5, replays, "all five replayed with the new token");
            Assert.Equal("Bearer access-1", transport.Requests.First(r => r.Path == "/api/v1/auth/validate").Header("authorization"), "the rotation carries the expired access token");
        }

        [Test]
        public static async Task ARotationWithoutAnAnswerIsRetriedWithTheSameRefreshToken()
        {
            var validates = 0;
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == "/api/v1/auth/validate")
                {
                    if (Interlocked.Increment(ref validates) == 1) throw FakeTransport.NoAnswer();
                    return FakeTransport.Tokens("2");
                }
                if (request.Header("authorization") != "Bearer access-2") return FakeTransport.Error(401, "unauthorized");
                return FakeTransport.Reply(200, new { user = new { id = "usr_test" } });
            });
            var client = Client(transport);
            await client.Auth.LoginAsync("alice", "secret");
            await Assert.ThrowsAsync<ArenaNetworkException>(() => client.MeAsync(), "the lost rotation fails the call");
            Assert.True(client.Auth.IsSignedIn, "the tokens are kept");
            Assert.Equal("usr_test", (await client.MeAsync()).Id, "the next call rotates and succeeds");
            var sent = transport.Requests.Where(r => r.Path == "/api/v1/auth/validate").Select(r => (string)r.Json["refreshToken"]).ToList();
            Assert.Equal(2, sent.Count, "two rotations");
            Assert.Equal("refresh-1", sent[0], "the first with the refresh token held");
            Assert.Equal("refresh-1", sent[1], "the retry with the SAME refresh token");
        }

        [Test]
        public static async Task ASignInDuringARotationWins()
        {
            var release = new TaskCompletionSource<bool>();
            var logins = 0;
            var transport = new FakeTransport(async request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens(Interlocked.Increment(ref logins) == 1 ? "1" : "bob");
                if (request.Path == "/api/v1/auth/validate")
                {
                    await release.Task.ConfigureAwait(false);
                    return FakeTransport.Tokens("late");
                }
                return FakeTransport.Reply(200, new { revoked = 0 });
            });
            var client = Client(transport);
            await client.Auth.LoginAsync("alice", "secret");
            var rotation = client.Auth.RefreshAsync();
            await client.Auth.LoginAsync("bob", "secret");
            release.SetResult(true);
            await rotation;
            Assert.Equal("access-bob", client.Auth.Current.AccessToken, "the sign-in's tokens stay");
            Assert.Equal("refresh-bob", client.Auth.Current.RefreshToken, "the late rotation's are dropped");
        }

        [Test]
        public static async Task A401FromValidateClearsTheTokens()
        {
            var store = new MemoryArenaStore();
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == "/api/v1/auth/validate") return FakeTransport.Error(401, "refresh_token_reused");
                return FakeTransport.Error(401, "unauthorized");
            });
            var client = Client(transport, store);
            await client.Auth.LoginAsync("alice", "secret");
            var error = await Assert.ThrowsAsync<ArenaApiException>(() => client.MeAsync(), "the call fails");
            Assert.Equal("refresh_token_reused", error.Code, "with the rotation's error");
            Assert.True(!client.Auth.IsSignedIn, "the tokens are gone");
            Assert.Equal(null, store.Get(ArenaStoreKeys.RefreshToken), "from the store too");
            await Assert.ThrowsAsync<NotSignedInException>(() => client.MeAsync(), "the next call is not signed in");
        }

        [Test]
        public static async Task TokensChangedFiresWithNewTokensAndWithNull()
        {
            var server = new FakeServer();
            var client = Client(server.Transport);
            var seen = new List<Tokens>();
            client.Auth.TokensChanged += tokens => { lock (seen) seen.Add(tokens); };
            await client.Auth.LoginAsync("alice", "secret");
            await client.Auth.RefreshAsync();
            await client.Auth.LogoutAsync();
            Assert.Equal(3, seen.Count, "sign-in, rotation, logout");
            Assert.Equal("access-s1", seen[0].AccessToken, "the sign-in's tokens");
            Assert.Equal("access-r1", seen[1].AccessToken, "the rotation's tokens");
            Assert.Equal("refresh-r1", seen[1].RefreshToken, "with the rotated refresh token");
            Assert.True(seen[1].ExpiresAt.HasValue, "and their expiry");
            Assert.Equal(null, seen[2], "null when they are gone");
        }

        [Test]
        public static async Task ATokenKnownToBeExpiredIsRotatedBeforeSending()
        {
            var clock = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
            var server = new FakeServer();
            var client = Client(server.Transport, null, () => clock);
            await client.Auth.LoginAsync("alice", "secret");
            clock = clock.AddSeconds(900 - 29);
            await client.MeAsync();
            Assert.Equal(1, server.Rotations, "rotated within the margin");
            Assert.Equal(1, server.Transport.Count("/api/v1/me"), "no 401 round trip");
        }

        // ---- logout ----

        [Test]
        public static async Task ALogoutThatGotNoAnswerOrA5xxKeepsTheTokens()
        {
            var answer = 0;
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                answer++;
                if (answer == 1) throw FakeTransport.NoAnswer();
                if (answer == 2) return FakeTransport.Error(503, "service_unavailable");
                return FakeTransport.Reply(200, new { revoked = 3 });
            });
            var client = Client(transport);
            await client.Auth.LoginAsync("alice", "secret");
            await Assert.ThrowsAsync<ArenaNetworkException>(() => client.Auth.LogoutAsync(), "no answer");
            Assert.True(client.Auth.IsSignedIn, "kept after no answer");
            await Assert.ThrowsAsync<ArenaApiException>(() => client.Auth.LogoutAsync(), "503");
            Assert.True(client.Auth.IsSignedIn, "kept after a 5xx");
            Assert.Equal(3, (await client.Auth.LogoutAsync(all: true)).Revoked, "then it goes through");
            Assert.Equal(true, (bool)transport.Requests.Last().Json["all"], "all sent");
            Assert.True(!client.Auth.IsSignedIn, "and the tokens are gone");
        }

        [Test]
        public static async Task LogoutOthersKeepsThisClientSignedIn()
        {
            var server = new FakeServer();
            var client = Client(server.Transport);
            await client.Auth.LoginAsync("alice", "secret");
            await client.Auth.LogoutAsync(others: true);
            Assert.Equal("{\"others\":true}", server.Transport.Requests.Last().Body, "only others sent");
            Assert.True(client.Auth.IsSignedIn, "still signed in");
        }

        // ---- device code ----

        private static FakeTransport DeviceServer(params TransportResponse[] polls)
        {
            var next = 0;
            return new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/auth/device-code")
                    return FakeTransport.Reply(200, new { deviceCode = "dc-1", userCode = "ABCD-EFGH", verificationUri = "http://arena.test/device", verificationUriComplete = "http://arena.test/device?code=ABCD-EFGH", expiresIn = 600, interval = 3 });
                return polls[Math.Min(next++, polls.Length - 1)];
            });
        }

        [Test]
        public static async Task DeviceCodePollWaitsAddsFiveSecondsAfterSlowDownAndSignsIn()
        {
            var transport = DeviceServer(FakeTransport.Error(400, "authorization_pending"), FakeTransport.Error(400, "slow_down"), FakeTransport.Error(400, "authorization_pending"), FakeTransport.Tokens("tv"));
            var client = Client(transport);
            var waits = new List<TimeSpan>();
            client.Auth.Delay = (wait, ct) => { waits.Add(wait); return Task.FromResult(true); };
            var code = await client.Auth.StartDeviceCodeAsync();
            Assert.Equal("ABCD-EFGH", code.UserCode, "the user code");
            Assert.Equal(3, code.Interval, "the interval");
            var user = await client.Auth.PollDeviceCodeAsync(code);
            Assert.Equal("usr_test", user.Id, "the approved user");
            Assert.Equal("access-tv", client.Auth.Current.AccessToken, "signed in here");
            Assert.Equal("3,3,8,8", string.Join(",", waits.Select(w => w.TotalSeconds.ToString())), "the code's interval, 5 s more after slow_down");
            Assert.Equal(4, transport.Count("/api/v1/auth/device-code/token"), "four polls");
            Assert.Equal("dc-1", (string)transport.Requests.Last().Json["deviceCode"], "with the device code");
            Assert.Equal(client.Auth.DeviceToken, transport.Requests.Last().Header("x-arena-device"), "and the device token");
        }

        [Test]
        public static async Task DeviceCodeCheckIsNullWhilePendingAndThrowsOnDenial()
        {
            var client = Client(DeviceServer(FakeTransport.Error(400, "authorization_pending"), FakeTransport.Error(400, "access_denied")));
            Assert.Equal(null, await client.Auth.CheckDeviceCodeAsync("dc-1"), "pending is null");
            var denied = await Assert.ThrowsAsync<ArenaApiException>(() => client.Auth.PollDeviceCodeAsync("dc-1", TimeSpan.Zero), "denied");
            Assert.Equal("access_denied", denied.Code, "access_denied ends the poll");
            Assert.True(!client.Auth.IsSignedIn, "not signed in");
        }

        [Test]
        public static async Task CancellingEndsTheDeviceCodePoll()
        {
            var transport = DeviceServer(FakeTransport.Error(400, "authorization_pending"));
            var client = Client(transport);
            using (var cancel = new CancellationTokenSource())
            {
                var poll = client.Auth.PollDeviceCodeAsync("dc-1", TimeSpan.FromMilliseconds(20), cancel.Token);
                for (var i = 0; i < 200 && transport.Count("/api/v1/auth/device-code/token") < 2; i++) await Task.Delay(10);
                cancel.Cancel();
                await Assert.ThrowsAsync<OperationCanceledException>(() => poll, "the poll ends with OperationCanceledException");
                var polls = transport.Count("/api/v1/auth/device-code/token");
                Assert.True(polls >= 2, "it polled while pending");
                await Task.Delay(100);
                Assert.Equal(polls, transport.Count("/api/v1/auth/device-code/token"), "and no more after");
            }
        }

        // ---- other sign-ins ----

        [Test]
        public static async Task IdTokenAndSteamSignInsSendTheirBodies()
        {
            var transport = new FakeTransport(request => FakeTransport.Tokens("1", 900, false));
            var client = Client(transport);
            await client.Auth.LoginWithIdTokenAsync("oidc:google", "jwt", "n-1", true);
            Assert.Equal("/api/v1/user/login/oidc/google", transport.Requests[0].Path, "oidc: stripped");
            Assert.Equal("{\"idToken\":\"jwt\",\"nonce\":\"n-1\",\"create\":true}", transport.Requests[0].Body, "the ID-token body");
            await client.Auth.LoginWithIdTokenAsync("google", "jwt");
            Assert.Equal("/api/v1/user/login/oidc/google", transport.Requests[1].Path, "a bare name");
            Assert.Equal("{\"idToken\":\"jwt\"}", transport.Requests[1].Body, "nothing optional sent");
            await client.Auth.LoginWithSteamAsync("0a0b", true);
            Assert.Equal("{\"ticket\":\"0a0b\",\"create\":true}", transport.Requests[2].Body, "the Steam body");
        }

        [Test]
        public static async Task WebSignInUrlAndItsReturn()
        {
            var transport = new FakeTransport(request => FakeTransport.Tokens("web", 900, false));
            var client = Client(transport);
            Assert.Equal("http://arena.test/api/v1/auth/oidc/google/start?redirect=https%3A%2F%2Fgame.example%2Fback%3Fa%3D1&create=1",
                client.Auth.BeginWebLogin("oidc:google", "https://game.example/back?a=1", true), "the start URL");
            await client.Auth.CompleteWebLoginAsync("https://game.example/back#code=c%2D1");
            Assert.Equal("{\"code\":\"c-1\"}", transport.Requests[0].Body, "a whole URL's code, unescaped");
            await client.Auth.CompleteWebLoginAsync("#code=c2");
            await client.Auth.CompleteWebLoginAsync("c3");
            Assert.Equal("c2,c3", string.Join(",", transport.Requests.Skip(1).Select(r => (string)r.Json["code"])), "a fragment, a bare code");
            var exists = await Assert.ThrowsAsync<ArenaApiException>(() => client.Auth.CompleteWebLoginAsync("#error=account_exists"), "an error");
            Assert.Equal(409, exists.Status, "account_exists is 409");
            Assert.Equal("account_exists", exists.Code, "with its code");
            Assert.True(await Assert.ThrowsAsync<ArenaApiException>(() => client.Auth.CompleteWebLoginAsync("#error=rate_limited")) is RateLimitedException, "rate_limited is typed");
            Assert.Equal(400, (await Assert.ThrowsAsync<ArenaApiException>(() => client.Auth.CompleteWebLoginAsync("#error=something_new"))).Status, "an unknown code is 400");
            await Assert.ThrowsAsync<ArgumentException>(() => client.Auth.CompleteWebLoginAsync(""), "nothing to complete");
            await Assert.ThrowsAsync<ArgumentException>(() => client.Auth.CompleteWebLoginAsync("#state=x"), "neither code nor error");
            Assert.Equal(3, transport.Requests.Count, "no request for the failures");
        }

        // ---- account calls ----

        [Test]
        public static async Task AccountCallsSendWhatTheServerExpects()
        {
            var transport = new FakeTransport(request =>
            {
                switch (request.Path)
                {
                    case "/api/v1/user/login": return FakeTransport.Tokens("1");
                    case "/api/v1/me/sessions": return FakeTransport.Reply(200, new { sessions = new[] { new { id = "ses_1", createdAt = "2026-01-01T00:00:00.000Z", lastUsedAt = "2026-01-01T00:00:00.000Z", userAgent = (string)null, current = true } } });
                    case "/api/v1/me/sessions/ses%2F2": return FakeTransport.Reply(200, new { revoked = 1 });
                    case "/api/v1/user/password/change": return FakeTransport.Reply(200, new { revoked = 2 });
                    case "/api/v1/user/password/forgot": return FakeTransport.Reply(202, new { accepted = true });
                    case "/api/v1/user/email/resend": return FakeTransport.Reply(202, new { accepted = true });
                    case "/api/v1/me/identities": return FakeTransport.Reply(200, new { identities = new[] { new { provider = "device", linkedAt = "2026-01-01T00:00:00.000Z" } } });
                    case "/api/v1/me/identities/oidc%3Agoogle": return FakeTransport.Reply(200, new { identities = new object[] { new { provider = "device", linkedAt = "2026-01-01T00:00:00.000Z" }, new { provider = "oidc:google", subject = "sub-1", linkedAt = "2026-01-02T00:00:00.000Z" } } });
                    case "/api/v1/me/export": return FakeTransport.Reply(200, "{\"exportedAt\":\"2026-01-01T00:00:00.000Z\",\"ledger\":[{\"amount\":\"1.50\"}]}");
                    default: return FakeTransport.Reply(200, new { user = new { id = "usr_test", username = "renamed", country = "FR", emailVerified = true } });
                }
            });
            var client = Client(transport);
            await client.Auth.LoginAsync("alice", "secret");
            var sessions = await client.Auth.SessionsAsync();
            Assert.True(sessions.Count == 1 && sessions[0].Current && sessions[0].UserAgent == null, "the sessions");
            Assert.Equal(1, (await client.Auth.RevokeSessionAsync("ses/2")).Revoked, "a session revoked, its id escaped");
            Assert.Equal("DELETE", transport.Requests.Last().Method, "with DELETE");
            Assert.Equal(2, (await client.Auth.ChangePasswordAsync("old-password", "new-password")).Revoked, "other sessions ended");
            Assert.Equal("{\"currentPassword\":\"old-password\",\"newPassword\":\"new-password\"}", transport.Requests.Last().Body, "the change's body");
            Assert.True(client.Auth.IsSignedIn, "a password change keeps this session");
            await client.Auth.ForgotPasswordAsync("a@example.com");
            Assert.Equal(null, transport.Requests.Last().Header("authorization"), "forgot needs no sign-in");
            await client.Auth.ResendVerificationAsync();
            Assert.True((await client.Auth.VerifyEmailAsync("7KQ2M-R9W4T")).EmailVerified, "verified");
            var user = await client.UpdateProfileAsync(country: "FR");
            Assert.Equal("{\"country\":\"FR\"}", transport.Requests.Last().Body, "only what changes is sent");
            Assert.Equal("PATCH", transport.Requests.Last().Method, "with PATCH");
            Assert.Equal("FR", user.Country, "the user answered");
            await Assert.ThrowsAsync<ArgumentException>(() => client.UpdateProfileAsync(), "nothing to change");
            Assert.Equal("device", (await client.Identities.ListAsync())[0].Provider, "identities listed");
            var linked = await client.Identities.LinkAsync("oidc:google", LinkIdentityBody.ForIdToken("jwt"));
            Assert.Equal("{\"idToken\":\"jwt\"}", transport.Requests.Last().Body, "the link's body");
            Assert.Equal("sub-1", linked[1].Subject, "the new identity last");
            await client.Identities.UnlinkAsync("oidc:google");
            Assert.Equal("DELETE", transport.Requests.Last().Method, "unlink is DELETE");
            var export = await client.ExportAccountAsync();
            Assert.Equal("2026-01-01T00:00:00.000Z", (string)export["exportedAt"], "dates stay strings");
            Assert.Equal(JTokenType.String, export["ledger"][0]["amount"].Type, "amounts stay strings");
        }
    }
}
