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
