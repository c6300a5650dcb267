// Tokens and their rotation. The access token goes with every authenticated
// call; when the server says it expired (or the client knows it is about to),
// the refresh token is rotated through /auth/validate. Rotation is
// single-flight: however many calls find the token stale at once, one
// rotation runs and the rest wait for it (two rotations of one refresh token
// look like a replay to the server, which then ends the session). A rotation
// that got no answer is simply tried again with the same refresh token: the
// server's retry grace answers a repeat within it with the same session.
//
// Every sign-in, UseToken and Clear starts a new "lineage" of tokens. A
// rotation or a logout only changes the tokens of the lineage it started in,
// and a call is replayed after a rotation only within its own lineage: a call
// sent as one player is never replayed as another.
//
// Auth is partial: the sign-ins beyond passwords and the account's calls are
// in their own files.
using System;
using System.Globalization;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;

namespace Arena.Sdk
{
    public sealed partial class Auth
    {
        /// <summary>The sign-ins' request and response header carrying the device token.</summary>
        internal const string DeviceHeader = "x-arena-device";
        /// <summary>Rotate this long before the known expiry (at most a quarter of the lifetime).</summary>
        private static readonly TimeSpan ExpiryMargin = TimeSpan.FromSeconds(30);

        private readonly ArenaClient client;
        private readonly ArenaClientOptions options;
        private readonly IArenaStore store;
        private readonly Func<DateTimeOffset> now;
        private readonly object gate = new object();
        private Tokens tokens;
        private DateTimeOffset? rotateAt;
        private int lineage;
        private Rotation rotation;
        private string deviceToken;

        private sealed class Rotation
        {
            public int Lineage;
            public Task Task;
        }

        /// <summary>The token a call was sent with, and the lineage it belongs to.</summary>
        internal sealed class Lease
        {
            public string Token;
            public int Lineage;
        }

        /// <summary>Raised with the new tokens after every sign-in and rotation, and with null when they are gone.</summary>
        public event Action<Tokens> TokensChanged;

        internal Auth(ArenaClient client, ArenaClientOptions options)
        {
            this.client = client;
            this.options = options;
            store = options.Store ?? new MemoryArenaStore();
            now = options.Now ?? (() => DateTimeOffset.UtcNow);
            deviceToken = options.DeviceToken ?? store.Get(ArenaStoreKeys.DeviceToken);
            if (deviceToken == null)
            {
                // Made here, kept at once: the device keeps one token across restarts even before a sign-in succeeds.
                deviceToken = Ids.NewDeviceToken();
                store.Set(ArenaStoreKeys.DeviceToken, deviceToken);
            }
            tokens = Restore();
        }

        /// <summary>Whether the client holds tokens.</summary>
        public bool IsSignedIn { get { lock (gate) return tokens != null; } }

        /// <summary>A copy of the tokens held now, or null.</summary>
        public Tokens Current { get { lock (gate) return tokens == null ? null : tokens.Copy(); } }

        /// <summary>This device's token (sent with every sign-in as x-arena-device).</summary>
        public string DeviceToken { get { lock (gate) return deviceToken; } }

        /// <summary>Exchanges an identifier (username or e-mail) and password for tokens.</summary>
        public async Task<User> LoginAsync(string identifier, string password, CancellationToken cancellationToken = default(CancellationToken))
        {
            var result = await SignInAsync("/api/v1/user/login", new LoginBody { Identifier = identifier, Password = password }, cancellationToken).ConfigureAwait(false);
            return result.User;
        }

        /// <summary>Adopts tokens the game already holds. Without a refresh token there is no rotation.</summary>
        public void UseToken(string accessToken, string refreshToken = null)
        {
            Tokens copy;
            lock (gate)
            {
                lineage++;
                rotation = null;
                tokens = new Tokens { AccessToken = accessToken, RefreshToken = refreshToken };
                rotateAt = null;
                copy = tokens.Copy();
            }
            Announce(copy);
        }

        /// <summary>Forgets the tokens here, without telling the server (the session stays live until it expires).</summary>
        public void Clear()
        {
            lock (gate)
            {
                lineage++;
                rotation = null;
                if (tokens == null) return;
                tokens = null;
                rotateAt = null;
            }
            Announce(null);
        }

        /// <summary>Rotates the refresh token now; joins a rotation already in flight.</summary>
        public Task RefreshAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            string access;
            int at;
            lock (gate)
            {
                if (tokens == null) throw new NotSignedInException();
                access = tokens.AccessToken;
                at = lineage;
            }
            return RotateFromAsync(access, at);
        }

        /// <summary>
        /// Sends an authenticated call. On 401 <c>unauthorized</c> (the access token expired) it
        /// rotates once and sends the call once more with the new token of the same session:
        /// a 401 from the bearer check means the server did nothing with the request.
        /// </summary>
        internal async Task<TransportResponse> SendAsync(Call call, CancellationToken cancellationToken, bool replayAfterRotation = true)
        {
            var lease = await FreshTokenAsync(cancellationToken).ConfigureAwait(false);
            var response = await client.SendAsync(call.With("authorization", "Bearer " + lease.Token), cancellationToken).ConfigureAwait(false);
            if (response.Status != 401 || !replayAfterRotation) return response;
            lock (gate)
            {
                if (tokens == null || tokens.RefreshToken == null || lineage != lease.Lineage) return response;
            }
            if (ArenaApiException.From(response).Code != "unauthorized") return response;
            await RotateFromAsync(lease.Token, lease.Lineage).ConfigureAwait(false);
            string fresh;
            lock (gate)
            {
                if (tokens == null || lineage != lease.Lineage || tokens.AccessToken == lease.Token) return response;
                fresh = tokens.AccessToken;
            }
            return await client.SendAsync(call.With("authorization", "Bearer " + fresh), cancellationToken).ConfigureAwait(false);
        }

        /// <summary>Sends a call exactly once with the given token: no rotation, no replay (the PIN verify).</summary>
        internal Task<TransportResponse> SendOnceAsync(Call call, string token, CancellationToken cancellationToken)
        {
            return client.SendAsync(call.With("authorization", "Bearer " + token), cancellationToken);
        }

        /// <summary>
        /// The access token to send, rotated first when the client knows it is (nearly)
        /// expired. A proactive rotation that gets no answer falls back to the current token
        /// while it is still valid.
        /// </summary>
        internal async Task<Lease> FreshTokenAsync(CancellationToken cancellationToken)
        {
            Task inFlight = null;
            lock (gate) if (rotation != null && rotation.Lineage == lineage) inFlight = rotation.Task;
            if (inFlight != null) { try { await inFlight.ConfigureAwait(false); } catch (Exception) { /* the caller meets the outcome below */ } }
            Tokens held;
            int at;
            bool due;
            lock (gate)
            {
                if (tokens == null) throw new NotSignedInException();
                held = tokens;
                at = lineage;
                due = tokens.RefreshToken != null && rotateAt.HasValue && now() >= rotateAt.Value;
            }
            if (!due) return new Lease { Token = held.AccessToken, Lineage = at };
            try
            {
                await RotateFromAsync(held.AccessToken, at).ConfigureAwait(false);
            }
            catch (ArenaNetworkException)
            {
                var stillValid = held.ExpiresAt.HasValue && now() < held.ExpiresAt.Value;
                if (!stillValid) throw;
            }
            lock (gate)
            {
                if (tokens == null || lineage != at) throw new NotSignedInException();
                return new Lease { Token = tokens.AccessToken, Lineage = at };
            }
        }

        /// <summary>Rotates unless another call already replaced <paramref name="stale"/>; concurrent callers of one lineage share one rotation.</summary>
        private Task RotateFromAsync(string stale, int at)
        {
            TaskCompletionSource<bool> started;
            string refreshToken;
            Rotation mine;
            lock (gate)
            {
                if (lineage != at) return Done;
                if (rotation != null && rotation.Lineage == at) return rotation.Task;
                if (tokens == null || tokens.AccessToken != stale || tokens.RefreshToken == null) return Done;
                refreshToken = tokens.RefreshToken;
                started = new TaskCompletionSource<bool>();
                mine = new Rotation { Lineage = at, Task = started.Task };
                rotation = mine;
            }
            // Started outside the lock: a transport may complete synchronously.
            RunRotation(stale, refreshToken, at, mine, started);
            return mine.Task;
        }

        private async void RunRotation(string access, string refreshToken, int at, Rotation mine, TaskCompletionSource<bool> done)
        {
            try
            {
                await RotateAsync(access, refreshToken, at).ConfigureAwait(false);
                done.TrySetResult(true);
            }
            catch (Exception error)
            {
                done.TrySetException(error);
            }
            finally
            {
                lock (gate) if (rotation == mine) rotation = null;
            }
        }

        private async Task RotateAsync(string access, string refreshToken, int at)
        {
            // The bearer is the (expired) access token of the same session: /auth/validate requires it.
            // Not cancelled by any one caller: every caller of the lineage waits for it.
            var call = new Call("POST", "/api/v1/auth/validate", new RefreshBody { RefreshToken = refreshToken });
            var response = await client.SendAsync(call.With("authorization", "Bearer " + access), CancellationToken.None).ConfigureAwait(false);
            if (response.Status == 401)
            {
                // Spent, reused or revoked: this session is over.
                var error = ArenaApiException.From(response);
                bool same;
                lock (gate) same = lineage == at;
                if (same) Clear();
                throw error;
            }
            var body = Json.Read<TokenResponse>(response);
            Keep(body, at);
        }

        /// <summary>A sign-in that needs no bearer and answers the login shape (plus created): its tokens kept.</summary>
        internal async Task<SignInResult> SignInAsync(string path, object body, CancellationToken cancellationToken)
        {
            var response = await client.SendAsync(new Call("POST", path, body).With(DeviceHeader, DeviceToken), cancellationToken).ConfigureAwait(false);
            var answer = Adopt(response);
            return new SignInResult { User = answer.User, Created = answer.Created };
        }

        /// <summary>Takes a sign-in's answer (or throws its error): keeps the device token it answered and its tokens, as a new lineage.</summary>
        internal SignInResponse Adopt(TransportResponse response)
        {
            var answer = Json.Read<SignInResponse>(response);
            KeepDevice(response);
            int at;
            lock (gate) at = ++lineage;
            Keep(answer, at);
            return answer;
        }

        /// <summary>Keeps the device token a sign-in answered (kept across sign-outs: it names the device).</summary>
        internal void KeepDevice(TransportResponse response)
        {
            var device = response.Header(DeviceHeader);
            if (device == null) return;
            lock (gate) deviceToken = device;
            store.Set(ArenaStoreKeys.DeviceToken, device);
            var handler = options.OnDeviceToken;
            if (handler != null) handler(device);
        }

        /// <summary>Stores a token answer when its lineage is still the current one (a sign-in while a rotation was in flight wins).</summary>
        internal void Keep(TokenResponse body, int at)
        {
            Tokens copy;
            lock (gate)
            {
                if (lineage != at) return;
                var lifetime = TimeSpan.FromSeconds(body.ExpiresIn);
                var expiresAt = now() + lifetime;
                tokens = new Tokens { AccessToken = body.AccessToken, RefreshToken = body.RefreshToken, ExpiresAt = expiresAt };
                var margin = TimeSpan.FromTicks(Math.Min(ExpiryMargin.Ticks, lifetime.Ticks / 4));
                rotateAt = expiresAt - margin;
                copy = tokens.Copy();
            }
            Announce(copy);
        }

        /// <summary>The current lineage (a logout or deletion forgets the tokens only if no sign-in came between).</summary>
        internal int Lineage { get { lock (gate) return lineage; } }

        /// <summary>Forgets the tokens if they are still those of <paramref name="at"/>.</summary>
        internal void ClearIf(int at)
        {
            bool same;
            lock (gate) same = lineage == at;
            if (same) Clear();
        }

        private void Announce(Tokens copy)
        {
            Persist(copy);
            var handler = options.OnTokens;
            if (handler != null) handler(copy == null ? null : copy.Copy());
            var changed = TokensChanged;
            if (changed != null) changed(copy == null ? null : copy.Copy());
        }

        private void Persist(Tokens value)
        {
            if (value == null)
            {
                store.Delete(ArenaStoreKeys.AccessToken);
                store.Delete(ArenaStoreKeys.RefreshToken);
                store.Delete(ArenaStoreKeys.ExpiresAt);
                return;
            }
            store.Set(ArenaStoreKeys.AccessToken, value.AccessToken);
            if (value.RefreshToken != null) store.Set(ArenaStoreKeys.RefreshToken, value.RefreshToken); else store.Delete(ArenaStoreKeys.RefreshToken);
            if (value.ExpiresAt.HasValue) store.Set(ArenaStoreKeys.ExpiresAt, value.ExpiresAt.Value.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture));
            else store.Delete(ArenaStoreKeys.ExpiresAt);
        }

        /// <summary>The tokens a store kept from an earlier run, or null.</summary>
        private Tokens Restore()
        {
            var access = store.Get(ArenaStoreKeys.AccessToken);
            if (access == null) return null;
            var kept = new Tokens { AccessToken = access, RefreshToken = store.Get(ArenaStoreKeys.RefreshToken) };
            long ms;
            if (long.TryParse(store.Get(ArenaStoreKeys.ExpiresAt), NumberStyles.Integer, CultureInfo.InvariantCulture, out ms))
            {
                kept.ExpiresAt = DateTimeOffset.FromUnixTimeMilliseconds(ms);
                rotateAt = kept.ExpiresAt.Value - ExpiryMargin;
            }
            return kept;
        }

        private static readonly Task Done = Task.FromResult(true);
    }

    [Wire("POST /api/v1/user/login body")]
    internal sealed class LoginBody
    {
        [JsonProperty("identifier")] public string Identifier { get; set; }
        [JsonProperty("password")] public string Password { get; set; }
    }

    [Wire("POST /api/v1/auth/validate body")]
    internal sealed class RefreshBody
    {
        [JsonProperty("refreshToken")] public string RefreshToken { get; set; }
    }
}
