// The event plane over a WebSocket (contract §14): a single-use ticket
// (POST /api/v1/events/socket-ticket), the socket at
// ws(s)://<base>/api/v1/events/socket?ticket=<ticket> (the ticket in the URL is
// the protocol: it is spent on the upgrade and lives 30 s; the access token
// never travels there), one subscribe frame, then `events`, `ping` and `error`
// frames from the server. The socket itself sits behind IEventSocket so the
// subscription's loop (Subscription.cs) can be driven by a fake in tests.
using System;
using System.IO;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    /// <summary>The close codes the server sends on the event socket (see <see cref="EventSocketException.CloseCode"/>).</summary>
    public static class SocketCloseCodes
    {
        /// <summary>The session ended (logout, ban, password change or reset, deletion, expiry): sign in again.</summary>
        public const int SessionEnded = 4001;
        /// <summary>The client read too slowly: the subscription reconnects and resumes from its cursor.</summary>
        public const int SlowConsumer = 4008;
        /// <summary>Too many sockets for the account or the server: the subscription backs off and tries again.</summary>
        public const int TooMany = 4029;
        /// <summary>The server is stopping: the subscription reconnects at once (elsewhere) and resumes.</summary>
        public const int Restart = 1012;
        /// <summary>What the SDK closes with when it gives a socket up itself (nothing heard for too long).</summary>
        public const int ClientClose = 4000;
        /// <summary>No close frame: the socket could not be opened, or the connection dropped.</summary>
        public const int Abnormal = 1006;
    }

    /// <summary>
    /// The event socket closed (<see cref="CloseCode"/>: its close code; 1006 when it could not be
    /// opened or dropped without a close), or the server refused a message (<see cref="Code"/>: the
    /// error frame's code, e.g. <c>validation_failed</c> for a cursor it did not issue).
    /// </summary>
    public sealed class EventSocketException : ArenaException
    {
        /// <summary>The close code as text ("4001"), or the error frame's code ("validation_failed").</summary>
        public string Code { get; private set; }
        /// <summary>The close code, or null for an error frame.</summary>
        public int? CloseCode { get; private set; }

        internal EventSocketException(int closeCode, string message, Exception inner = null) : base(message, inner)
        {
            CloseCode = closeCode;
            Code = closeCode.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        internal EventSocketException(string code, string message) : base(message)
        {
            Code = code;
        }
    }

    /// <summary>What one receive on an event socket gave: a text frame, or the close (code and reason).</summary>
    internal sealed class SocketMessage
    {
        /// <summary>The text frame, or null when the socket closed.</summary>
        public string Text;
        /// <summary>The close code when the socket closed (1006 when it dropped without a close frame).</summary>
        public int CloseCode;
        public string CloseReason;

        public bool IsClose { get { return Text == null; } }

        public static SocketMessage Frame(string text) { return new SocketMessage { Text = text }; }
        public static SocketMessage Closed(int code, string reason) { return new SocketMessage { CloseCode = code, CloseReason = reason ?? "" }; }
    }

    /// <summary>
    /// One WebSocket, as the event subscription uses it: open, send text, receive text frames
    /// one at a time until the close, close. One receive and one send may run at once, and
    /// <see cref="Close"/> may be called from any thread at any time.
    /// </summary>
    internal interface IEventSocket : IDisposable
    {
        /// <summary>Opens the socket; throws when it cannot be opened (refused, the upgrade refused, a timeout).</summary>
        Task ConnectAsync(Uri url, CancellationToken cancellationToken);
        Task SendAsync(string text, CancellationToken cancellationToken);
        /// <summary>The next text frame, or the close; a connection that drops gives a close with 1006.</summary>
        Task<SocketMessage> ReceiveAsync(CancellationToken cancellationToken);
        /// <summary>Starts the close handshake with <paramref name="code"/> and does not wait for it; never throws.</summary>
        void Close(int code, string reason);
    }

    /// <summary>IEventSocket over System.Net.WebSockets.ClientWebSocket (.NET, Mono, Unity except WebGL).</summary>
    internal sealed class ClientWebSocketEventSocket : IEventSocket
    {
        private readonly ClientWebSocket socket;

        /// <summary>Throws PlatformNotSupportedException where ClientWebSocket cannot work (WebGL).</summary>
        public ClientWebSocketEventSocket()
        {
            socket = new ClientWebSocket();
        }

        public async Task ConnectAsync(Uri url, CancellationToken cancellationToken)
        {
            try
            {
                await socket.ConnectAsync(url, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                throw;
            }
            catch (NotSupportedException)
            {
                // No sockets on this platform: the subscription long-polls instead.
                throw;
            }
            catch (Exception error)
            {
                // Not the exception as it is: its message may quote the URL, and the ticket with it.
                throw new EventSocketException(SocketCloseCodes.Abnormal, "The event socket could not be opened (" + error.GetType().Name + ")");
            }
        }

        public Task SendAsync(string text, CancellationToken cancellationToken)
        {
            return socket.SendAsync(new ArraySegment<byte>(Encoding.UTF8.GetBytes(text)), WebSocketMessageType.Text, true, cancellationToken);
        }

        public async Task<SocketMessage> ReceiveAsync(CancellationToken cancellationToken)
        {
            var buffer = new byte[8192];
            using (var message = new MemoryStream())
            {
                while (true)
                {
                    WebSocketReceiveResult result;
                    try
                    {
                        result = await socket.ReceiveAsync(new ArraySegment<byte>(buffer), cancellationToken).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        throw;
                    }
                    catch (Exception)
                    {
                        if (cancellationToken.IsCancellationRequested) throw new OperationCanceledException(cancellationToken);
                        return SocketMessage.Closed(SocketCloseCodes.Abnormal, "the connection dropped");
                    }
                    if (result.MessageType == WebSocketMessageType.Close)
                    {
                        var code = result.CloseStatus.HasValue ? (int)result.CloseStatus.Value : SocketCloseCodes.Abnormal;
                        // Answer the close (best effort) so the server sees a clean end.
                        Close(code == SocketCloseCodes.Abnormal ? 1000 : code, "");
                        return SocketMessage.Closed(code, result.CloseStatusDescription);
                    }
                    message.Write(buffer, 0, result.Count);
                    if (result.EndOfMessage)
                    {
                        // The server sends text frames only; a binary one is read as text (and then fails to parse).
                        return SocketMessage.Frame(Encoding.UTF8.GetString(message.ToArray()));
                    }
                }
            }
        }

        public void Close(int code, string reason)
        {
            try
            {
                if (socket.State != WebSocketState.Open && socket.State != WebSocketState.CloseReceived) return;
                var closing = socket.CloseOutputAsync((WebSocketCloseStatus)code, reason, CancellationToken.None);
                closing.ContinueWith(t => { var ignored = t.Exception; }, TaskContinuationOptions.OnlyOnFaulted);
            }
            catch (Exception)
            {
                // Already closing or gone.
            }
        }

        public void Dispose()
        {
            try { socket.Dispose(); } catch (Exception) { /* gone already */ }
        }
    }
}
