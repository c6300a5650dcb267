// The client of arena's public API for one player on one device.
//
//   var arena = new ArenaClient(new ArenaClientOptions { BaseUrl = "https://play.example.com" });
//   var guest = await arena.Auth.LoginAsGuestAsync();
//   var session = await arena.Game(gameId, gameKey).OpenSessionAsync(matchId);
//
// The class is partial: each area of the API (games, wallet, events, ...) adds
// its members in its own file.
using System;
using System.Collections.Generic;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed class ArenaClientOptions
    {
        /// <summary>The server's address, e.g. https://play.example.com (arena serve listens on http://127.0.0.1:8080 in local).</summary>
        public string BaseUrl { get; set; }
        /// <summary>How requests travel; default <see cref="HttpClientTransport"/> (on WebGL, use UnityWebRequestTransport).</summary>
        public ITransport Transport { get; set; }
        /// <summary>Per request; long polls add their wait. Default 30 s.</summary>
        public TimeSpan? Timeout { get; set; }
        /// <summary>
        /// Where the client keeps what must survive a restart: the tokens, the device token and
        /// a guest's device secret. Default: memory only. See <see cref="FileArenaStore"/> and,
        /// in Unity, <c>PlayerPrefsArenaStore</c>.
        /// </summary>
        public IArenaStore Store { get; set; }
        /// <summary>Called with the new tokens after every sign-in and rotation, and with null when they are gone.</summary>
        public Action<Tokens> OnTokens { get; set; }
        /// <summary>This device's token from an earlier run; without one (and none in the store) the SDK makes one.</summary>
        public string DeviceToken { get; set; }
        /// <summary>Called with the device token after every sign-in.</summary>
        public Action<string> OnDeviceToken { get; set; }
        /// <summary>The client's clock (tests move it). Default: the system clock.</summary>
        public Func<DateTimeOffset> Now { get; set; }
    }

    public sealed partial class ArenaClient : IDisposable
    {
        /// <summary>The base URL, without a trailing slash.</summary>
        public string BaseUrl { get; private set; }
        /// <summary>Sign-ins, tokens and their rotation, the account.</summary>
        public Auth Auth { get; private set; }

        internal readonly ITransport Transport;
        internal readonly TimeSpan Timeout;
        internal readonly ArenaClientOptions Options;
        private readonly bool ownsTransport;

        public ArenaClient(ArenaClientOptions options)
        {
            if (options == null) throw new ArgumentNullException("options");
            Uri uri;
            if (options.BaseUrl == null || !Uri.TryCreate(options.BaseUrl, UriKind.Absolute, out uri) || (uri.Scheme != "http" && uri.Scheme != "https"))
                throw new ArgumentException("BaseUrl \"" + options.BaseUrl + "\" is not an absolute http(s) URL", "options");
            Options = options;
            BaseUrl = options.BaseUrl.TrimEnd('/');
            ownsTransport = options.Transport == null;
            Transport = options.Transport ?? new HttpClientTransport();
            Timeout = options.Timeout ?? TimeSpan.FromSeconds(30);
            Auth = new Auth(this, options);
        }

        /// <summary>An id escaped for a path segment.</summary>
        internal static string Segment(string value)
        {
            if (value == null) throw new ArgumentNullException("value");
            return Uri.EscapeDataString(value);
        }

        /// <summary>Sends a call as it is (no bearer added, no retry).</summary>
        internal Task<TransportResponse> SendAsync(Call call, CancellationToken cancellationToken)
        {
            var request = new TransportRequest { Method = call.Method, Url = UrlOf(call), Timeout = Timeout + call.ExtraTimeout };
            request.Headers["accept"] = "application/json";
            if (call.Body != null)
            {
                request.Body = Json.Bytes(call.Body);
                request.Headers["content-type"] = "application/json";
            }
            else if (call.RawBody != null)
            {
                request.Body = call.RawBody;
                request.Headers["content-type"] = call.RawContentType;
            }
            if (call.Headers != null) foreach (var header in call.Headers) request.Headers[header.Key] = header.Value;
            return Transport.SendAsync(request, cancellationToken);
        }

        /// <summary>An authenticated call's JSON answer (rotating the tokens when needed).</summary>
        internal async Task<T> CallAsync<T>(Call call, CancellationToken cancellationToken)
        {
            return Json.Read<T>(await Auth.SendAsync(call, cancellationToken).ConfigureAwait(false));
        }

        /// <summary>An authenticated GET's JSON answer.</summary>
        internal Task<T> GetAsync<T>(string path, CancellationToken cancellationToken, IDictionary<string, string> query = null)
        {
            return CallAsync<T>(new Call("GET", path) { Query = query }, cancellationToken);
        }

        /// <summary>An authenticated call whose answer has no body worth reading (204, or 2xx).</summary>
        internal async Task CallAsync(Call call, CancellationToken cancellationToken)
        {
            var response = await Auth.SendAsync(call, cancellationToken).ConfigureAwait(false);
            if (!response.IsSuccess) throw ArenaApiException.From(response);
        }

        internal string UrlOf(Call call)
        {
            var url = new StringBuilder(BaseUrl).Append(call.Path);
            if (call.Query != null)
            {
                var first = true;
                foreach (var pair in call.Query)
                {
                    if (pair.Value == null) continue;
                    url.Append(first ? '?' : '&').Append(Uri.EscapeDataString(pair.Key)).Append('=').Append(Uri.EscapeDataString(pair.Value));
                    first = false;
                }
            }
            return url.ToString();
        }

        public void Dispose()
        {
            if (ownsTransport) ((IDisposable)Transport).Dispose();
        }
    }
}
