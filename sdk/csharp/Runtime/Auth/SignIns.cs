// Sign-ins beyond passwords (guests, OpenID Connect, Steam, devices without a
// keyboard, the web flow), the logout, and the account's own calls (e-mail
// verification, password change and reset, sessions, deletion).
//
// Each sign-in keeps the tokens like LoginAsync and says whether it created
// the account. Without `create`, an identity no account has is
// ArenaApiException 401 `invalid_credentials`; a first sign-in whose verified
// e-mail belongs to an existing account is 409 `account_exists` (sign in to
// that account and link the identity instead: accounts are never merged).
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class Auth
    {
        /// <summary>RFC 8628's default poll interval, and what each <c>slow_down</c> adds to it.</summary>
        private static readonly TimeSpan DevicePollStep = TimeSpan.FromSeconds(5);

        /// <summary>How the device-code poll waits (tests replace it to record the waits instead of sleeping).</summary>
        internal Func<TimeSpan, CancellationToken, Task> Delay = (wait, cancellationToken) => Task.Delay(wait, cancellationToken);

        /// <summary>The lineage of the guest sign-in made with the store's kept secret (a deletion of that account forgets the secret), or -1.</summary>
        private int keptSecretLineage = -1;

        /// <summary>
        /// The statuses of the codes a web sign-in's <c>#error=</c> may carry (the server answers
        /// them over a redirect, which has no status of its own); any other code is taken as 400.
        /// </summary>
        public static readonly IReadOnlyDictionary<string, int> WebSignInErrorStatus = new System.Collections.ObjectModel.ReadOnlyDictionary<string, int>(new Dictionary<string, int>
        {
            { "access_denied", 400 },
            { "invalid_credentials", 401 },
            { "account_banned", 403 },
            { "platform_banned", 403 },
            { "account_exists", 409 },
            { "rate_limited", 429 },
            { "service_unavailable", 503 },
        });

        /// <summary>
        /// Signs in as a guest with a secret this device keeps. Without <paramref name="deviceSecret"/>
        /// the client uses the one its store kept from an earlier guest sign-in
        /// (<see cref="ArenaStoreKeys.DeviceSecret"/>), or, when there is none, makes a new one
        /// (32 random bytes) and creates the account. The secret used is kept in the store after the
        /// sign-in succeeds, and the result carries it: it is the only way into a guest account that
        /// has no other identity. <paramref name="create"/> defaults to true when a new secret is
        /// made and false otherwise. Account creation is throttled per address (429 <c>rate_limited</c>).
        /// When the kept secret's account is gone (401 <c>invalid_credentials</c>: deleted from another
        /// device, say), pass <c>create: true</c> to make a new guest account with it. A failed sign-in
        /// keeps nothing.
        /// </summary>
        public async Task<GuestSignIn> LoginAsGuestAsync(string deviceSecret = null, bool? create = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (deviceSecret != null && deviceSecret.Length == 0) throw new ArgumentException("deviceSecret is empty: pass null to use the kept one or make one", "deviceSecret");
            var kept = deviceSecret == null ? store.Get(ArenaStoreKeys.DeviceSecret) : null;
            var secret = deviceSecret ?? kept ?? Ids.NewDeviceSecret();
            var made = deviceSecret == null && kept == null;
            var creating = create ?? made;
            var result = await SignInAsync("/api/v1/user/login/device", new DeviceLoginBody { DeviceSecret = secret, Create = creating ? (bool?)true : null }, cancellationToken).ConfigureAwait(false);
            store.Set(ArenaStoreKeys.DeviceSecret, secret);
            lock (gate) keptSecretLineage = lineage;
            return new GuestSignIn { User = result.User, Created = result.Created, DeviceSecret = secret };
        }

        /// <summary>
        /// Signs in with an OpenID Connect ID token a native or mobile app got from the provider's
        /// own SDK (Google, Apple, ...). <paramref name="provider"/> is the name the server configured
        /// (<c>google</c>, or the identity's <c>oidc:google</c>); <paramref name="nonce"/> is checked
        /// against the token's when given. With <paramref name="create"/>, a first sign-in creates the account.
        /// </summary>
        public Task<SignInResult> LoginWithIdTokenAsync(string provider, string idToken, string nonce = null, bool create = false, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (string.IsNullOrEmpty(idToken)) throw new ArgumentException("idToken is empty", "idToken");
            var body = new IdTokenLoginBody { IdToken = idToken, Nonce = nonce, Create = create ? (bool?)true : null };
            return SignInAsync("/api/v1/user/login/oidc/" + ArenaClient.Segment(OidcName(provider)), body, cancellationToken);
        }

        /// <summary>
        /// Signs in with a Steam Web API ticket: Steamworks' <c>GetAuthTicketForWebApi</c> bytes as
        /// hex, for the identity the server names (<c>arena</c> unless the studio changed it). A VAC-
        /// or publisher-banned Steam account is ArenaApiException 403 <c>platform_banned</c>.
        /// </summary>
        public Task<SignInResult> LoginWithSteamAsync(string ticket, bool create = false, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (string.IsNullOrEmpty(ticket)) throw new ArgumentException("ticket is empty", "ticket");
            return SignInAsync("/api/v1/user/login/steam", new SteamLoginBody { Ticket = ticket, Create = create ? (bool?)true : null }, cancellationToken);
        }

        /// <summary>
        /// Starts a sign-in for a device without a keyboard (a TV, a console; RFC 8628): show the
        /// player <see cref="DeviceCode.UserCode"/> and <see cref="DeviceCode.VerificationUri"/> (or a
        /// QR code of <see cref="DeviceCode.VerificationUriComplete"/>), where they sign in and approve
        /// this device; then <see cref="PollDeviceCodeAsync(DeviceCode, TimeSpan?, CancellationToken)"/>.
        /// </summary>
        public async Task<DeviceCode> StartDeviceCodeAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            var response = await client.SendAsync(new Call("POST", "/api/v1/auth/device-code", new Dictionary<string, object>()), cancellationToken).ConfigureAwait(false);
            return Json.Read<DeviceCode>(response);
        }

        /// <summary>
        /// Polls once: the user, signed in here, once the player approved; null while they have not.
        /// ArenaApiException 400 <c>slow_down</c> (polled sooner than the interval: wait 5 s longer from
        /// now on), <c>expired_token</c> (start again) or <c>access_denied</c> (the player said no).
        /// <see cref="PollDeviceCodeAsync(DeviceCode, TimeSpan?, CancellationToken)"/> runs the loop.
        /// </summary>
        public async Task<User> CheckDeviceCodeAsync(string deviceCode, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (string.IsNullOrEmpty(deviceCode)) throw new ArgumentException("deviceCode is empty", "deviceCode");
            var call = new Call("POST", "/api/v1/auth/device-code/token", new DeviceTokenBody { DeviceCode = deviceCode }).With(DeviceHeader, DeviceToken);
            var response = await client.SendAsync(call, cancellationToken).ConfigureAwait(false);
            if (response.Status == 400)
            {
                var error = ArenaApiException.From(response);
                if (error.Code == "authorization_pending") return null;
                throw error;
            }
            return Adopt(response).User;
        }

        /// <summary>
        /// Polls every <paramref name="interval"/> (default: the started code's interval; 5 s more
        /// after each <c>slow_down</c>) until the player approves: the user, signed in here. Throws
        /// ArenaApiException 400 <c>expired_token</c> or <c>access_denied</c>, and
        /// OperationCanceledException when <paramref name="cancellationToken"/> fires.
        /// </summary>
        public Task<User> PollDeviceCodeAsync(DeviceCode deviceCode, TimeSpan? interval = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (deviceCode == null) throw new ArgumentNullException("deviceCode");
            return PollDeviceCodeAsync(deviceCode.Code, interval ?? TimeSpan.FromSeconds(deviceCode.Interval > 0 ? deviceCode.Interval : DevicePollStep.TotalSeconds), cancellationToken);
        }

        /// <summary>
        /// Polls the device code every <paramref name="interval"/> (default 5 s; 5 s more after each
        /// <c>slow_down</c>) until the player approves: the user, signed in here. Throws
        /// ArenaApiException 400 <c>expired_token</c> or <c>access_denied</c>, and
        /// OperationCanceledException when <paramref name="cancellationToken"/> fires.
        /// </summary>
        public async Task<User> PollDeviceCodeAsync(string deviceCode, TimeSpan? interval = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (string.IsNullOrEmpty(deviceCode)) throw new ArgumentException("deviceCode is empty", "deviceCode");
            var wait = interval ?? DevicePollStep;
            if (wait < TimeSpan.Zero) throw new ArgumentOutOfRangeException("interval", "the poll interval is negative");
            for (;;)
            {
                await Delay(wait, cancellationToken).ConfigureAwait(false);
                cancellationToken.ThrowIfCancellationRequested();
                try
                {
                    var user = await CheckDeviceCodeAsync(deviceCode, cancellationToken).ConfigureAwait(false);
                    if (user != null) return user;
                }
                catch (ArenaApiException error)
                {
                    if (error.Code != "slow_down") throw;
                    wait += DevicePollStep;
                }
            }
        }

        /// <summary>
        /// The address to send the browser to for a web sign-in with an OpenID Connect provider: the
        /// server sends the player to the provider and back to <paramref name="redirect"/> (which must
        /// start with one of the prefixes the server allows, and carry no fragment) with
        /// <c>#code=…</c> or <c>#error=&lt;code&gt;</c>; pass that to <see cref="CompleteWebLoginAsync"/>.
        /// With <paramref name="create"/>, a first sign-in creates the account.
        /// </summary>
        public string BeginWebLogin(string provider, string redirect, bool create = false)
        {
            Uri parsed;
            if (string.IsNullOrEmpty(redirect) || !Uri.TryCreate(redirect, UriKind.Absolute, out parsed))
                throw new ArgumentException("redirect \"" + redirect + "\" is not an absolute URL", "redirect");
            var query = new Dictionary<string, string> { { "redirect", redirect } };
            if (create) query["create"] = "1";
            return client.UrlOf(new Call("GET", "/api/v1/auth/oidc/" + ArenaClient.Segment(OidcName(provider)) + "/start") { Query = query });
        }

        /// <summary>
        /// Ends a web sign-in on the page it came back to: takes the fragment (<c>#code=…</c> or
        /// <c>#error=…</c>; a whole URL, or the bare code, also do) and trades the one-time code for
        /// tokens (once, within 60 s). An <c>#error=&lt;code&gt;</c> throws the ArenaApiException of that
        /// code, with its status from <see cref="WebSignInErrorStatus"/> (<c>access_denied</c>: the
        /// player said no at the provider; <c>account_exists</c>, <c>invalid_credentials</c>,
        /// <c>account_banned</c>, ...). Input with neither is ArgumentException.
        /// </summary>
        public async Task<SignInResult> CompleteWebLoginAsync(string fragmentOrUrlOrCode, CancellationToken cancellationToken = default(CancellationToken))
        {
            // Async throughout: an #error= fails the returned task like any answer of the server would.
            var code = WebSignInCode(fragmentOrUrlOrCode ?? "");
            return await SignInAsync("/api/v1/user/login/exchange", new ExchangeBody { Code = code }, cancellationToken).ConfigureAwait(false);
        }

        /// <summary>
        /// Revokes this session (or, with <paramref name="all"/>, every session of the user) on the
        /// server, then forgets the tokens. When the server cannot be reached (a network error, a 5xx)
        /// the tokens are kept, so the logout can be retried; <see cref="Clear"/> forgets them locally
        /// without asking the server. With <paramref name="others"/>, ends every session of the user
        /// but this one: this client stays signed in. <paramref name="all"/> and
        /// <paramref name="others"/> together are refused (422). The device token and a guest's kept
        /// device secret stay: they name the device, and the secret is the way back into a guest account.
        /// </summary>
        public async Task<LogoutResult> LogoutAsync(bool all = false, bool others = false, CancellationToken cancellationToken = default(CancellationToken))
        {
            var at = Lineage;
            var body = new LogoutBody { All = all ? (bool?)true : null, Others = others ? (bool?)true : null };
            var response = await SendAsync(new Call("POST", "/api/v1/user/s/logout", body), cancellationToken).ConfigureAwait(false);
            if (others && !all) return Json.Read<LogoutResult>(response);
            // Answered: a 2xx revoked the session, a 4xx says it is not usable anyway.
            if (response.Status < 500) ClearIf(at);
            return Json.Read<LogoutResult>(response);
        }

        /// <summary>Confirms the signed-in user's e-mail address with the code mailed to it; the user, now <see cref="User.EmailVerified"/>.</summary>
        public async Task<User> VerifyEmailAsync(string code, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (string.IsNullOrEmpty(code)) throw new ArgumentException("code is empty", "code");
            return (await client.CallAsync<UserAnswer>(new Call("POST", "/api/v1/user/email/verify", new VerifyEmailBody { Code = code }), cancellationToken).ConfigureAwait(false)).User;
        }

        /// <summary>Mails the signed-in user a new verification code (the previous one stops working).</summary>
        public async Task ResendVerificationAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            await client.CallAsync<Accepted>(new Call("POST", "/api/v1/user/email/resend", new Dictionary<string, object>()), cancellationToken).ConfigureAwait(false);
        }

        /// <summary>
        /// Changes the signed-in user's password. Every other session of the user ends; this one
        /// stays, and so do the tokens held here. A wrong current password is ArenaApiException 403
        /// <c>invalid_credentials</c>.
        /// </summary>
        public Task<SessionsEnded> ChangePasswordAsync(string currentPassword, string newPassword, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.CallAsync<SessionsEnded>(new Call("POST", "/api/v1/user/password/change", new ChangePasswordBody { CurrentPassword = currentPassword, NewPassword = newPassword }), cancellationToken);
        }

        /// <summary>
        /// Asks for a password reset code to be mailed to <paramref name="email"/>. Needs no sign-in.
        /// Completes the same whether or not the address has an account.
        /// </summary>
        public async Task ForgotPasswordAsync(string email, CancellationToken cancellationToken = default(CancellationToken))
        {
            Json.Read<Accepted>(await client.SendAsync(new Call("POST", "/api/v1/user/password/forgot", new ForgotPasswordBody { Email = email }), cancellationToken).ConfigureAwait(false));
        }

        /// <summary>
        /// Sets a new password with the code <see cref="ForgotPasswordAsync"/> mailed. Needs no sign-in.
        /// Every session of that user ends, a session held here included: sign in again with the new
        /// password. A wrong, used or expired code is ArenaApiException 400 <c>invalid_reset_code</c>.
        /// </summary>
        public async Task<SessionsEnded> ResetPasswordAsync(string email, string code, string newPassword, CancellationToken cancellationToken = default(CancellationToken))
        {
            var body = new ResetPasswordBody { Email = email, Code = code, NewPassword = newPassword };
            return Json.Read<SessionsEnded>(await client.SendAsync(new Call("POST", "/api/v1/user/password/reset", body), cancellationToken).ConfigureAwait(false));
        }

        /// <summary>Where the user is logged in: their live sessions, most recently used first (<see cref="Session.Current"/> marks this client's).</summary>
        public async Task<IList<Session>> SessionsAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await client.GetAsync<SessionsAnswer>("/api/v1/me/sessions", cancellationToken).ConfigureAwait(false)).Sessions ?? new List<Session>();
        }

        /// <summary>
        /// Ends one of the user's live sessions (a lost phone's, say): its tokens stop working at once.
        /// Ending this client's own session ends its tokens too: the next call fails and the tokens are
        /// forgotten. An id that is not one of the user's live sessions is ArenaApiException 404 <c>not_found</c>.
        /// </summary>
        public Task<LogoutResult> RevokeSessionAsync(string sessionId, CancellationToken cancellationToken = default(CancellationToken))
        {
            return client.CallAsync<LogoutResult>(new Call("DELETE", "/api/v1/me/sessions/" + ArenaClient.Segment(sessionId)), cancellationToken);
        }

        /// <summary>
        /// Deletes the account for good, with its password asked again (an account without a password
        /// identity, a guest say, is asked none: pass null): personal data and identities are erased and
        /// every session ends, so the tokens are forgotten here, and so is the kept guest secret when
        /// this client signed in with it. A wrong password is ArenaApiException 403
        /// <c>invalid_credentials</c> (throttled like a login: 429 <c>rate_limited</c>), none where one
        /// is needed 422 <c>validation_failed</c>; a wallet still holding funds or a pending withdrawal
        /// is 409 <c>balance_not_empty</c>, and nothing is deleted.
        /// </summary>
        public async Task<AccountDeleted> DeleteAccountAsync(string password = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            var at = Lineage;
            var result = await client.CallAsync<AccountDeleted>(new Call("POST", "/api/v1/me/delete", new DeleteAccountBody { Password = password }), cancellationToken).ConfigureAwait(false);
            bool guest;
            lock (gate) guest = keptSecretLineage == at && lineage == at;
            if (guest) store.Delete(ArenaStoreKeys.DeviceSecret);
            ClearIf(at);
            return result;
        }

        /// <summary>The configured provider name of <c>google</c> or <c>oidc:google</c> (an identity's provider).</summary>
        private static string OidcName(string provider)
        {
            if (string.IsNullOrEmpty(provider)) throw new ArgumentException("provider is empty", "provider");
            var name = provider.StartsWith("oidc:", StringComparison.Ordinal) ? provider.Substring("oidc:".Length) : provider;
            if (name.Length == 0) throw new ArgumentException("provider \"" + provider + "\" names no provider", "provider");
            return name;
        }

        /// <summary>The ArenaApiException of a web sign-in's <c>#error=&lt;code&gt;</c>.</summary>
        internal static ArenaApiException WebSignInError(string code)
        {
            int status;
            if (!WebSignInErrorStatus.TryGetValue(code, out status)) status = 400;
            return ArenaApiException.Make(status, code, "The web sign-in failed: " + code, null, null, null, null);
        }

        /// <summary>The one-time code of a web sign-in's return (fragment, URL or bare code); an <c>error=</c> becomes its exception.</summary>
        internal static string WebSignInCode(string input)
        {
            var hash = input.IndexOf('#');
            var fragment = hash >= 0 ? input.Substring(hash + 1) : input;
            if (fragment.IndexOf('=') < 0)
            {
                if (fragment.Length == 0 || fragment.IndexOf('?') >= 0 || fragment.IndexOf('/') >= 0)
                    throw new ArgumentException("CompleteWebLoginAsync: no #code= or #error= to complete (pass the URL the sign-in came back to, or its fragment)", "fragmentOrUrlOrCode");
                return fragment;
            }
            string code = null, error = null;
            foreach (var part in fragment.Split('&'))
            {
                var eq = part.IndexOf('=');
                var key = Unescape(eq < 0 ? part : part.Substring(0, eq));
                var value = eq < 0 ? "" : Unescape(part.Substring(eq + 1));
                if (key == "error" && error == null) error = value;
                if (key == "code" && code == null) code = value;
            }
            if (error != null) throw WebSignInError(error);
            if (string.IsNullOrEmpty(code)) throw new ArgumentException("CompleteWebLoginAsync: the fragment has neither code= nor error=", "fragmentOrUrlOrCode");
            return code;
        }

        private static string Unescape(string value)
        {
            return Uri.UnescapeDataString(value.Replace('+', ' '));
        }
    }
}
