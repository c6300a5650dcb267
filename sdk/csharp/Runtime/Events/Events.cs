// The event plane (contract §14): `PollAsync` reads one page of
// GET /api/v1/events and keeps the cursor per topic set; `Subscribe` hears the
// caller's events as they commit, over the event socket, falling back to the
// long poll where sockets cannot be used (Subscription.cs runs it).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private EventsApi events;
        /// <summary>The caller's events: one page at a time (<see cref="EventsApi.PollAsync"/>) or as they commit (<see cref="EventsApi.Subscribe(Func{IList{PlaneEvent}, Task}, SubscribeOptions)"/>).</summary>
        public EventsApi Events { get { return events ?? (events = new EventsApi(this)); } }
    }

    /// <summary>The event plane for the signed-in user.</summary>
    public sealed class EventsApi
    {
        private readonly ArenaClient client;
        /// <summary>One cursor per topic set: a cursor from a filtered read may sit past events of other topics.</summary>
        private readonly Dictionary<string, string> cursors = new Dictionary<string, string>();

        internal EventsApi(ArenaClient client)
        {
            this.client = client;
            SocketFactory = () => new ClientWebSocketEventSocket();
        }

        /// <summary>Makes the socket a subscription opens (tests put a fake here). Throwing PlatformNotSupportedException means "no sockets here".</summary>
        internal Func<IEventSocket> SocketFactory { get; set; }

        /// <summary>
        /// One page of the caller's events (oldest first) after <paramref name="after"/>, or, without
        /// it, after the cursor the client keeps for these topics (none yet: from the oldest retained
        /// event); the page's cursor becomes the kept one. <paramref name="wait"/>: seconds (0–30)
        /// the server may hold the request for a new event; 0 answers at once. <paramref name="topics"/>:
        /// <see cref="EventTopics"/> values; null or empty: every topic.
        /// </summary>
        public async Task<EventsPage> PollAsync(string after = null, int wait = 0, IList<string> topics = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            CheckWait(wait, "wait");
            var list = CheckTopics(topics);
            var key = TopicKey(list);
            var page = await PageAsync(list, after ?? Cursor(list), wait, cancellationToken).ConfigureAwait(false);
            lock (cursors) cursors[key] = page.Cursor;
            return page;
        }

        /// <summary>The cursor the client keeps for a topic set (after <see cref="PollAsync"/>), to persist it; null when it has none.</summary>
        public string Cursor(IList<string> topics = null)
        {
            var key = TopicKey(CheckTopics(topics));
            string cursor;
            lock (cursors) return cursors.TryGetValue(key, out cursor) ? cursor : null;
        }

        /// <summary>
        /// Hears the caller's events as they commit and hands each batch to <paramref name="handler"/>,
        /// oldest first, one batch at a time (awaited; on <see cref="SubscribeOptions.HandlerContext"/>,
        /// by default the SynchronizationContext of the caller: Unity's main thread). A handler that throws gets the same events again. By default
        /// (<see cref="EventTransport.Auto"/>) over the event socket, reconnecting by itself and
        /// resuming after the last batch the handler finished; where sockets cannot be used (no
        /// ClientWebSocket, as on WebGL, or the upgrade keeps failing while HTTP works) it long-polls
        /// from the same cursor and tries the socket again every <see cref="SubscribeOptions.SocketRetry"/>.
        /// It ends on <see cref="EventSubscription.StopAsync"/>, or when no retry can help (the session
        /// ended: close 4001, or signed out; a cursor the server refuses): see <see cref="EventSubscription.Done"/>.
        /// </summary>
        public EventSubscription Subscribe(Func<IList<PlaneEvent>, Task> handler, SubscribeOptions options = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            options = options ?? new SubscribeOptions();
            CheckWait(options.PollWait, "options.PollWait");
            var topics = CheckTopics(options.Topics);
            return new EventSubscription(this, handler, options, topics);
        }

        /// <summary>As <see cref="Subscribe(Func{IList{PlaneEvent}, Task}, SubscribeOptions)"/>, with a handler that does its work before it returns.</summary>
        public EventSubscription Subscribe(Action<IList<PlaneEvent>> handler, SubscribeOptions options = null)
        {
            if (handler == null) throw new ArgumentNullException("handler");
            return Subscribe(events =>
            {
                handler(events);
                return Task.FromResult(true);
            }, options);
        }

        /// <summary>One page after <paramref name="after"/> (null: from the oldest retained event); the server may hold it <paramref name="wait"/> s.</summary>
        internal Task<EventsPage> PageAsync(IList<string> topics, string after, int wait, CancellationToken cancellationToken)
        {
            var query = new Dictionary<string, string>
            {
                { "after", after },
                { "wait", wait.ToString(System.Globalization.CultureInfo.InvariantCulture) },
                { "topics", topics != null && topics.Count > 0 ? string.Join(",", topics.ToArray()) : null },
            };
            // The server holds the poll up to `wait` s: the client's timeout counts from then.
            var call = new Call("GET", "/api/v1/events") { Query = query, ExtraTimeout = TimeSpan.FromSeconds(wait) };
            return client.CallAsync<EventsPage>(call, cancellationToken);
        }

        /// <summary>A single-use ticket (30 s) to open one event socket, bound to the caller's session.</summary>
        internal async Task<string> TicketAsync(CancellationToken cancellationToken)
        {
            var answer = await client.CallAsync<SocketTicketResponse>(new Call("POST", "/api/v1/events/socket-ticket", new Dictionary<string, object>()), cancellationToken).ConfigureAwait(false);
            if (string.IsNullOrEmpty(answer.Ticket)) throw new ArenaApiException(200, "invalid_response", "The server answered the socket ticket without a ticket");
            return answer.Ticket;
        }

        /// <summary>The socket's address with the ticket: the one credential the socket URL carries.</summary>
        internal Uri SocketUrl(string ticket)
        {
            var baseUrl = client.BaseUrl.StartsWith("https:", StringComparison.OrdinalIgnoreCase) ? "wss:" + client.BaseUrl.Substring(6) : "ws:" + client.BaseUrl.Substring(5);
            return new Uri(baseUrl + "/api/v1/events/socket?ticket=" + Uri.EscapeDataString(ticket));
        }

        private static void CheckWait(int wait, string name)
        {
            if (wait < 0 || wait > 30) throw new ArgumentOutOfRangeException(name, wait, "The long poll's wait is 0 to 30 seconds");
        }

        /// <summary>The topics, distinct, or null for every topic; an unknown one is refused here rather than by the server.</summary>
        internal static IList<string> CheckTopics(IList<string> topics)
        {
            if (topics == null || topics.Count == 0) return null;
            foreach (var topic in topics)
                if (!EventTopics.All.Contains(topic))
                    throw new ArgumentException("Unknown event topic \"" + topic + "\": one of " + string.Join(", ", EventTopics.All.ToArray()), "topics");
            return topics.Distinct().ToList().AsReadOnly();
        }

        private static string TopicKey(IList<string> topics)
        {
            return topics == null ? "*" : string.Join(",", topics.OrderBy(t => t, StringComparer.Ordinal).ToArray());
        }
    }

    /// <summary>How a subscription hears events.</summary>
    public enum EventTransport
    {
        /// <summary>The socket, falling back to the long poll where it cannot be opened (and trying it again now and then).</summary>
        Auto,
        /// <summary>The socket only: a socket that cannot be opened is retried with back-off, never replaced by the long poll.</summary>
        Socket,
        /// <summary>The long poll only (GET /api/v1/events with a wait).</summary>
        LongPoll,
    }

    /// <summary>How a subscription behaves. Every member is optional.</summary>
    public sealed class SubscribeOptions
    {
        /// <summary>
        /// Resume after this cursor (an <see cref="EventSubscription.Cursor"/> saved earlier): what came
        /// after it is delivered first. Without it: only the events committed from the moment the first
        /// socket opened (or the long poll started).
        /// </summary>
        public string After { get; set; }
        /// <summary><see cref="EventTopics"/> values; null or empty: every topic.</summary>
        public IList<string> Topics { get; set; }
        /// <summary>Default <see cref="EventTransport.Auto"/>.</summary>
        public EventTransport Transport { get; set; }
        /// <summary>
        /// Told about every failure: a close the game did not ask for (an <see cref="EventSocketException"/>
        /// with its code), a ticket or poll that failed, a handler that threw. Its own exceptions are ignored.
        /// </summary>
        public Action<Exception> OnError { get; set; }
        /// <summary>Told before each wait to reconnect the socket: the delay, the close code that led to it (null: no socket was opened), and how many back-offs in a row it is. Its own exceptions are ignored.</summary>
        public Action<ReconnectInfo> OnReconnect { get; set; }
        /// <summary>Told once when the subscription ends, with why (as <see cref="EventSubscription.Done"/> resolves).</summary>
        public Action<SubscriptionEnd> OnEnded { get; set; }
        /// <summary>Back-off before reconnecting or polling again after a failure: from this, doubling up to <see cref="MaxBackoff"/>, with jitter. Default 250 ms.</summary>
        public TimeSpan? MinBackoff { get; set; }
        /// <summary>Default 30 s.</summary>
        public TimeSpan? MaxBackoff { get; set; }
        /// <summary>After a 1012 (the server restarting), reconnect within a random delay up to this. Default 1 s.</summary>
        public TimeSpan? RestartJitter { get; set; }
        /// <summary>A socket that stayed up this long resets the back-off. Default 30 s.</summary>
        public TimeSpan? StableAfter { get; set; }
        /// <summary>Sockets that failed to open, in a row (while HTTP works), before falling back to the long poll (<see cref="EventTransport.Auto"/>). Default 3.</summary>
        public int? SocketFailuresBeforePoll { get; set; }
        /// <summary>While on the long poll, try the socket again this often (<see cref="EventTransport.Auto"/>). Default 5 minutes.</summary>
        public TimeSpan? SocketRetry { get; set; }
        /// <summary>Nothing heard on the socket for this long (the server pings every 25 s): it is taken for dead and replaced. Default 60 s.</summary>
        public TimeSpan? Silence { get; set; }
        /// <summary>
        /// Where the handler runs. Default: the SynchronizationContext current when Subscribe was
        /// called (in Unity, the main thread, so the handler may touch the scene), or the thread
        /// pool when there is none (a console app, a server).
        /// </summary>
        public SynchronizationContext HandlerContext { get; set; }
        /// <summary>The long poll's wait in seconds (0–30). Default 25.</summary>
        public int PollWait { get; set; }
        /// <summary>A number in [0, 1) for the jitter (tests make it exact). Default System.Random.</summary>
        internal Func<double> Random { get; set; }

        public SubscribeOptions()
        {
            PollWait = 25;
        }
    }

    /// <summary>A wait before the subscription opens its socket again (<see cref="SubscribeOptions.OnReconnect"/>).</summary>
    public sealed class ReconnectInfo
    {
        /// <summary>How long it waits.</summary>
        public TimeSpan Delay { get; private set; }
        /// <summary>The close code that led to it (4008, 4029, 1012, ...), or null when no socket was opened (a ticket that failed, an upgrade refused).</summary>
        public int? Code { get; private set; }
        /// <summary>How many back-offs in a row, this one included (0 after a restart's prompt rejoin).</summary>
        public int Attempt { get; private set; }

        internal ReconnectInfo(TimeSpan delay, int? code, int attempt)
        {
            Delay = delay;
            Code = code;
            Attempt = attempt;
        }
    }

    /// <summary>Why a subscription ended.</summary>
    public enum SubscriptionEndReason
    {
        /// <summary><see cref="EventSubscription.StopAsync"/> or Dispose.</summary>
        Stopped,
        /// <summary>No retry can help: the session ended (4001) or the client is signed out, or the server refused the cursor.</summary>
        Failed,
    }

    /// <summary>How a subscription ended.</summary>
    public sealed class SubscriptionEnd
    {
        public SubscriptionEndReason Reason { get; private set; }
        /// <summary>Why it failed (an <see cref="EventSocketException"/> with code 4001 when the session ended, an <see cref="ArenaApiException"/>, <see cref="NotSignedInException"/>); null when stopped.</summary>
        public Exception Error { get; private set; }

        internal static readonly SubscriptionEnd Stopped = new SubscriptionEnd { Reason = SubscriptionEndReason.Stopped };

        internal static SubscriptionEnd Failed(Exception error)
        {
            return new SubscriptionEnd { Reason = SubscriptionEndReason.Failed, Error = error };
        }
    }
}
