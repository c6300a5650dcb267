// The transport of .NET, Mono and Unity on every platform but WebGL (whose
// browser sandbox has no sockets: see UnityWebRequestTransport).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed class HttpClientTransport : ITransport, IDisposable
    {
        private readonly HttpClient client;
        private readonly bool owned;

        /// <summary>A transport with its own HttpClient (no redirects followed: arena never answers one to the SDK).</summary>
        public HttpClientTransport() : this(new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }), true) { }

        /// <summary>A transport over the app's HttpClient (kept open when this is disposed).</summary>
        public HttpClientTransport(HttpClient client) : this(client, false) { }

        private HttpClientTransport(HttpClient client, bool owned)
        {
            this.client = client;
            this.owned = owned;
            // Each request carries its own deadline.
            if (owned) client.Timeout = System.Threading.Timeout.InfiniteTimeSpan;
        }

        public async Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken)
        {
            using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
            {
                deadline.CancelAfter(request.Timeout);
                var message = new HttpRequestMessage(new HttpMethod(request.Method), request.Url);
                string contentType = null;
                foreach (var header in request.Headers)
                {
                    if (string.Equals(header.Key, "content-type", StringComparison.OrdinalIgnoreCase)) contentType = header.Value;
                    else message.Headers.TryAddWithoutValidation(header.Key, header.Value);
                }
                if (request.Body != null)
                {
                    message.Content = new ByteArrayContent(request.Body);
                    if (contentType != null) message.Content.Headers.TryAddWithoutValidation("content-type", contentType);
                }
                try
                {
                    using (var response = await client.SendAsync(message, HttpCompletionOption.ResponseHeadersRead, deadline.Token).ConfigureAwait(false))
                    {
                        // The body is read under the same deadline: headers followed by a stall end in a timeout.
                        var body = await ReadBody(response, deadline.Token).ConfigureAwait(false);
                        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
                        foreach (var h in response.Headers) headers[h.Key] = string.Join(", ", h.Value);
                        if (response.Content != null) foreach (var h in response.Content.Headers) headers[h.Key] = string.Join(", ", h.Value);
                        return new TransportResponse((int)response.StatusCode, headers, body);
                    }
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    throw;
                }
                catch (OperationCanceledException error)
                {
                    throw new ArenaNetworkException(request.Method + " " + PathOf(request.Url) + ": timed out after " + request.Timeout.TotalSeconds + " s", error);
                }
                catch (HttpRequestException error)
                {
                    throw new ArenaNetworkException(request.Method + " " + PathOf(request.Url) + ": " + Innermost(error).Message, error);
                }
                catch (System.IO.IOException error)
                {
                    throw new ArenaNetworkException(request.Method + " " + PathOf(request.Url) + ": " + error.Message, error);
                }
                catch (System.Net.WebException error)
                {
                    throw new ArenaNetworkException(request.Method + " " + PathOf(request.Url) + ": " + error.Message, error);
                }
                finally
                {
                    message.Dispose();
                }
            }
        }

        private static async Task<byte[]> ReadBody(HttpResponseMessage response, CancellationToken cancellationToken)
        {
            if (response.Content == null) return new byte[0];
            var read = response.Content.ReadAsByteArrayAsync();
            var cancelled = new TaskCompletionSource<bool>();
            using (cancellationToken.Register(() => cancelled.TrySetResult(true)))
            {
                if (await Task.WhenAny(read, cancelled.Task).ConfigureAwait(false) != read)
                {
                    response.Dispose();
                    throw new OperationCanceledException(cancellationToken);
                }
            }
            return await read.ConfigureAwait(false);
        }

        /// <summary>The path of a URL, without its query (which may carry a cursor, never a secret; still, errors name paths only).</summary>
        internal static string PathOf(string url)
        {
            Uri uri;
            return Uri.TryCreate(url, UriKind.Absolute, out uri) ? uri.AbsolutePath : url;
        }

        private static Exception Innermost(Exception error)
        {
            while (error.InnerException != null) error = error.InnerException;
            return error;
        }

        public void Dispose()
        {
            if (owned) client.Dispose();
        }
    }
}
