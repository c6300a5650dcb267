// The signed-in account: who it is, its profile, its identities, its export.
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private IdentitiesApi identities;

        /// <summary>The ways the account signs in: <see cref="IdentitiesApi.ListAsync"/>, <see cref="IdentitiesApi.LinkAsync"/>, <see cref="IdentitiesApi.UnlinkAsync"/>.</summary>
        public IdentitiesApi Identities { get { return identities ?? (identities = new IdentitiesApi(this)); } }

        /// <summary>The signed-in user.</summary>
        public async Task<User> MeAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return (await GetAsync<UserAnswer>("/api/v1/me", cancellationToken).ConfigureAwait(false)).User;
        }

        /// <summary>
        /// Changes the signed-in user's username (3 to 32 letters, digits or underscores; 409
        /// <c>username_taken</c>) or country (ISO 3166-1 alpha-2), or both; null leaves one as it is.
        /// Returns the user.
        /// </summary>
        public async Task<User> UpdateProfileAsync(string username = null, string country = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (username == null && country == null) throw new System.ArgumentException("UpdateProfileAsync: pass a username, a country or both");
            var call = new Call("PATCH", "/api/v1/me", new UpdateProfileBody { Username = username, Country = country });
            return (await CallAsync<UserAnswer>(call, cancellationToken).ConfigureAwait(false)).User;
        }

        /// <summary>
        /// Everything arena keeps about the signed-in user, as one document (GET /me/export): the user,
        /// identities, every session, match, ledger posting, withdrawal, security event and rating —
        /// never a hash, a token or a key. Returned as the JSON object itself (the document is large and
        /// meant to be saved or shown whole): its fields are the server's, dates and amounts as strings.
        /// </summary>
        public Task<JObject> ExportAccountAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return GetAsync<JObject>("/api/v1/me/export", cancellationToken);
        }
    }

    /// <summary>
    /// The ways the signed-in account signs in (<see cref="ArenaClient.Identities"/>): list them, link
    /// another (with the credential of that provider's sign-in) and unlink one. An identity already
    /// linked to another account is ArenaApiException 409 <c>identity_in_use</c> (accounts are never
    /// merged); unlinking the only way left to sign in is 409 <c>last_identity</c>.
    /// </summary>
    public sealed class IdentitiesApi
    {
        private readonly ArenaClient client;

        internal IdentitiesApi(ArenaClient client) { this.client = client; }

        /// <summary>Every way the account signs in, in the order they were linked.</summary>
        public async Task<IList<Identity>> ListAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return Of(await client.GetAsync<IdentitiesAnswer>("/api/v1/me/identities", cancellationToken).ConfigureAwait(false));
        }

        /// <summary>
        /// Links an identity to the signed-in account: <c>password</c> with
        /// <see cref="LinkIdentityBody.ForPassword"/> (the address then asks to be verified, as at
        /// registration), <c>device</c> with <see cref="LinkIdentityBody.ForDevice"/>, <c>steam</c> with
        /// <see cref="LinkIdentityBody.ForSteam"/>, <c>oidc:&lt;name&gt;</c> with
        /// <see cref="LinkIdentityBody.ForIdToken"/>. Returns every identity of the account, the new one last.
        /// </summary>
        public async Task<IList<Identity>> LinkAsync(string provider, LinkIdentityBody body, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (body == null) throw new System.ArgumentNullException("body");
            return Of(await client.CallAsync<IdentitiesAnswer>(new Call("POST", PathOf(provider), body), cancellationToken).ConfigureAwait(false));
        }

        /// <summary>Unlinks an identity; returns the ones left. ArenaApiException 409 <c>last_identity</c> when it is the only way left to sign in, 404 when the account has none of that provider.</summary>
        public async Task<IList<Identity>> UnlinkAsync(string provider, CancellationToken cancellationToken = default(CancellationToken))
        {
            return Of(await client.CallAsync<IdentitiesAnswer>(new Call("DELETE", PathOf(provider)), cancellationToken).ConfigureAwait(false));
        }

        private static string PathOf(string provider)
        {
            if (string.IsNullOrEmpty(provider)) throw new System.ArgumentException("provider is empty", "provider");
            return "/api/v1/me/identities/" + ArenaClient.Segment(provider);
        }

        private static IList<Identity> Of(IdentitiesAnswer answer)
        {
            return answer.Identities ?? new List<Identity>();
        }
    }
}
