// The transport of Unity's WebGL builds, whose browser sandbox has no sockets
// for HttpClient: each request goes through UnityWebRequest (the browser's
// fetch underneath). Compiled only where UNITY_WEBGL is defined; elsewhere use
// HttpClientTransport, the default.
//
// It cannot run outside a Unity player: test/sdk-csharp/compile.test.ts only
// compile-checks it with -define:UNITY_WEBGL against a stub of the
// UnityEngine.Networking members it uses (Tests~/Tools/UnityStubs.cs, copied
// from Unity's scripting reference), which catches a syntax or API-shape slip,
// not a behaviour one.
#if UNITY_WEBGL
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using UnityEngine.Networking;

namespace Arena.Sdk
{
    /// <summary>
    /// An <see cref="ITransport"/> over UnityWebRequest, for WebGL:
    /// <c>new ArenaClientOptions { BaseUrl = ..., Transport = new UnityWebRequestTransport() }</c>.
    /// Any HTTP status is an answer; no answer at all (refused, DNS, timeout, CORS) throws
    /// <see cref="ArenaNetworkException"/>; cancellation aborts the request and throws
    /// <see cref="OperationCanceledException"/>. Call it from Unity's main thread (every
    /// UnityWebRequest call must be), which is where an await on WebGL resumes anyway.
    /// </summary>
    public sealed class UnityWebRequestTransport : ITransport
    {
        /// <summary>Sends one request and returns the answer, whatever its status.</summary>
        public async Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken)
        {
            if (request == null) throw new ArgumentNullException("request");
            cancellationToken.ThrowIfCancellationRequested();
            using (var web = new UnityWebRequest(request.Url, request.Method))
            {
                web.downloadHandler = new DownloadHandlerBuffer();
                string contentType = null;
                foreach (var header in request.Headers)
                {
                    if (string.Equals(header.Key, "content-type", StringComparison.OrdinalIgnoreCase)) contentType = header.Value;
                    else web.SetRequestHeader(header.Key, header.Value);
                }
                if (request.Body != null)
                {
                    web.uploadHandler = new UploadHandlerRaw(request.Body);
                    if (contentType != null) web.uploadHandler.contentType = contentType;
                }
                // Whole seconds, at least one (0 would mean none).
                web.timeout = Math.Max(1, (int)Math.Ceiling(request.Timeout.TotalSeconds));
                var done = new TaskCompletionSource<bool>();
                var operation = web.SendWebRequest();
                operation.completed += _ => done.TrySetResult(true);
                // The same deadline as HttpClientTransport, in case the player does not honour timeout.
                using (var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
                {
                    deadline.CancelAfter(request.Timeout);
                    using (deadline.Token.Register(() => done.TrySetResult(false)))
                    {
                        // An operation already finished does not raise completed again.
                        if (operation.isDone) done.TrySetResult(true);
                        if (!await done.Task.ConfigureAwait(true))
                        {
                            web.Abort();
                            if (cancellationToken.IsCancellationRequested) throw new OperationCanceledException(cancellationToken);
                            throw new ArenaNetworkException(request.Method + " " + HttpClientTransport.PathOf(request.Url) + ": timed out after " + request.Timeout.TotalSeconds + " s");
                        }
                    }
                }
                // ProtocolError is an HTTP status outside 2xx: an answer, as with HttpClientTransport.
                if (web.result == UnityWebRequest.Result.ConnectionError || web.result == UnityWebRequest.Result.DataProcessingError || web.responseCode == 0)
                    throw new ArenaNetworkException(request.Method + " " + HttpClientTransport.PathOf(request.Url) + ": " + (web.error ?? "no answer"));
                var headers = web.GetResponseHeaders() ?? new Dictionary<string, string>();
                return new TransportResponse((int)web.responseCode, headers, web.downloadHandler.data);
            }
        }
    }
}
#endif
