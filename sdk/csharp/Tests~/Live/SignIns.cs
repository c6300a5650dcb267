// The sign-ins of Arena.Sdk against a real server, driven line by line by
// test/sdk-csharp/sign-ins.test.ts: the test sends a command on stdin, this
// program runs it with the SDK and answers one JSON line on stdout. Between
// commands the test does what only it can (approve a device code on the
// /device page, mint an ID token, move the server's clock).
//
//   mono SignIns.exe <baseUrl>
//   > new alice /tmp/store.json        a client (on a FileArenaStore when a path is given)
//   > guest alice                      LoginAsGuestAsync()
//   > login alice <identifier> <password>
//   > idtoken alice <provider> <token> [create]
//   > steam alice <ticket> [create]
//   > device-start tv | device-check tv | device-poll tv
//   > web-begin alice <provider> <redirect> [create] | web-complete alice <the URL it came back to>
//   > adopt bob alice                  bob.UseToken(alice's tokens)
//   > refresh-both alice bob           both rotate the same refresh token at once
//   > me alice | sessions alice | identities alice | link-idtoken alice <provider> <token> | unlink alice <provider>
//   > profile alice <username or -> [country] | export alice | delete alice [password] | logout alice [all]
//   > tokens alice                     the tokens held (to compare)
//
// Secrets (tokens, the device token and secret) are printed as their SHA-256 only.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Live
{
    public static class SignIns
    {
        private static string baseUrl;
        private static readonly Dictionary<string, ArenaClient> Clients = new Dictionary<string, ArenaClient>();
        private static readonly Dictionary<string, DeviceCode> Codes = new Dictionary<string, DeviceCode>();
        private static readonly Dictionary<string, int> TokenEvents = new Dictionary<string, int>();

        public static int Main(string[] args)
        {
            if (args.Length != 1)
            {
                Console.Error.WriteLine("usage: SignIns.exe <baseUrl>");
                return 2;
            }
            baseUrl = args[0];
            string line;
            while ((line = Console.In.ReadLine()) != null)
            {
                if (line.Trim().Length == 0) continue;
                JObject answer;
                try
                {
                    answer = Run(line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries)).GetAwaiter().GetResult();
                    answer["ok"] = true;
                }
                catch (ArenaApiException error)
                {
                    answer = new JObject { { "ok", false }, { "error", error.GetType().Name }, { "status", error.Status }, { "code", error.Code }, { "message", error.Message } };
                }
                catch (Exception error)
                {
                    answer = new JObject { { "ok", false }, { "error", error.GetType().Name }, { "message", error.Message } };
                }
                Console.Out.WriteLine(answer.ToString(Formatting.None));
                Console.Out.Flush();
            }
            foreach (var client in Clients.Values) client.Dispose();
            return 0;
        }

        private static ArenaClient Client(string name)
        {
            ArenaClient client;
            if (!Clients.TryGetValue(name, out client)) throw new ArgumentException("no client named " + name + " (send: new " + name + ")");
            return client;
        }

        private static JObject UserOf(User user)
        {
            return JObject.FromObject(user);
        }

        private static async Task<JObject> Run(string[] words)
        {
            var command = words[0];
            var name = words.Length > 1 ? words[1] : null;
            var rest = words.Skip(2).ToArray();
            switch (command)
            {
                case "new":
                {
                    var options = new ArenaClientOptions { BaseUrl = baseUrl };
                    if (rest.Length > 0) options.Store = new FileArenaStore(rest[0]);
                    var client = new ArenaClient(options);
                    TokenEvents[name] = 0;
                    client.Auth.TokensChanged += tokens => { lock (TokenEvents) TokenEvents[name]++; };
                    if (Clients.ContainsKey(name)) Clients[name].Dispose();
                    Clients[name] = client;
                    return new JObject { { "signedIn", client.Auth.IsSignedIn }, { "deviceToken", Digest(client.Auth.DeviceToken) } };
                }
                case "guest":
                {
                    var guest = await Client(name).Auth.LoginAsGuestAsync();
                    return new JObject { { "user", UserOf(guest.User) }, { "created", guest.Created }, { "deviceSecret", Digest(guest.DeviceSecret) } };
                }
                case "login":
                    return new JObject { { "user", UserOf(await Client(name).Auth.LoginAsync(rest[0], rest[1])) } };
                case "idtoken":
                {
                    var result = await Client(name).Auth.LoginWithIdTokenAsync(rest[0], rest[1], null, rest.Length > 2 && rest[2] == "create");
                    return new JObject { { "user", UserOf(result.User) }, { "created", result.Created } };
                }
                case "steam":
                {
                    var result = await Client(name).Auth.LoginWithSteamAsync(rest[0], rest.Length > 1 && rest[1] == "create");
                    return new JObject { { "user", UserOf(result.User) }, { "created", result.Created } };
                }
                case "device-start":
                {
                    var code = await Client(name).Auth.StartDeviceCodeAsync();
                    Codes[name] = code;
                    return new JObject { { "userCode", code.UserCode }, { "verificationUri", code.VerificationUri }, { "interval", code.Interval }, { "expiresIn", code.ExpiresIn } };
                }
                case "device-check":
                {
                    var user = await Client(name).Auth.CheckDeviceCodeAsync(Codes[name].Code);
                    return new JObject { { "user", user == null ? null : UserOf(user) } };
                }
                case "device-poll":
                {
                    var user = await Client(name).Auth.PollDeviceCodeAsync(Codes[name], TimeSpan.FromMilliseconds(50));
                    return new JObject { { "user", UserOf(user) }, { "signedIn", Client(name).Auth.IsSignedIn } };
                }
                case "web-begin":
                    return new JObject { { "url", Client(name).Auth.BeginWebLogin(rest[0], rest[1], rest.Length > 2 && rest[2] == "create") } };
                case "web-complete":
                {
                    var result = await Client(name).Auth.CompleteWebLoginAsync(rest[0]);
                    return new JObject { { "user", UserOf(result.User) }, { "created", result.Created } };
                }
                case "adopt":
                {
                    var held = Client(rest[0]).Auth.Current;
                    Client(name).Auth.UseToken(held.AccessToken, held.RefreshToken);
                    return new JObject();
                }
                case "refresh-both":
                {
                    var one = Client(name);
                    var two = Client(rest[0]);
                    await Task.WhenAll(Task.Run(() => one.Auth.RefreshAsync()), Task.Run(() => two.Auth.RefreshAsync()));
                    return new JObject { { "first", Tokens(one) }, { "second", Tokens(two) } };
                }
                case "tokens":
                    return new JObject { { "tokens", Tokens(Client(name)) }, { "events", TokenEvents[name] } };
                case "me":
                    return new JObject { { "user", UserOf(await Client(name).MeAsync()) }, { "tokens", Tokens(Client(name)) } };
                case "sessions":
                    return new JObject { { "sessions", JArray.FromObject(await Client(name).Auth.SessionsAsync()) } };
                case "identities":
                    return new JObject { { "identities", JArray.FromObject(await Client(name).Identities.ListAsync()) } };
                case "link-idtoken":
                    return new JObject { { "identities", JArray.FromObject(await Client(name).Identities.LinkAsync(rest[0], LinkIdentityBody.ForIdToken(rest[1]))) } };
                case "unlink":
                    return new JObject { { "identities", JArray.FromObject(await Client(name).Identities.UnlinkAsync(rest[0])) } };
                case "profile":
                    return new JObject { { "user", UserOf(await Client(name).UpdateProfileAsync(rest[0] == "-" ? null : rest[0], rest.Length > 1 ? rest[1] : null)) } };
                case "export":
                {
                    var export = await Client(name).ExportAccountAsync();
                    return new JObject { { "userId", export["user"]["id"] }, { "exportedAt", export["exportedAt"] }, { "keys", new JArray(export.Properties().Select(p => p.Name).OrderBy(k => k, StringComparer.Ordinal)) } };
                }
                case "delete":
                {
                    var deleted = await Client(name).Auth.DeleteAccountAsync(rest.Length > 0 ? rest[0] : null);
                    return new JObject { { "deleted", deleted.Deleted }, { "deletedAt", deleted.DeletedAt }, { "signedIn", Client(name).Auth.IsSignedIn } };
                }
                case "logout":
                {
                    var result = await Client(name).Auth.LogoutAsync(rest.Length > 0 && rest[0] == "all");
                    return new JObject { { "revoked", result.Revoked }, { "signedIn", Client(name).Auth.IsSignedIn } };
                }
                default:
                    throw new ArgumentException("unknown command " + command);
            }
        }

        private static JToken Tokens(ArenaClient client)
        {
            var held = client.Auth.Current;
            if (held == null) return JValue.CreateNull();
            return new JObject { { "accessToken", Digest(held.AccessToken) }, { "refreshToken", Digest(held.RefreshToken) } };
        }

        /// <summary>A secret's SHA-256 in hex: enough to compare, nothing to leak into a test log.</summary>
        private static string Digest(string secret)
        {
            if (secret == null) return null;
            using (var sha = System.Security.Cryptography.SHA256.Create())
                return string.Concat(sha.ComputeHash(System.Text.Encoding.UTF8.GetBytes(secret)).Select(b => b.ToString("x2")));
        }
    }
}
