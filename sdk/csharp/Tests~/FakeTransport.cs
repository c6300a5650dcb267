// A transport that answers from the test's own handler and records every
// request, so a unit test sees exactly what the SDK sent (and how often).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tests
{
    public sealed class FakeTransport : ITransport
    {
        /// <summary>One request as sent, its body parsed when it was JSON.</summary>
        public sealed class Sent
        {
            public string Method;
            public string Url;
            public string Path;
            public IDictionary<string, string> Headers;
            public string Body;
            public JObject Json { get { return string.IsNullOrEmpty(Body) ? null : JObject.Parse(Body); } }
            public string Header(string name) { string v; return Headers.TryGetValue(name, out v) ? v : null; }
        }

        private readonly Func<Sent, Task<TransportResponse>> handler;
        private readonly object gate = new object();
        private readonly List<Sent> sent = new List<Sent>();

        /// <summary>Answers each request with what <paramref name="handler"/> returns (or throws).</summary>
        public FakeTransport(Func<Sent, Task<TransportResponse>> handler) { this.handler = handler; }

        public FakeTransport(Func<Sent, TransportResponse> handler) : this(request => Task.FromResult(handler(request))) { }

        /// <summary>Everything sent so far, in order.</summary>
        public IList<Sent> Requests { get { lock (gate) return sent.ToList(); } }

        /// <summary>How many requests went to <paramref name="path"/> (query left out).</summary>
        public int Count(string path) { lock (gate) return sent.Count(r => r.Path == path); }

        public Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var uri = new Uri(request.Url);
            var record = new Sent
            {
                Method = request.Method,
                Url = request.Url,
                Path = uri.AbsolutePath,
                Headers = new Dictionary<string, string>(request.Headers, StringComparer.OrdinalIgnoreCase),
                Body = request.Body == null ? null : Encoding.UTF8.GetString(request.Body),
            };
            lock (gate) sent.Add(record);
            return handler(record);
        }

        /// <summary>A JSON answer.</summary>
        public static TransportResponse Reply(int status, object body, IDictionary<string, string> headers = null)
        {
            var text = body == null ? "" : body as string ?? JsonConvert.SerializeObject(body);
            return new TransportResponse(status, headers ?? new Dictionary<string, string>(), Encoding.UTF8.GetBytes(text));
        }

        /// <summary>An error envelope.</summary>
        public static TransportResponse Error(int status, string code, string message = "test")
        {
            return Reply(status, new { error = new { code = code, message = message, status = status } });
        }

        /// <summary>The login shape, with tokens named after <paramref name="tag"/>.</summary>
        public static TransportResponse Tokens(string tag, int expiresIn = 900, bool? created = null)
        {
            var user = new { id = "usr_test", email = (string)null, username = "player_test", country = "ZZ", createdAt = "2026-01-01T00:00:00.000Z", emailVerified = false, identities = new[] { "device" } };
            object body = created.HasValue
                ? (object)new { accessToken = "access-" + tag, refreshToken = "refresh-" + tag, expiresIn = expiresIn, tokenType = "Bearer", user = user, created = created.Value }
                : new { accessToken = "access-" + tag, refreshToken = "refresh-" + tag, expiresIn = expiresIn, tokenType = "Bearer", user = user };
            return Reply(200, body);
        }

        /// <summary>What a transport throws when no answer came.</summary>
        public static ArenaNetworkException NoAnswer(string why = "connection reset")
        {
            return new ArenaNetworkException(why);
        }
    }
}
