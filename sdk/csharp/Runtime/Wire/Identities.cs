// Wire types of the ways an account signs in (GET/POST/DELETE /me/identities).
using System.Collections.Generic;
using Newtonsoft.Json;

namespace Arena.Sdk
{
    /// <summary>A way the account signs in (GET /me/identities).</summary>
    [Wire("GET /api/v1/me/identities 200", "identities[]")]
    [Wire("GET /api/v1/me/export 200", "identities[]")]
    public sealed class Identity
    {
        /// <summary><c>password</c>, <c>device</c>, <c>steam</c> or <c>oidc:&lt;name&gt;</c> (see <see cref="IdentityProviders"/>).</summary>
        [JsonProperty("provider")] public string Provider { get; set; }
        /// <summary>The provider's id of the player (the SteamID, the ID token's sub); null for password and device.</summary>
        [JsonProperty("subject")] public string Subject { get; set; }
        /// <summary>The password identity's address, or the one the provider gave; null when none.</summary>
        [JsonProperty("email")] public string Email { get; set; }
        /// <summary>ISO-8601 UTC.</summary>
        [JsonProperty("linkedAt")] public string LinkedAt { get; set; }
    }

    /// <summary>The providers an identity can have; an OpenID Connect one is <c>oidc:</c> and the name the server configured.</summary>
    public static class IdentityProviders
    {
        public const string Password = "password";
        public const string Device = "device";
        public const string Steam = "steam";
        /// <summary>The identity provider's name of a configured OpenID Connect provider: <c>oidc:google</c>.</summary>
        public static string Oidc(string name) { return "oidc:" + name; }
    }

    [Wire("GET /api/v1/me/identities 200")]
    [Wire("POST /api/v1/me/identities/{provider} 200")]
    [Wire("DELETE /api/v1/me/identities/{provider} 200")]
    internal sealed class IdentitiesAnswer
    {
        [JsonProperty("identities")] public List<Identity> Identities { get; set; }
    }

    /// <summary>
    /// What linking a provider takes: the credential its sign-in takes. Build it with
    /// <see cref="ForPassword"/>, <see cref="ForDevice"/>, <see cref="ForSteam"/> or <see cref="ForIdToken"/>.
    /// </summary>
    [Wire("POST /api/v1/me/identities/{provider} body")]
    public sealed class LinkIdentityBody
    {
        /// <summary>device: the guest secret.</summary>
        [JsonProperty("deviceSecret")] public string DeviceSecret { get; set; }
        /// <summary>steam: the hex ticket from GetAuthTicketForWebApi.</summary>
        [JsonProperty("ticket")] public string Ticket { get; set; }
        /// <summary>oidc:&lt;name&gt;: the ID token.</summary>
        [JsonProperty("idToken")] public string IdToken { get; set; }
        /// <summary>oidc:&lt;name&gt;: the nonce the app asked the provider for, checked when given.</summary>
        [JsonProperty("nonce")] public string Nonce { get; set; }
        /// <summary>password: the address (it then asks to be verified, as at registration).</summary>
        [JsonProperty("email")] public string Email { get; set; }
        /// <summary>password: 8 to 128 characters.</summary>
        [JsonProperty("password")] public string Password { get; set; }
        /// <summary>password: optional; 3 to 32 letters, digits or underscores.</summary>
        [JsonProperty("username")] public string Username { get; set; }

        /// <summary>The body linking <c>password</c>.</summary>
        public static LinkIdentityBody ForPassword(string email, string password, string username = null)
        {
            return new LinkIdentityBody { Email = email, Password = password, Username = username };
        }

        /// <summary>The body linking <c>device</c> (a guest secret, e.g. <see cref="GuestSignIn.DeviceSecret"/>).</summary>
        public static LinkIdentityBody ForDevice(string deviceSecret)
        {
            return new LinkIdentityBody { DeviceSecret = deviceSecret };
        }

        /// <summary>The body linking <c>steam</c>.</summary>
        public static LinkIdentityBody ForSteam(string ticket)
        {
            return new LinkIdentityBody { Ticket = ticket };
        }

        /// <summary>The body linking <c>oidc:&lt;name&gt;</c>.</summary>
        public static LinkIdentityBody ForIdToken(string idToken, string nonce = null)
        {
            return new LinkIdentityBody { IdToken = idToken, Nonce = nonce };
        }
    }
}
