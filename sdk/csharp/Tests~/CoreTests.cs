// The core: error envelopes become typed exceptions; authenticated calls
// carry the bearer; an expired access token is rotated once and the call
// replayed.
using System;
using System.Collections.Generic;
using System.Threading.Tasks;

namespace Arena.Sdk.Tests
{
    public static class CoreTests
    {
        [Test]
        public static void EnvelopeBecomesTypedException()
        {
            var limited = ArenaApiException.From(FakeTransport.Reply(429, new { error = new { code = "rate_limited", message = "slow", status = 429 } }, new Dictionary<string, string> { { "Retry-After", "7" }, { "x-request-id", "req_1" } }));
            Assert.True(limited is RateLimitedException, "429 rate_limited is RateLimitedException");
            Assert.Equal(7, limited.RetryAfterSeconds.Value, "Retry-After");
            Assert.Equal("req_1", limited.RequestId, "request id");
            var proxy = ArenaApiException.From(FakeTransport.Reply(503, "<html>down</html>"));
            Assert.Equal("service_unavailable", proxy.Code, "a status alone gives its code");
            Assert.True(ArenaApiException.From(FakeTransport.Error(410, "session_expired")) is PinSessionExpiredException, "410 session_expired");
        }

        [Test]
        public static async Task ExpiredAccessTokenIsRotatedOnceAndReplayed()
        {
            var transport = new FakeTransport(request =>
            {
                if (request.Path == "/api/v1/user/login") return FakeTransport.Tokens("1");
                if (request.Path == "/api/v1/auth/validate") return FakeTransport.Tokens("2");
                if (request.Header("authorization") == "Bearer access-1") return FakeTransport.Error(401, "unauthorized");
                return FakeTransport.Reply(200, new { user = new { id = "usr_test" } });
            });
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            await client.Auth.LoginAsync("alice", "secret");
            var me = await client.GetAsync<Newtonsoft.Json.Linq.JObject>("/api/v1/me", default(System.Threading.CancellationToken));
            Assert.Equal("usr_test", (string)me["user"]["id"], "the replayed call's answer");
            Assert.Equal(1, transport.Count("/api/v1/auth/validate"), "one rotation");
            Assert.Equal("refresh-1", (string)transport.Requests[2].Json["refreshToken"], "rotated with the refresh token held");
            Assert.Equal("access-2", client.Auth.Current.AccessToken, "the new tokens kept");
        }

        [Test]
        public static void DeviceTokenMadeOnceAndKeptBeforeAnySignIn()
        {
            var store = new MemoryArenaStore();
            var transport = new FakeTransport(request => FakeTransport.Error(500, "internal"));
            var first = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport, Store = store });
            Assert.Equal(43, first.Auth.DeviceToken.Length, "32 random bytes as base64url");
            Assert.Equal(first.Auth.DeviceToken, store.Get(ArenaStoreKeys.DeviceToken), "kept in the store at once");
            var again = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport, Store = store });
            Assert.Equal(first.Auth.DeviceToken, again.Auth.DeviceToken, "the same device after a restart");
            var other = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            Assert.True(other.Auth.DeviceToken != first.Auth.DeviceToken, "another device, another token");
        }
    }
}
