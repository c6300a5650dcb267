// Wire types of accounts and sign-ins. Field names are the server's
// ([JsonProperty]); the drift check holds them to the server's OpenAPI document.
using System.Collections.Generic;
using Newtonsoft.Json;

namespace Arena.Sdk
{
    [Wire("GET /api/v1/me 200", "user")]
    public sealed class User
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>Null for an account without a password identity (a guest, or one that signs in only with a provider).</summary>
        [JsonProperty("email")] public string Email { get; set; }
        [JsonProperty("username")] public string Username { get; set; }
        [JsonProperty("country")] public string Country { get; set; }
        /// <summary>ISO-8601 UTC.</summary>
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        [JsonProperty("emailVerified")] public bool EmailVerified { get; set; }
        /// <summary>The providers the account signs in with: password, device, steam, oidc:&lt;name&gt;.</summary>
        [JsonProperty("identities")] public List<string> Identities { get; set; }
    }

    /// <summary>The login shape.</summary>
    [Wire("POST /api/v1/user/login 200")]
    [Wire("POST /api/v1/auth/device-code/token 200")]
    public class TokenResponse
    {
        [JsonProperty("accessToken")] public string AccessToken { get; set; }
        [JsonProperty("refreshToken")] public string RefreshToken { get; set; }
        /// <summary>Seconds until the access token expires.</summary>
        [JsonProperty("expiresIn")] public int ExpiresIn { get; set; }
        [JsonProperty("tokenType")] public string TokenType { get; set; }
        [JsonProperty("user")] public User User { get; set; }
    }

    /// <summary>The login shape plus whether the sign-in created the account.</summary>
    [Wire("POST /api/v1/user/login/device 200")]
    [Wire("POST /api/v1/user/login/steam 200")]
    [Wire("POST /api/v1/user/login/oidc/{provider} 200")]
    [Wire("POST /api/v1/user/login/exchange 200")]
    public sealed class SignInResponse : TokenResponse
    {
        [JsonProperty("created")] public bool Created { get; set; }
    }

    /// <summary>What the sign-ins return (the tokens are kept by the client).</summary>
    public class SignInResult
    {
        public User User { get; set; }
        /// <summary>Whether this sign-in created the account (only ever when asked to create).</summary>
        public bool Created { get; set; }
    }

    /// <summary>A guest's sign-in (<see cref="Auth.LoginAsGuestAsync"/>): the sign-in and the device secret it used.</summary>
    public sealed class GuestSignIn : SignInResult
    {
        /// <summary>
        /// The secret that signs this device in. The client keeps it in its store; a game with
        /// its own storage keeps it like the refresh token and passes it back next time. Lost,
        /// the guest account is lost.
        /// </summary>
        public string DeviceSecret { get; set; }
    }

    /// <summary>
    /// A device-code sign-in started (<see cref="Auth.StartDeviceCodeAsync"/>, RFC 8628): show
    /// <see cref="UserCode"/> and <see cref="VerificationUri"/>, then poll.
    /// </summary>
    [Wire("POST /api/v1/auth/device-code 200")]
    public sealed class DeviceCode
    {
        /// <summary>The device keeps this secret and polls with it; never shown.</summary>
        [JsonProperty("deviceCode")] public string Code { get; set; }
        /// <summary>The code to show the player, XXXX-XXXX.</summary>
        [JsonProperty("userCode")] public string UserCode { get; set; }
        /// <summary>The page the player opens in a browser and types the code on.</summary>
        [JsonProperty("verificationUri")] public string VerificationUri { get; set; }
        /// <summary>The same page with the code filled in (for a QR code or a link).</summary>
        [JsonProperty("verificationUriComplete")] public string VerificationUriComplete { get; set; }
        /// <summary>Seconds the code waits for the player.</summary>
        [JsonProperty("expiresIn")] public int ExpiresIn { get; set; }
        /// <summary>Seconds to wait between polls.</summary>
        [JsonProperty("interval")] public int Interval { get; set; }
    }

    /// <summary>How many sessions a logout or a session's revocation ended.</summary>
    [Wire("POST /api/v1/user/s/logout 200")]
    [Wire("DELETE /api/v1/me/sessions/{id} 200")]
    public sealed class LogoutResult
    {
        [JsonProperty("revoked")] public int Revoked { get; set; }
    }

    /// <summary>How many sessions a password change (the other ones) or reset (all of them) ended.</summary>
    [Wire("POST /api/v1/user/password/change 200")]
    [Wire("POST /api/v1/user/password/reset 200")]
    public sealed class SessionsEnded
    {
        [JsonProperty("revoked")] public int Revoked { get; set; }
    }

    /// <summary>A request the server took; what follows (a mail) happens later.</summary>
    [Wire("POST /api/v1/user/email/resend 202")]
    [Wire("POST /api/v1/user/password/forgot 202")]
    internal sealed class Accepted
    {
        [JsonProperty("accepted")] public bool IsAccepted { get; set; }
    }

    /// <summary>One of the user's live auth sessions (<see cref="Auth.SessionsAsync"/>): where they are logged in.</summary>
    [Wire("GET /api/v1/me/sessions 200", "sessions[]")]
    public sealed class Session
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>ISO-8601 UTC.</summary>
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
        /// <summary>ISO-8601 UTC; updated at most once a minute.</summary>
        [JsonProperty("lastUsedAt")] public string LastUsedAt { get; set; }
        /// <summary>The login's User-Agent (at most 256 characters), or null.</summary>
        [JsonProperty("userAgent")] public string UserAgent { get; set; }
        /// <summary>The session of this client's token.</summary>
        [JsonProperty("current")] public bool Current { get; set; }
    }

    [Wire("GET /api/v1/me/sessions 200")]
    internal sealed class SessionsAnswer
    {
        [JsonProperty("sessions")] public List<Session> Sessions { get; set; }
    }

    /// <summary>The answer to <see cref="Auth.DeleteAccountAsync"/>.</summary>
    [Wire("POST /api/v1/me/delete 200")]
    public sealed class AccountDeleted
    {
        /// <summary>Always true.</summary>
        [JsonProperty("deleted")] public bool Deleted { get; set; }
        /// <summary>ISO-8601 UTC.</summary>
        [JsonProperty("deletedAt")] public string DeletedAt { get; set; }
    }

    /// <summary>An answer carrying the user.</summary>
    [Wire("GET /api/v1/me 200")]
    [Wire("PATCH /api/v1/me 200")]
    [Wire("POST /api/v1/user/email/verify 200")]
    internal sealed class UserAnswer
    {
        [JsonProperty("user")] public User User { get; set; }
    }

    [Wire("POST /api/v1/user/login/device body")]
    internal sealed class DeviceLoginBody
    {
        /// <summary>At least 128 random bits the client made and keeps: 22-128 characters of A-Z, a-z, 0-9, _ and -.</summary>
        [JsonProperty("deviceSecret")] public string DeviceSecret { get; set; }
        /// <summary>Create a guest account when the secret is unknown; left out unless true.</summary>
        [JsonProperty("create")] public bool? Create { get; set; }
    }

    [Wire("POST /api/v1/user/login/oidc/{provider} body")]
    internal sealed class IdTokenLoginBody
    {
        [JsonProperty("idToken")] public string IdToken { get; set; }
        [JsonProperty("nonce")] public string Nonce { get; set; }
        [JsonProperty("create")] public bool? Create { get; set; }
    }

    [Wire("POST /api/v1/user/login/steam body")]
    internal sealed class SteamLoginBody
    {
        /// <summary>GetAuthTicketForWebApi's ticket, hex.</summary>
        [JsonProperty("ticket")] public string Ticket { get; set; }
        [JsonProperty("create")] public bool? Create { get; set; }
    }

    [Wire("POST /api/v1/auth/device-code/token body")]
    internal sealed class DeviceTokenBody
    {
        [JsonProperty("deviceCode")] public string DeviceCode { get; set; }
    }

    [Wire("POST /api/v1/user/login/exchange body")]
    internal sealed class ExchangeBody
    {
        [JsonProperty("code")] public string Code { get; set; }
    }

    [Wire("POST /api/v1/user/s/logout body")]
    internal sealed class LogoutBody
    {
        [JsonProperty("all")] public bool? All { get; set; }
        [JsonProperty("others")] public bool? Others { get; set; }
    }

    [Wire("POST /api/v1/user/email/verify body")]
    internal sealed class VerifyEmailBody
    {
        [JsonProperty("code")] public string Code { get; set; }
    }

    [Wire("POST /api/v1/user/password/change body")]
    internal sealed class ChangePasswordBody
    {
        [JsonProperty("currentPassword")] public string CurrentPassword { get; set; }
        [JsonProperty("newPassword")] public string NewPassword { get; set; }
    }

    [Wire("POST /api/v1/user/password/forgot body")]
    internal sealed class ForgotPasswordBody
    {
        [JsonProperty("email")] public string Email { get; set; }
    }

    [Wire("POST /api/v1/user/password/reset body")]
    internal sealed class ResetPasswordBody
    {
        [JsonProperty("email")] public string Email { get; set; }
        [JsonProperty("code")] public string Code { get; set; }
        [JsonProperty("newPassword")] public string NewPassword { get; set; }
    }

    [Wire("POST /api/v1/me/delete body")]
    internal sealed class DeleteAccountBody
    {
        /// <summary>Left out for an account without a password identity (a guest).</summary>
        [JsonProperty("password")] public string Password { get; set; }
    }

    [Wire("PATCH /api/v1/me body")]
    internal sealed class UpdateProfileBody
    {
        [JsonProperty("username")] public string Username { get; set; }
        [JsonProperty("country")] public string Country { get; set; }
    }

    /// <summary>The tokens the client holds (to persist them, or to hand to another part of the game).</summary>
    public sealed class Tokens
    {
        public string AccessToken { get; set; }
        /// <summary>Null for tokens adopted without one: then there is no rotation.</summary>
        public string RefreshToken { get; set; }
        /// <summary>When the access token expires, when the server said so.</summary>
        public System.DateTimeOffset? ExpiresAt { get; set; }

        internal Tokens Copy() { return (Tokens)MemberwiseClone(); }
    }
}
