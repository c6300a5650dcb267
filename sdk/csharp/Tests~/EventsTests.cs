// The event plane: the long poll's resume cursor (each poll after the last
// batch delivered; a failed poll retried from the same cursor), the socket
// resuming after a 4008 from its last cursor, the fall back to the long poll
// when the socket cannot be opened, and the end on 4001 — all against
// FakeTransport and FakeSockets.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tests
{
    public static class EventsTests
    {
        private static JObject Ev(int n)
        {
            return new JObject
            {
                { "id", "evt_" + n }, { "topic", "wallet" }, { "type", "wallet.credited" },
                { "data", new JObject { { "asset", "SOL" }, { "amount", n + ".5" }, { "reference", "r" + n }, { "balance", "10" } } },
                { "createdAt", "2026-01-01T00:00:0" + (n % 10) + ".000Z" },
            };
        }

        private static TransportResponse Page(string cursor, params JObject[] events)
        {
            return FakeTransport.Reply(200, new JObject { { "events", new JArray(events) }, { "cursor", cursor } }.ToString());
        }

        /// <summary>A query parameter of a recorded request, or null.</summary>
        private static string Query(FakeTransport.Sent request, string name)
        {
            var query = new Uri(request.Url).Query.TrimStart('?');
            foreach (var pair in query.Split(new[] { '&' }, StringSplitOptions.RemoveEmptyEntries))
            {
                var parts = pair.Split(new[] { '=' }, 2);
                if (Uri.UnescapeDataString(parts[0]) == name) return parts.Length > 1 ? Uri.UnescapeDataString(parts[1]) : "";
            }
            return null;
        }

        private static List<string> PollCursors(FakeTransport transport)
        {
            return transport.Requests.Where(r => r.Path == "/api/v1/events").Select(r => Query(r, "after")).ToList();
        }

        /// <summary>Batches as the handler got them, and what OnError heard.</summary>
        private sealed class Heard
        {
            private readonly object gate = new object();
            public readonly List<List<string>> Batches = new List<List<string>>();
            public readonly List<Exception> Errors = new List<Exception>();

            public List<string> Ids { get { lock (gate) return Batches.SelectMany(b => b).ToList(); } }

            public SubscribeOptions Options(EventTransport transport, string after = null)
            {
                return new SubscribeOptions
                {
                    Transport = transport,
                    After = after,
                    MinBackoff = TimeSpan.FromMilliseconds(1),
                    MaxBackoff = TimeSpan.FromMilliseconds(5),
                    Random = () => 0.5,
                    OnError = error => { lock (gate) Errors.Add(error); },
                };
            }

            public void Handle(IList<PlaneEvent> events)
            {
                lock (gate) Batches.Add(events.Select(e => e.Id).ToList());
            }

            public async Task UntilAsync(string what, Func<bool> check)
            {
                var deadline = DateTime.UtcNow.AddSeconds(10);
                while (!check())
                {
                    if (DateTime.UtcNow > deadline) throw new AssertionException("timed out waiting for " + what);
                    await Task.Delay(5);
                }
            }
        }

        private static ArenaClient SignedIn(FakeTransport transport, FakeSockets sockets = null)
        {
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "https://arena.test", Transport = transport });
            client.Auth.UseToken("access-1");
            if (sockets != null) client.Events.SocketFactory = sockets.Create;
            return client;
        }

        /// <summary>The server's long poll: pages by cursor from <paramref name="pages"/>; past them an empty page after a short hold.</summary>
        private static Func<FakeTransport.Sent, Task<TransportResponse>> Poller(Dictionary<string, Func<TransportResponse>> pages)
        {
            return async request =>
            {
                if (request.Path == "/api/v1/events")
                {
                    var after = Query(request, "after") ?? "";
                    Func<TransportResponse> answer;
                    if (pages.TryGetValue(after, out answer)) return answer();
                    await Task.Delay(10).ConfigureAwait(false);
                    return Page(after);
                }
                if (request.Path == "/api/v1/events/socket-ticket") return FakeTransport.Reply(200, new { ticket = "tkt_" + Guid.NewGuid().ToString("N"), expiresIn = 30 });
                return FakeTransport.Error(404, "not_found");
            };
        }

        [Test]
        public static async Task PollSendsCursorWaitAndTopicsAndKeepsTheCursorPerTopicSet()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "", () => Page("c1", Ev(1)) },
                { "c1", () => Page("c2", Ev(2)) },
            }));
            var client = SignedIn(transport);
            var first = await client.Events.PollAsync(wait: 5, topics: new[] { "wallet" });
            Assert.Equal("evt_1", first.Events[0].Id, "the first page");
            Assert.Equal("1.5", first.Events[0].DataString("amount"), "an amount stays a string");
            Assert.Equal("c1", client.Events.Cursor(new[] { "wallet" }), "the cursor kept for the topic set");
            Assert.Equal(null, client.Events.Cursor(), "no cursor kept for every topic");
            await client.Events.PollAsync(topics: new[] { "wallet" });
            var sent = transport.Requests;
            Assert.Equal(null, Query(sent[0], "after"), "the first poll from the oldest");
            Assert.Equal("5", Query(sent[0], "wait"), "the wait");
            Assert.Equal("wallet", Query(sent[0], "topics"), "the topics");
            Assert.Equal("c1", Query(sent[1], "after"), "the second poll after the kept cursor");
            Assert.Equal("Bearer access-1", sent[0].Header("authorization"), "authenticated");
            await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => client.Events.PollAsync(wait: 31), "a wait past 30 s");
            await Assert.ThrowsAsync<ArgumentException>(() => client.Events.PollAsync(topics: new[] { "wallets" }), "an unknown topic");
        }

        [Test]
        public static async Task LongPollSendsEachPollWithTheCursorOfTheLastBatchDelivered()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c0", () => Page("c1", Ev(1)) },
                { "c1", () => Page("c2", Ev(2), Ev(3)) },
                { "c2", () => Page("c3") },
                { "c3", () => Page("c4", Ev(4)) },
            }));
            var client = SignedIn(transport);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.LongPoll, "c0"));
            await heard.UntilAsync("four events", () => heard.Ids.Count == 4);
            await heard.UntilAsync("a poll after c4", () => PollCursors(transport).Contains("c4"));
            await subscription.StopAsync();
            Assert.Equal("evt_1,evt_2,evt_3,evt_4", string.Join(",", heard.Ids), "every event once, in order");
            Assert.Equal(3, heard.Batches.Count, "one batch per non-empty page");
            Assert.Equal("c0,c1,c2,c3,c4", string.Join(",", PollCursors(transport).Take(5)), "each poll after the last page");
            Assert.Equal("25", Query(transport.Requests[0], "wait"), "the long poll's wait");
            Assert.Equal(EventTransport.LongPoll, subscription.Transport, "long polling");
            Assert.Equal(0, transport.Count("/api/v1/events/socket-ticket"), "no socket asked for");
            var end = await subscription.Done;
            Assert.Equal(SubscriptionEndReason.Stopped, end.Reason, "stopped");
            Assert.True(subscription.Cursor == "c4" || subscription.Cursor == "c5", "the cursor after the last batch: " + subscription.Cursor);
        }

        [Test]
        public static async Task LongPollRetriesFromTheSameCursorAfterATransportError()
        {
            var failures = 0;
            var handlerFailures = 0;
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c0", () => Page("c1", Ev(1)) },
                {
                    "c1", () =>
                    {
                        // No answer once, then a 503, then the page.
                        failures++;
                        if (failures == 1) throw FakeTransport.NoAnswer();
                        if (failures == 2) return FakeTransport.Error(503, "service_unavailable");
                        return Page("c2", Ev(2));
                    }
                },
                { "c2", () => Page("c3", Ev(3)) },
            }));
            var client = SignedIn(transport);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(events =>
            {
                // The handler fails once on event 3: that batch must come again, nothing after it skipped.
                if (events[0].Id == "evt_3" && handlerFailures++ == 0) throw new InvalidOperationException("the game failed");
                heard.Handle(events);
            }, heard.Options(EventTransport.LongPoll, "c0"));
            await heard.UntilAsync("three events", () => heard.Ids.Count == 3);
            await heard.UntilAsync("a poll after c3", () => PollCursors(transport).Contains("c3"));
            await subscription.StopAsync();
            Assert.Equal("evt_1,evt_2,evt_3", string.Join(",", heard.Ids), "no event lost or repeated");
            Assert.Equal("c0,c1,c1,c1,c2,c2,c3", string.Join(",", PollCursors(transport).Take(7)), "the failed polls and the failed batch retried from the same cursor");
            Assert.True(heard.Errors.Any(e => e is ArenaNetworkException), "the network failure told");
            Assert.True(heard.Errors.Any(e => e is ArenaApiException && ((ArenaApiException)e).Status == 503), "the 503 told");
            Assert.True(heard.Errors.Any(e => e is InvalidOperationException), "the handler's failure told");
        }

        [Test]
        public static async Task SocketClosed4008ResumesAfterTheLastCursor()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>()));
            var sockets = new FakeSockets();
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto, "c0"));
            var first = await sockets.NextAsync();
            Assert.Equal("subscribe", (string)first.Subscribe["type"], "a subscribe frame");
            Assert.Equal("c0", (string)first.Subscribe["after"], "the first socket resumes after the given cursor");
            Assert.True(first.Subscribe["topics"] == null, "no topics: every topic");
            Assert.Equal("wss", first.Url.Scheme, "wss for an https server");
            Assert.Equal("/api/v1/events/socket", first.Url.AbsolutePath, "the socket's path");
            Assert.True(first.Url.Query.StartsWith("?ticket=tkt_"), "the ticket in the URL");
            Assert.True(!first.Url.ToString().Contains("access-1"), "never the access token in the URL");
            first.Raw("{\"type\":\"ping\"}");
            first.Events("c1", Ev(1));
            first.Events("c2", Ev(2), Ev(3));
            await heard.UntilAsync("three events", () => heard.Ids.Count == 3);
            Assert.Equal("c2", subscription.Cursor, "the cursor after the last batch");
            first.ServerClose(SocketCloseCodes.SlowConsumer, "too slow: reconnect and resume from your cursor");
            var second = await sockets.NextAsync();
            Assert.Equal("c2", (string)second.Subscribe["after"], "the new socket resumes after the last cursor");
            Assert.True(first.Url.Query != second.Url.Query, "a fresh ticket for each socket");
            second.Events("c3", Ev(4));
            await heard.UntilAsync("four events", () => heard.Ids.Count == 4);
            Assert.Equal("evt_1,evt_2,evt_3,evt_4", string.Join(",", heard.Ids), "nothing lost or repeated");
            Assert.True(heard.Errors.OfType<EventSocketException>().Any(e => e.CloseCode == 4008), "the 4008 told");
            Assert.Equal(EventTransport.Socket, subscription.Transport, "still on the socket");
            await subscription.StopAsync();
            Assert.Equal(1000, second.ClosedByClient, "stop closes the socket with 1000");
            Assert.Equal(2, transport.Count("/api/v1/events/socket-ticket"), "one ticket per socket");
            Assert.Equal(0, transport.Count("/api/v1/events"), "no long poll");
        }

        [Test]
        public static async Task SocketThatCannotOpenFallsBackToLongPollingFromTheSameCursor()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c1", () => Page("c2", Ev(2)) },
            }));
            var sockets = new FakeSockets();
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto, "c0"));
            var first = await sockets.NextAsync();
            first.Events("c1", Ev(1));
            await heard.UntilAsync("one event", () => heard.Ids.Count == 1);
            // The server goes away; the upgrade is refused from now on (a proxy), while HTTP works.
            sockets.RefuseOpen = 100;
            first.ServerClose(1011, "could not read the events");
            await heard.UntilAsync("the second event by long poll", () => heard.Ids.Count == 2);
            Assert.Equal(EventTransport.LongPoll, subscription.Transport, "long polling now");
            Assert.Equal("c1", PollCursors(transport)[0], "the long poll starts from the socket's last cursor");
            Assert.Equal(4, sockets.Made.Count, "three sockets failed to open before the fall back");
            Assert.Equal(3, heard.Errors.OfType<EventSocketException>().Count(e => e.Message.Contains("could not be opened")), "each failure told");
            await subscription.StopAsync();
            Assert.Equal("evt_1,evt_2", string.Join(",", heard.Ids), "nothing lost or repeated");
        }

        [Test]
        public static async Task WithoutWebSocketsItLongPollsAtOnceFromTheCursor()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c5", () => Page("c6", Ev(6)) },
            }));
            var sockets = new FakeSockets { Unsupported = true };
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto, "c5"));
            await heard.UntilAsync("the event", () => heard.Ids.Count == 1);
            Assert.Equal(EventTransport.LongPoll, subscription.Transport, "long polling");
            Assert.Equal("c5", PollCursors(transport)[0], "from the given cursor");
            await subscription.StopAsync();
            // A socket that says so when it opens: the same, at once.
            var later = new FakeSockets { UnsupportedOnConnect = true };
            client.Events.SocketFactory = later.Create;
            var again = new Heard();
            var fallback = client.Events.Subscribe(again.Handle, again.Options(EventTransport.Auto, "c5"));
            await again.UntilAsync("the event", () => again.Ids.Count == 1);
            Assert.Equal(EventTransport.LongPoll, fallback.Transport, "long polling");
            Assert.Equal(1, later.Made.Count, "one socket tried, not three");
            await fallback.StopAsync();
            client.Events.SocketFactory = sockets.Create;
            // Socket only: no socket is a failure, not a fall back.
            var only = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Socket, "c5"));
            var end = await only.Done;
            Assert.Equal(SubscriptionEndReason.Failed, end.Reason, "socket only ends without sockets");
        }

        [Test]
        public static async Task Close4001EndsTheSubscriptionAndSaysWhy()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>()));
            var sockets = new FakeSockets();
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            SubscriptionEnd told = null;
            var options = heard.Options(EventTransport.Auto);
            options.OnEnded = end => told = end;
            var subscription = client.Events.Subscribe(heard.Handle, options);
            var socket = await sockets.NextAsync();
            Assert.True(socket.Subscribe["after"] == null, "no cursor: from now");
            socket.Events("c1", Ev(1));
            socket.ServerClose(SocketCloseCodes.SessionEnded, "session ended");
            var result = await subscription.Done;
            Assert.Equal(SubscriptionEndReason.Failed, result.Reason, "failed");
            var error = result.Error as EventSocketException;
            Assert.True(error != null, "an EventSocketException: " + result.Error);
            Assert.Equal(4001, error.CloseCode, "the close code");
            Assert.True(error.Message.Contains("sign in again"), "says what to do: " + error.Message);
            Assert.True(told == result, "OnEnded told the same end");
            Assert.Equal("c1", subscription.Cursor, "the cursor to resume after signing in again");
            await Task.Delay(50);
            Assert.Equal(1, transport.Count("/api/v1/events/socket-ticket"), "no reconnect");
            Assert.Equal(1, sockets.Made.Count, "one socket");
        }

        [Test]
        public static async Task RefusedTicketEndsTheSubscription()
        {
            var transport = new FakeTransport(request => FakeTransport.Error(401, "unauthorized"));
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            client.Auth.UseToken("access-1");
            var heard = new Heard();
            var end = await client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto)).Done;
            Assert.Equal(SubscriptionEndReason.Failed, end.Reason, "a 401 no rotation can fix ends it");
            Assert.Equal(401, ((ArenaApiException)end.Error).Status, "with the refusal");
            var signedOut = new ArenaClient(new ArenaClientOptions { BaseUrl = "http://arena.test", Transport = transport });
            var none = await signedOut.Events.Subscribe(heard.Handle, heard.Options(EventTransport.LongPoll)).Done;
            Assert.True(none.Error is NotSignedInException, "signed out: " + none.Error);
        }

        [Test]
        public static async Task StopFromInsideTheHandlerDoesNotDeadlock()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c0", () => Page("c1", Ev(1)) },
                { "c1", () => Page("c2", Ev(2)) },
            }));
            var client = SignedIn(transport);
            var heard = new Heard();
            EventSubscription subscription = null;
            var started = new TaskCompletionSource<bool>();
            subscription = client.Events.Subscribe(async events =>
            {
                await started.Task;
                heard.Handle(events);
                await subscription.StopAsync();
            }, heard.Options(EventTransport.LongPoll, "c0"));
            started.SetResult(true);
            var end = await subscription.Done;
            Assert.Equal(SubscriptionEndReason.Stopped, end.Reason, "stopped");
            Assert.Equal("evt_1", string.Join(",", heard.Ids), "nothing handed over after the stop");
            Assert.Equal("c1", subscription.Cursor, "the batch the handler finished is behind the cursor");
        }
    
        /// <summary>A context that runs what is posted to it on the thread pool, with itself as the current context, and counts the posts.</summary>
        private sealed class CountingContext : SynchronizationContext
        {
            public int Posts;

            public override void Post(SendOrPostCallback callback, object state)
            {
                Interlocked.Increment(ref Posts);
                ThreadPool.QueueUserWorkItem(_ =>
                {
                    SetSynchronizationContext(this);
                    try { callback(state); } finally { SetSynchronizationContext(null); }
                });
            }
        }

        [Test]
        public static async Task TheHandlerRunsOnTheSubscribersContextAndAThrowGetsTheBatchAgain()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c0", () => Page("c1", Ev(1)) },
                { "c1", () => Page("c2", Ev(2)) },
            }));
            var client = SignedIn(transport);
            var heard = new Heard();
            var context = new CountingContext();
            var onContext = new List<bool>();
            var failed = false;
            EventSubscription subscription;
            var previous = SynchronizationContext.Current;
            SynchronizationContext.SetSynchronizationContext(context);
            try
            {
                subscription = client.Events.Subscribe(events =>
                {
                    lock (onContext) onContext.Add(SynchronizationContext.Current == context);
                    if (events[0].Id == "evt_2" && !failed)
                    {
                        failed = true;
                        throw new InvalidOperationException("the game failed");
                    }
                    heard.Handle(events);
                    return Task.FromResult(true);
                }, heard.Options(EventTransport.LongPoll, "c0"));
            }
            finally
            {
                SynchronizationContext.SetSynchronizationContext(previous);
            }
            await heard.UntilAsync("two events", () => heard.Ids.Count == 2);
            await subscription.StopAsync();
            Assert.Equal("evt_1,evt_2", string.Join(",", heard.Ids), "in order; the failed batch again");
            Assert.Equal(3, context.Posts, "each batch posted to the subscriber's context");
            Assert.True(onContext.Count == 3 && onContext.All(x => x), "the handler ran on it");
            Assert.True(heard.Errors.Any(e => e is InvalidOperationException), "the handler's failure told");
            Assert.Equal("c0,c1,c1,c2", string.Join(",", PollCursors(transport).Take(4)), "the failed batch polled again from its cursor");
        }
    
        [Test]
        public static async Task TooManySocketsBacksOffAndARestartRejoinsPromptlyNeverTheLongPoll()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>()));
            var sockets = new FakeSockets();
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            var reconnects = new List<string>();
            var options = heard.Options(EventTransport.Auto, "c0");
            options.MinBackoff = TimeSpan.FromMilliseconds(2);
            options.MaxBackoff = TimeSpan.FromMilliseconds(8);
            options.RestartJitter = TimeSpan.FromMilliseconds(10);
            options.OnReconnect = info => { lock (reconnects) reconnects.Add(info.Delay.TotalMilliseconds + "ms " + info.Code + " #" + info.Attempt); };
            var subscription = client.Events.Subscribe(heard.Handle, options);
            (await sockets.NextAsync()).ServerClose(SocketCloseCodes.TooMany, "too many sockets");
            (await sockets.NextAsync()).ServerClose(SocketCloseCodes.TooMany, "too many sockets");
            var third = await sockets.NextAsync();
            Assert.Equal("c0", (string)third.Subscribe["after"], "still from the given cursor");
            third.Events("c1", Ev(1));
            await heard.UntilAsync("the event", () => heard.Ids.Count == 1);
            third.ServerClose(SocketCloseCodes.Restart, "restarting");
            var fourth = await sockets.NextAsync();
            Assert.Equal("c1", (string)fourth.Subscribe["after"], "rejoined after the last cursor");
            await subscription.StopAsync();
            // Full jitter doubling from 2 ms (random 0.5): 1 ms, 2 ms; the restart after a delivery: within the restart jitter, the count reset.
            Assert.Equal("1ms 4029 #1,2ms 4029 #2,5ms 1012 #0", string.Join(",", reconnects), "the waits");
            Assert.Equal(0, transport.Count("/api/v1/events"), "4029 is not a reason to long-poll");
            Assert.Equal(4, transport.Count("/api/v1/events/socket-ticket"), "a fresh ticket each time");
        }
    
        [Test]
        public static async Task SetTopicsGoesOnTheLiveSocketAndIntoEveryReconnect()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>()));
            var sockets = new FakeSockets();
            var client = SignedIn(transport, sockets);
            var heard = new Heard();
            var subscription = client.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto, "c0"));
            var first = await sockets.NextAsync();
            first.Events("c1", Ev(1));
            await heard.UntilAsync("the event", () => heard.Ids.Count == 1);
            subscription.SetTopics(new[] { EventTopics.Wallet, EventTopics.Wallet });
            await heard.UntilAsync("the topic change sent", () => first.Sent.Count == 2);
            var change = first.Sent[1];
            Assert.Equal("subscribe", (string)change["type"], "a subscribe");
            Assert.True(change["after"] == null, "from the socket's current position: no cursor");
            Assert.Equal("[\"wallet\"]", change["topics"].ToString(Newtonsoft.Json.Formatting.None), "the new topics, once each");
            first.ServerClose(SocketCloseCodes.SlowConsumer);
            var second = await sockets.NextAsync();
            Assert.Equal("c1", (string)second.Subscribe["after"], "resumed after the cursor");
            Assert.Equal("[\"wallet\"]", second.Subscribe["topics"].ToString(Newtonsoft.Json.Formatting.None), "with the new topics");
            await Assert.ThrowsAsync<ArgumentException>(() =>
            {
                subscription.SetTopics(new[] { "nope" });
                return Task.FromResult(true);
            }, "an unknown topic");
            await subscription.StopAsync();
        }

        /// <summary>Passes requests to a FakeTransport, except those <c>hold</c> picks: they wait until cancelled.</summary>
        private sealed class HoldingTransport : ITransport
        {
            private readonly FakeTransport inner;
            private readonly Func<TransportRequest, bool> hold;
            /// <summary>How many requests it held.</summary>
            public int Held;

            public HoldingTransport(FakeTransport inner, Func<FakeTransport.Sent, bool> hold)
            {
                this.inner = inner;
                this.hold = request => hold(new FakeTransport.Sent { Url = request.Url });
            }

            public async Task<TransportResponse> SendAsync(TransportRequest request, CancellationToken cancellationToken)
            {
                if (!hold(request)) return await inner.SendAsync(request, cancellationToken);
                Interlocked.Increment(ref Held);
                await Task.Delay(Timeout.Infinite, cancellationToken);
                throw new InvalidOperationException("unreachable");
            }
        }

        [Test]
        public static async Task SetTopicsRestartsTheLongPollFromTheCursor()
        {
            var transport = new FakeTransport(Poller(new Dictionary<string, Func<TransportResponse>>
            {
                { "c0", () => Page("c1", Ev(1)) },
            }));
            // The long poll after c1 for every topic is held until the client gives it up (its cancellation).
            var held = new HoldingTransport(transport, request => Query(request, "after") == "c1" && Query(request, "topics") == null);
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = "https://arena.test", Transport = held });
            client.Auth.UseToken("access-1");
            var heard = new Heard();
            var options = heard.Options(EventTransport.LongPoll, "c0");
            options.PollWait = 30;
            var subscription = client.Events.Subscribe(heard.Handle, options);
            await heard.UntilAsync("the event", () => heard.Ids.Count == 1);
            await heard.UntilAsync("a poll after c1, held", () => held.Held == 1);
            subscription.SetTopics(new[] { EventTopics.Session });
            await heard.UntilAsync("a poll for the new topics", () => transport.Requests.Any(r => Query(r, "topics") == "session"));
            await subscription.StopAsync();
            var restarted = transport.Requests.First(r => Query(r, "topics") == "session");
            Assert.Equal("c1", Query(restarted, "after"), "from the cursor");
            Assert.Equal(EventTransport.LongPoll, subscription.Transport, "still long polling");
            Assert.Equal("evt_1", string.Join(",", heard.Ids), "nothing twice");
        }
    }
}
