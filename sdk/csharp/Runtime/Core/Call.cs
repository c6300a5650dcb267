using System;
using System.Collections.Generic;

namespace Arena.Sdk
{
    /// <summary>One request before the transport: a path under the base URL, a JSON body (or raw bytes), extra headers.</summary>
    internal sealed class Call
    {
        public string Method { get; set; }
        /// <summary>Starts with /api/v1/...; each id in it already escaped (<see cref="ArenaClient.Segment"/>).</summary>
        public string Path { get; set; }
        /// <summary>Query parameters; null values are left out.</summary>
        public IDictionary<string, string> Query { get; set; }
        /// <summary>Serialized as JSON when not null.</summary>
        public object Body { get; set; }
        /// <summary>A body that is not JSON (an evidence upload), with its type. Not with Body.</summary>
        public byte[] RawBody { get; set; }
        public string RawContentType { get; set; }
        public IDictionary<string, string> Headers { get; set; }
        /// <summary>Added to the client's timeout (a long poll's wait).</summary>
        public TimeSpan ExtraTimeout { get; set; }

        public Call(string method, string path, object body = null)
        {
            Method = method;
            Path = path;
            Body = body;
        }

        public Call With(string header, string value)
        {
            var copy = (Call)MemberwiseClone();
            copy.Headers = Headers == null ? new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase) : new Dictionary<string, string>(Headers, StringComparer.OrdinalIgnoreCase);
            copy.Headers[header] = value;
            return copy;
        }
    }
}
