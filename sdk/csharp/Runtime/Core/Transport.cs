// One HTTP exchange, behind an interface a game can replace (UnityWebRequest on
// WebGL, a recording transport in tests). A transport never retries and never
// interprets the answer: the callers decide what may be sent twice.
using System;
using System.Collections.Generic;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    /// <summary>One request as the SDK sends it. Header names are lower case.</summary>
    public sealed class TransportRequest
    {
        public string Method { get; set; }
        /// <summary>The absolute URL, query included.</summary>
        public string Url { get; set; }
        public IDictionary<string, string> Headers { get; private set; }
        /// <summary>The body's bytes, or null for none.</summary>
        public byte[] Body { get; set; }
        /// <summary>How long to wait for the whole answer, body included.</summary>
        public TimeSpan Timeout { get; set; }

        public TransportRequest()
        {
            Headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            Timeout = TimeSpan.FromSeconds(30);
        }
    }

    /// <summary>Any HTTP answer, whatever its status. Header lookups ignore case.</summary>
    public sealed class TransportResponse
    {
        public int Status { get; private set; }
        public IDictionary<string, string> Headers { get; private set; }
        public byte[] Body { get; private set; }

        public TransportResponse(int status, IDictionary<string, string> headers, byte[] body)
        {
            Status = status;
            Headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            if (headers != null) foreach (var pair in headers) Headers[pair.Key] = pair.Value;
            Body = body ?? new byte[0];
        }

        public bool IsSuccess { get { return Status >= 200 && Status < 300; } }

        public string Text { get { return Encoding.UTF8.GetString(Body); } }

        /// <summary>A header's value, or null.</summary>
        public string Header(string name)
        {
            string value;
            return Headers.TryGetValue(name, out value) ? value : null;
        }
    }

    /// <summary>
    /// Sends one request and returns the answer. Throws <see cref="ArenaNetworkException"/>
    /// when there is no answer (refused, reset, DNS, timeout) and
    /// <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> fires.
    /// </summary>
    public interface ITransport
    {
        Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken);
    }
}
