// Event sockets a unit test drives by hand: the test plays the server (frames,
// close codes, an upgrade that fails) and sees what the SDK sent (the URL with
// its ticket, the subscribe frame).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tests
{
    /// <summary>A queue whose reader awaits the next item (or its token).</summary>
    public sealed class AsyncQueue<T>
    {
        private readonly object gate = new object();
        private readonly Queue<T> items = new Queue<T>();
        private readonly Queue<TaskCompletionSource<T>> readers = new Queue<TaskCompletionSource<T>>();

        public void Add(T item)
        {
            TaskCompletionSource<T> reader = null;
            lock (gate)
            {
                while (readers.Count > 0 && reader == null)
                {
                    var next = readers.Dequeue();
                    if (!next.Task.IsCompleted) reader = next;
                }
                if (reader == null) items.Enqueue(item);
            }
            if (reader != null) reader.TrySetResult(item);
        }

        public Task<T> TakeAsync(CancellationToken cancellationToken)
        {
            lock (gate)
            {
                if (items.Count > 0) return Task.FromResult(items.Dequeue());
                var reader = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
                cancellationToken.Register(() => reader.TrySetCanceled());
                readers.Enqueue(reader);
                return reader.Task;
            }
        }
    }

    /// <summary>Makes the sockets of one test: each opens, or fails to open while <see cref="RefuseOpen"/> counts down.</summary>
    internal sealed class FakeSockets
    {
        private readonly object gate = new object();
        private readonly List<FakeEventSocket> made = new List<FakeEventSocket>();
        private readonly AsyncQueue<FakeEventSocket> opened = new AsyncQueue<FakeEventSocket>();

        /// <summary>How many of the next sockets fail to open (the upgrade refused).</summary>
        public int RefuseOpen;
        /// <summary>Sockets cannot be made at all here (as ClientWebSocket on WebGL).</summary>
        public bool Unsupported;
        /// <summary>Sockets can be made but opening one says the platform has none.</summary>
        public bool UnsupportedOnConnect;

        internal IEventSocket Create()
        {
            if (Unsupported) throw new PlatformNotSupportedException("no sockets here");
            lock (gate)
            {
                var socket = new FakeEventSocket(RefuseOpen > 0 ? RefuseOpen-- > 0 : false, opened) { Unsupported = UnsupportedOnConnect };
                made.Add(socket);
                return socket;
            }
        }

        /// <summary>Every socket made, opened or not.</summary>
        public IList<FakeEventSocket> Made { get { lock (gate) return made.ToList(); } }

        /// <summary>The next socket that opens and sends its subscribe.</summary>
        public async Task<FakeEventSocket> NextAsync()
        {
            using (var limit = new CancellationTokenSource(TimeSpan.FromSeconds(10)))
                return await opened.TakeAsync(limit.Token);
        }
    }

    internal sealed class FakeEventSocket : IEventSocket
    {
        private readonly bool refuse;
        private readonly AsyncQueue<FakeEventSocket> opened;
        private readonly AsyncQueue<SocketMessage> inbox = new AsyncQueue<SocketMessage>();
        private readonly List<string> sent = new List<string>();

        internal FakeEventSocket(bool refuse, AsyncQueue<FakeEventSocket> opened)
        {
            this.refuse = refuse;
            this.opened = opened;
        }

        public Uri Url;
        public bool Unsupported;
        /// <summary>The close code the client sent, if it closed.</summary>
        public int? ClosedByClient;

        /// <summary>Every frame the client sent, parsed.</summary>
        public IList<JObject> Sent { get { lock (sent) return sent.Select(JObject.Parse).ToList(); } }

        /// <summary>The subscribe frame the client sent.</summary>
        public JObject Subscribe { get { lock (sent) return JObject.Parse(sent[0]); } }

        /// <summary>The server sends an events frame.</summary>
        public void Events(string cursor, params JObject[] events)
        {
            inbox.Add(SocketMessage.Frame(new JObject { { "type", "events" }, { "events", new JArray(events) }, { "cursor", cursor } }.ToString()));
        }

        /// <summary>The server sends any text.</summary>
        public void Raw(string text) { inbox.Add(SocketMessage.Frame(text)); }

        /// <summary>The server closes the socket.</summary>
        public void ServerClose(int code, string reason = "") { inbox.Add(SocketMessage.Closed(code, reason)); }

        public Task ConnectAsync(Uri url, CancellationToken cancellationToken)
        {
            Url = url;
            if (Unsupported) throw new PlatformNotSupportedException("no sockets here (test)");
            if (refuse) throw new EventSocketException(SocketCloseCodes.Abnormal, "refused (test)");
            return Task.FromResult(true);
        }

        public Task SendAsync(string text, CancellationToken cancellationToken)
        {
            bool first;
            lock (sent)
            {
                sent.Add(text);
                first = sent.Count == 1;
            }
            if (first) opened.Add(this);
            return Task.FromResult(true);
        }

        public Task<SocketMessage> ReceiveAsync(CancellationToken cancellationToken)
        {
            return inbox.TakeAsync(cancellationToken);
        }

        public void Close(int code, string reason)
        {
            if (ClosedByClient == null) ClosedByClient = code;
            inbox.Add(SocketMessage.Closed(code, reason));
        }

        public void Dispose() { }
    }
}
