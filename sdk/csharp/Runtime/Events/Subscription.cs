// One subscription to the event plane (EventsApi.Subscribe): a ticket, the
// socket, a subscribe from the resume cursor, and each `events` frame handed to
// the handler in order, one at a time. The resume cursor is the cursor of the
// last batch whose handler finished, so every reconnect (a fresh ticket, a
// subscribe with `after`) hears nothing twice that was handled and loses
// nothing that was not. Where sockets cannot be used (no ClientWebSocket, or a
// proxy that refuses the upgrade) it long-polls from the same cursor with the
// same handler rules, and tries the socket again now and then. A port of the
// TypeScript SDK's socket.ts (connect) and events.ts (the long-poll loop).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    /// <summary>
    /// A running subscription (<see cref="EventsApi.Subscribe(Func{IList{PlaneEvent}, Task}, SubscribeOptions)"/>).
    /// Dispose stops it without waiting; <see cref="StopAsync"/> stops it and waits.
    /// </summary>
    public sealed class EventSubscription : IDisposable
    {
        private readonly EventsApi api;
        private readonly Func<IList<PlaneEvent>, Task> handler;
        private readonly SubscribeOptions options;
        private volatile IList<string> topics;
        private readonly Func<double> random;
        private readonly TimeSpan minBackoff, maxBackoff, restartJitter, stableAfter, socketRetry, silence;
        private readonly int failuresBeforePoll;
        private readonly CancellationTokenSource stop = new CancellationTokenSource();
        /// <summary>True in the handler's own flow (and what it awaits): StopAsync from there must not wait for the loop.</summary>
        private readonly AsyncLocal<bool> inHandler = new AsyncLocal<bool>();
        private readonly object gate = new object();
        /// <summary>Where the handler runs; null: the thread pool.</summary>
        private readonly SynchronizationContext handlerContext;

        private volatile string cursor;
        private volatile bool stopRequested;
        private volatile bool ended;
        private volatile int mode;
        /// <summary>False once the socket proved impossible here (no ClientWebSocket): long poll only.</summary>
        private bool socketAllowed;
        private int attempt;
        private int openFailures;
        private TimeSpan pollBackoff;
        private IEventSocket live;
        /// <summary>The live socket sent its subscribe: a topic change may go on it.</summary>
        private bool liveSubscribed;
        /// <summary>One send at a time on a socket (the subscribe at open, a topic change).</summary>
        private readonly SemaphoreSlim sending = new SemaphoreSlim(1, 1);
        /// <summary>The long poll running now, to restart it when the topics change.</summary>
        private CancellationTokenSource pollPhase;
        private volatile bool pollRestart;

        internal EventSubscription(EventsApi api, Func<IList<PlaneEvent>, Task> handler, SubscribeOptions options, IList<string> topics)
        {
            this.api = api;
            this.handler = handler;
            this.options = options;
            this.topics = topics;
            var system = new System.Random();
            random = options.Random ?? (() => { lock (system) return system.NextDouble(); });
            minBackoff = options.MinBackoff ?? TimeSpan.FromMilliseconds(250);
            maxBackoff = options.MaxBackoff ?? TimeSpan.FromSeconds(30);
            restartJitter = options.RestartJitter ?? TimeSpan.FromSeconds(1);
            stableAfter = options.StableAfter ?? TimeSpan.FromSeconds(30);
            socketRetry = options.SocketRetry ?? TimeSpan.FromMinutes(5);
            silence = options.Silence ?? TimeSpan.FromSeconds(60);
            failuresBeforePoll = Math.Max(1, options.SocketFailuresBeforePoll ?? 3);
            cursor = options.After;
            socketAllowed = options.Transport != EventTransport.LongPoll;
            mode = (int)(socketAllowed ? EventTransport.Socket : EventTransport.LongPoll);
            pollBackoff = minBackoff;
            handlerContext = options.HandlerContext ?? SynchronizationContext.Current;
            Done = Task.Run(() => RunAsync());
        }

        /// <summary>The cursor after the last batch the handler finished (null before the first): save it to resume with <see cref="SubscribeOptions.After"/>.</summary>
        public string Cursor { get { return cursor; } }

        /// <summary>How events arrive now: <see cref="EventTransport.Socket"/> or <see cref="EventTransport.LongPoll"/>.</summary>
        public EventTransport Transport { get { return (EventTransport)mode; } }

        /// <summary>Completes when the subscription ends, with why: stopped, or failed when no retry can help. Never faults.</summary>
        public Task<SubscriptionEnd> Done { get; private set; }

        /// <summary>
        /// Closes the socket (or ends the poll, aborting a request in flight and cutting a back-off
        /// short) and completes when the subscription has ended: no handler is called after. Safe to
        /// call from the handler (it then does not wait for the handler to return). Await it rather
        /// than block on it (Wait, Result) on the handler's context: a handler waiting for that
        /// context would never finish.
        /// </summary>
        public Task StopAsync()
        {
            RequestStop();
            if (inHandler.Value) return Task.FromResult(true);
            return Done;
        }

        /// <summary>
        /// Changes the topics (<see cref="EventTopics"/> values; null or empty: every topic): on a live
        /// socket from its current position (nothing skipped or repeated); on the long poll, the poll
        /// restarts from the cursor. Reconnects use the new topics.
        /// </summary>
        public void SetTopics(IList<string> next)
        {
            var list = EventsApi.CheckTopics(next);
            IEventSocket socket = null;
            CancellationTokenSource phase = null;
            lock (gate)
            {
                if (stopRequested) return;
                topics = list;
                if (Transport == EventTransport.LongPoll) phase = pollPhase;
                else if (liveSubscribed) socket = live;
                if (phase != null) pollRestart = true;
            }
            if (phase != null)
            {
                try { phase.Cancel(); } catch (ObjectDisposedException) { /* that poll ended already */ }
            }
            if (socket != null)
            {
                var subscribe = new JObject { { "type", "subscribe" } };
                if (list != null) subscribe["topics"] = new JArray(list);
                Detach(SendAsync(socket, subscribe));
            }
        }

        /// <summary>Lets a task run on unobserved: one that never faults (it tells its failures itself).</summary>
        private static void Detach(Task task) { }

        /// <summary>Sends a frame on the socket, one send at a time; a failure is told (the socket's close follows).</summary>
        private async Task SendAsync(IEventSocket socket, JObject frame)
        {
            await sending.WaitAsync().ConfigureAwait(false);
            try
            {
                await socket.SendAsync(frame.ToString(Formatting.None), stop.Token).ConfigureAwait(false);
            }
            catch (Exception error)
            {
                Tell(error);
            }
            finally
            {
                sending.Release();
            }
        }

        /// <summary>Stops the subscription without waiting for it to end.</summary>
        public void Dispose()
        {
            RequestStop();
        }

        private void RequestStop()
        {
            IEventSocket socket;
            lock (gate)
            {
                if (stopRequested) return;
                stopRequested = true;
                socket = live;
            }
            if (socket != null) socket.Close(1000, "stopped");
            try { stop.Cancel(); } catch (AggregateException) { /* a cancellation callback failed: the loop still sees the flag */ }
        }

        private async Task<SubscriptionEnd> RunAsync()
        {
            SubscriptionEnd end;
            try
            {
                end = await LoopAsync().ConfigureAwait(false);
            }
            catch (Exception error)
            {
                end = stopRequested ? SubscriptionEnd.Stopped : SubscriptionEnd.Failed(error);
            }
            if (stopRequested) end = SubscriptionEnd.Stopped;
            ended = true;
            var onEnded = options.OnEnded;
            if (onEnded != null)
            {
                try { onEnded(end); } catch (Exception) { /* the game's callback: ignored */ }
            }
            return end;
        }

        private async Task<SubscriptionEnd> LoopAsync()
        {
            while (!stopRequested)
            {
                if (Transport == EventTransport.LongPoll)
                {
                    var outcome = await RunPollAsync().ConfigureAwait(false);
                    if (outcome.End != null) return outcome.End;
                    // Time to try the socket again: one failure to open sends it back to the poll.
                    if (outcome.TrySocket && socketAllowed && !stopRequested)
                    {
                        mode = (int)EventTransport.Socket;
                        openFailures = failuresBeforePoll - 1;
                    }
                    continue;
                }
                string ticket;
                try
                {
                    ticket = await api.TicketAsync(stop.Token).ConfigureAwait(false);
                }
                catch (Exception error)
                {
                    if (stopRequested) break;
                    Tell(error);
                    if (IsFatal(error)) return SubscriptionEnd.Failed(error);
                    var refused = error as ArenaApiException;
                    if (refused != null && refused.Status == 404)
                    {
                        // No socket endpoint on this server (or in front of it): like a socket that does not open.
                        await FailedToOpenAsync(null).ConfigureAwait(false);
                        continue;
                    }
                    var retryAfter = refused != null && refused.RetryAfterSeconds.HasValue ? TimeSpan.FromSeconds(refused.RetryAfterSeconds.Value) : TimeSpan.Zero;
                    await ReconnectAfterAsync(Max(retryAfter, SocketBackoff()), null).ConfigureAwait(false);
                    continue;
                }
                if (stopRequested) break;
                var run = await RunSocketAsync(ticket).ConfigureAwait(false);
                if (stopRequested) break;
                if (run.Unsupported != null)
                {
                    Tell(run.Unsupported);
                    if (options.Transport == EventTransport.Socket) return SubscriptionEnd.Failed(run.Unsupported);
                    socketAllowed = false;
                    mode = (int)EventTransport.LongPoll;
                    continue;
                }
                if (run.Fatal != null) return SubscriptionEnd.Failed(run.Fatal);
                if (!run.Opened)
                {
                    await FailedToOpenAsync(run.Code).ConfigureAwait(false);
                    continue;
                }
                openFailures = 0;
                if (run.Code == SocketCloseCodes.SessionEnded)
                {
                    var error = new EventSocketException(SocketCloseCodes.SessionEnded, "The session ended (" + (run.Reason == "" ? "signed out" : run.Reason) + "): sign in again");
                    Tell(error);
                    return SubscriptionEnd.Failed(error);
                }
                if (!run.HandlerFailed)
                {
                    var code = run.Code ?? SocketCloseCodes.ClientClose;
                    Tell(new EventSocketException(code, ("The event socket closed: " + (run.Code.HasValue ? run.Code.Value + " " : "") + run.Reason).Trim()));
                }
                TimeSpan delay;
                if (run.HandlerFailed || run.Code == SocketCloseCodes.SlowConsumer || run.Code == SocketCloseCodes.TooMany) delay = SocketBackoff();
                else if (run.Code == SocketCloseCodes.Restart && (run.Delivered || run.Up >= restartJitter))
                {
                    // A restart: rejoin at once (another instance takes it). A socket closed 1012 as soon as it opened
                    // met a server that is itself stopping: that one backs off like any failure, not to spin on it.
                    attempt = 0;
                    delay = TimeSpan.FromMilliseconds(random() * restartJitter.TotalMilliseconds);
                }
                else
                {
                    if (run.Delivered || run.Up >= stableAfter) attempt = 0;
                    delay = SocketBackoff();
                }
                await ReconnectAfterAsync(delay, run.Code).ConfigureAwait(false);
            }
            return SubscriptionEnd.Stopped;
        }

        /// <summary>Counts a socket that did not open: switches to the long poll after enough in a row (Auto), else waits its back-off.</summary>
        private async Task FailedToOpenAsync(int? code)
        {
            openFailures++;
            Tell(new EventSocketException(code ?? SocketCloseCodes.Abnormal, "The event socket could not be opened (" + openFailures + " in a row)"));
            if (openFailures >= failuresBeforePoll && options.Transport == EventTransport.Auto)
            {
                mode = (int)EventTransport.LongPoll;
                return;
            }
            await ReconnectAfterAsync(SocketBackoff(), code).ConfigureAwait(false);
        }

        /// <summary>Tells OnReconnect, then waits before the next socket (cut short by a stop).</summary>
        private Task ReconnectAfterAsync(TimeSpan delay, int? code)
        {
            var onReconnect = options.OnReconnect;
            if (onReconnect != null && !stopRequested)
            {
                try { onReconnect(new ReconnectInfo(delay, code, attempt)); } catch (Exception) { /* the game's callback: ignored */ }
            }
            return PauseAsync(delay, stop.Token);
        }

        /// <summary>How one socket ended.</summary>
        private sealed class SocketRun
        {
            public bool Opened;
            public int? Code;
            public string Reason = "";
            /// <summary>The handler finished a batch of events on it.</summary>
            public bool Delivered;
            public bool HandlerFailed;
            /// <summary>A failure no reconnect can fix.</summary>
            public Exception Fatal;
            /// <summary>Sockets cannot be used here at all.</summary>
            public Exception Unsupported;
            public TimeSpan Up;
        }

        private async Task<SocketRun> RunSocketAsync(string ticket)
        {
            var run = new SocketRun();
            IEventSocket socket;
            try
            {
                socket = api.SocketFactory();
            }
            catch (Exception error)
            {
                run.Unsupported = new EventSocketException(SocketCloseCodes.Abnormal, "WebSockets cannot be used here (" + error.GetType().Name + "): long polling instead", error);
                return run;
            }
            var clock = new Stopwatch();
            using (socket)
            {
                lock (gate)
                {
                    if (stopRequested) return run;
                    live = socket;
                }
                try
                {
                    // An upgrade that hangs counts as one that failed.
                    using (var opening = CancellationTokenSource.CreateLinkedTokenSource(stop.Token))
                    {
                        opening.CancelAfter(silence);
                        try
                        {
                            await socket.ConnectAsync(api.SocketUrl(ticket), opening.Token).ConfigureAwait(false);
                        }
                        catch (NotSupportedException error)
                        {
                            run.Unsupported = new EventSocketException(SocketCloseCodes.Abnormal, "WebSockets cannot be used here (" + error.GetType().Name + "): long polling instead", error);
                            return run;
                        }
                        catch (Exception error)
                        {
                            var refused = error as EventSocketException;
                            run.Code = refused != null ? refused.CloseCode : null;
                            return run;
                        }
                    }
                    run.Opened = true;
                    clock.Start();
                    await sending.WaitAsync().ConfigureAwait(false);
                    try
                    {
                        var subscribe = new JObject { { "type", "subscribe" } };
                        var after = cursor;
                        var now = topics;
                        if (after != null) subscribe["after"] = after;
                        if (now != null) subscribe["topics"] = new JArray(now);
                        await socket.SendAsync(subscribe.ToString(Formatting.None), stop.Token).ConfigureAwait(false);
                        lock (gate) liveSubscribed = true;
                    }
                    catch (Exception)
                    {
                        if (stopRequested) return run;
                        run.Code = SocketCloseCodes.Abnormal;
                        run.Reason = "the subscribe could not be sent";
                        return run;
                    }
                    finally
                    {
                        sending.Release();
                    }
                    while (true)
                    {
                        SocketMessage message;
                        using (var quiet = CancellationTokenSource.CreateLinkedTokenSource(stop.Token))
                        {
                            quiet.CancelAfter(silence);
                            try
                            {
                                message = await socket.ReceiveAsync(quiet.Token).ConfigureAwait(false);
                            }
                            catch (Exception)
                            {
                                if (stopRequested) return run;
                                socket.Close(SocketCloseCodes.ClientClose, "silent");
                                run.Reason = quiet.IsCancellationRequested ? "nothing heard from the server" : "the connection dropped";
                                if (!quiet.IsCancellationRequested) run.Code = SocketCloseCodes.Abnormal;
                                return run;
                            }
                        }
                        if (message.IsClose)
                        {
                            run.Code = message.CloseCode;
                            run.Reason = message.CloseReason ?? "";
                            return run;
                        }
                        if (stopRequested) return run;
                        var frame = ReadFrame(message.Text);
                        if (frame == null)
                        {
                            Tell(new EventSocketException("malformed_frame", "The server sent a frame that is not a known JSON frame"));
                            continue;
                        }
                        if (frame.Type == "events")
                        {
                            if (frame.Events.Count > 0)
                            {
                                try
                                {
                                    await HandleAsync(frame.Events).ConfigureAwait(false);
                                }
                                catch (Exception error)
                                {
                                    // Not past this frame: its events come again on the next connection.
                                    Tell(error);
                                    run.HandlerFailed = true;
                                    socket.Close(1000, "the handler failed");
                                    return run;
                                }
                                run.Delivered = true;
                            }
                            if (!stopRequested) cursor = frame.Cursor;
                        }
                        else if (frame.Type == "error")
                        {
                            var error = new EventSocketException(frame.ErrorCode, frame.ErrorMessage);
                            Tell(error);
                            // The SDK sends only well-formed subscribes: a refused one names a cursor this server did not issue.
                            if (frame.ErrorCode == "validation_failed")
                            {
                                run.Fatal = error;
                                socket.Close(1000, "subscribe refused");
                                return run;
                            }
                        }
                    }
                }
                finally
                {
                    run.Up = clock.Elapsed;
                    lock (gate)
                    {
                        live = null;
                        liveSubscribed = false;
                    }
                }
            }
        }

        /// <summary>A server frame, parsed.</summary>
        private sealed class Frame
        {
            public string Type;
            public IList<PlaneEvent> Events;
            public string Cursor;
            public string ErrorCode;
            public string ErrorMessage;
        }

        /// <summary>The frame, or null when it is not JSON or not a frame this SDK reads (an unknown type is read and ignored).</summary>
        private static Frame ReadFrame(string text)
        {
            try
            {
                var json = Json.Object(text);
                var type = json["type"];
                if (type == null || type.Type != JTokenType.String) return null;
                var frame = new Frame { Type = (string)type };
                if (frame.Type == "events")
                {
                    var events = json["events"] as JArray;
                    var cursor = json["cursor"];
                    if (events == null || cursor == null || cursor.Type != JTokenType.String) return null;
                    frame.Events = events.ToObject<List<PlaneEvent>>(JsonSerializer.Create(Json.Settings)).AsReadOnly();
                    frame.Cursor = (string)cursor;
                }
                else if (frame.Type == "error")
                {
                    var error = json["error"] as JObject;
                    if (error == null) return null;
                    frame.ErrorCode = (string)error["code"] ?? "error";
                    frame.ErrorMessage = (string)error["message"] ?? "The server refused a message";
                }
                return frame;
            }
            catch (Exception)
            {
                return null;
            }
        }

        /// <summary>How a stretch of long polling ended.</summary>
        private struct PollOutcome
        {
            /// <summary>The subscription ends.</summary>
            public SubscriptionEnd End;
            /// <summary>It is time to try the socket again.</summary>
            public bool TrySocket;
        }

        /// <summary>The cursor for "now": pages read and skipped until the newest (what a socket without `after` starts from).</summary>
        private async Task<string> NewestCursorAsync()
        {
            string after = null;
            while (true)
            {
                var page = await api.PageAsync(topics, after, 0, stop.Token).ConfigureAwait(false);
                after = page.Cursor;
                if (page.Events == null || page.Events.Count == 0) return after;
            }
        }

        /// <summary>Long-polls until stopped, a failure no retry fixes, or (sockets allowed) it is time to try the socket.</summary>
        private async Task<PollOutcome> RunPollAsync()
        {
            if (cursor == null)
            {
                try
                {
                    cursor = await NewestCursorAsync().ConfigureAwait(false);
                }
                catch (Exception error)
                {
                    if (stopRequested) return new PollOutcome { End = SubscriptionEnd.Stopped };
                    Tell(error);
                    if (IsFatal(error)) return new PollOutcome { End = SubscriptionEnd.Failed(error) };
                    await PauseAsync(SocketBackoff(), stop.Token).ConfigureAwait(false);
                    return new PollOutcome();
                }
            }
            using (var phase = CancellationTokenSource.CreateLinkedTokenSource(stop.Token))
            {
                lock (gate) pollPhase = phase;
                if (socketAllowed) phase.CancelAfter(socketRetry);
                pollBackoff = minBackoff;
                while (!stopRequested && !phase.IsCancellationRequested)
                {
                    EventsPage page;
                    try
                    {
                        page = await api.PageAsync(topics, cursor, options.PollWait, phase.Token).ConfigureAwait(false);
                        if (page.Events == null || page.Cursor == null) throw new ArenaApiException(200, "invalid_response", "The events page has no events or no cursor");
                    }
                    catch (Exception error)
                    {
                        if (stopRequested || phase.IsCancellationRequested) break;
                        Tell(error);
                        if (IsFatal(error)) return new PollOutcome { End = SubscriptionEnd.Failed(error) };
                        await PollBackOffAsync(error, phase.Token).ConfigureAwait(false);
                        continue;
                    }
                    if (page.Events.Count > 0)
                    {
                        // After a stop nothing is handed over, and the cursor must not move past it.
                        if (stopRequested) break;
                        try
                        {
                            await HandleAsync(page.Events.AsReadOnly()).ConfigureAwait(false);
                        }
                        catch (Exception error)
                        {
                            // The handler's failure is the game's, never a reason to give up: the batch comes again.
                            Tell(error);
                            if (stopRequested) break;
                            await PollBackOffAsync(error, phase.Token).ConfigureAwait(false);
                            continue;
                        }
                    }
                    cursor = page.Cursor;
                    pollBackoff = minBackoff;
                }
                lock (gate) pollPhase = null;
            }
            if (stopRequested) return new PollOutcome { End = SubscriptionEnd.Stopped };
            // The topics changed: poll again with them, from the cursor.
            if (pollRestart)
            {
                pollRestart = false;
                return new PollOutcome();
            }
            return new PollOutcome { TrySocket = true };
        }

        /// <summary>Hands one batch to the handler (on the handler's context, when there is one) and completes when it has finished.</summary>
        private Task HandleAsync(IList<PlaneEvent> events)
        {
            if (handlerContext == null) return InvokeAsync(events);
            var finished = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            handlerContext.Post(_ =>
            {
                InvokeAsync(events).ContinueWith(run =>
                {
                    if (run.IsFaulted) finished.TrySetException(run.Exception.InnerExceptions);
                    else if (run.IsCanceled) finished.TrySetCanceled();
                    else finished.TrySetResult(true);
                }, TaskContinuationOptions.ExecuteSynchronously);
            }, null);
            return finished.Task;
        }

        /// <summary>The handler, with the mark that it is running in its own flow (an async method keeps the mark to itself).</summary>
        private async Task InvokeAsync(IList<PlaneEvent> events)
        {
            inHandler.Value = true;
            await handler(events);
        }

        /// <summary>Full jitter: a random delay up to min(max, min × 2^attempt); the attempt counts up.</summary>
        private TimeSpan SocketBackoff()
        {
            var cap = Math.Min(maxBackoff.TotalMilliseconds, minBackoff.TotalMilliseconds * Math.Pow(2, attempt++));
            return TimeSpan.FromMilliseconds(random() * cap);
        }

        /// <summary>The long poll's back-off: half of it fixed, half random, doubling to the cap; at least what Retry-After asks.</summary>
        private Task PollBackOffAsync(Exception error, CancellationToken cancellationToken)
        {
            var refused = error as ArenaApiException;
            var retryAfter = refused != null && refused.RetryAfterSeconds.HasValue ? TimeSpan.FromSeconds(refused.RetryAfterSeconds.Value) : TimeSpan.Zero;
            var half = pollBackoff.TotalMilliseconds / 2;
            var delay = Max(retryAfter, TimeSpan.FromMilliseconds(half + random() * half));
            pollBackoff = TimeSpan.FromMilliseconds(Math.Min(pollBackoff.TotalMilliseconds * 2, maxBackoff.TotalMilliseconds));
            return PauseAsync(delay, cancellationToken);
        }

        /// <summary>Waits, cut short by a stop (or the token); never throws.</summary>
        private static async Task PauseAsync(TimeSpan delay, CancellationToken cancellationToken)
        {
            if (delay <= TimeSpan.Zero) return;
            try
            {
                await Task.Delay(delay, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // Cut short.
            }
        }

        private static TimeSpan Max(TimeSpan a, TimeSpan b) { return a > b ? a : b; }

        /// <summary>Tells the game's OnError (not after a stop); an OnError that throws must not end the loop.</summary>
        private void Tell(Exception error)
        {
            var onError = options.OnError;
            if (onError == null || stopRequested || ended) return;
            try { onError(error); } catch (Exception) { /* ignored: the loop goes on */ }
        }

        /// <summary>Failures a retry cannot fix: no session, or a request the server refuses as such.</summary>
        internal static bool IsFatal(Exception error)
        {
            if (error is NotSignedInException) return true;
            var api = error as ArenaApiException;
            return api != null && (api.Status == 401 || api.Status == 403 || api.Status == 422);
        }
    }
}
