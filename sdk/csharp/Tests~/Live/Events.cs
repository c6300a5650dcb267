// Arena.Sdk's events against a real server (run by test/sdk-csharp/events.test.ts):
// args: <baseUrl> <proxyUrl> <username> <password>, where proxyUrl passes HTTP and
// drops the WebSocket upgrade. Each step prints "ok <step>"; a failure prints
// "FAIL <step>: <why>" and exits 1. The events are the player's own logins
// (session.login), caused by signing in again from other clients.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Arena.Sdk;

namespace Arena.Sdk.Live
{
    public static class EventsProgram
    {
        private static string step = "start";

        public static int Main(string[] args)
        {
            try
            {
                Run(args[0], args[1], args[2], args[3]).GetAwaiter().GetResult();
                return 0;
            }
            catch (Exception error)
            {
                Console.WriteLine("FAIL " + step + ": " + error.GetType().Name + ": " + error.Message.Replace('\n', ' '));
                Console.Error.WriteLine(error);
                return 1;
            }
        }

        private static void Check(bool condition, string what)
        {
            if (!condition) throw new Exception(what);
        }

        private static async Task Until(string what, Func<bool> check, int ms = 15000)
        {
            var deadline = DateTime.UtcNow.AddMilliseconds(ms);
            while (!check())
            {
                if (DateTime.UtcNow > deadline) throw new TimeoutException("timed out waiting for " + what);
                await Task.Delay(20);
            }
        }

        private static void Ok(string name)
        {
            Console.WriteLine("ok " + name);
        }

        private static async Task<ArenaClient> SignIn(string url, string username, string password)
        {
            var client = new ArenaClient(new ArenaClientOptions { BaseUrl = url });
            await client.Auth.LoginAsync(username, password);
            return client;
        }

        /// <summary>What one subscription handed over and what it told.</summary>
        private sealed class Heard
        {
            private readonly object gate = new object();
            private readonly List<PlaneEvent> events = new List<PlaneEvent>();
            private readonly List<Exception> errors = new List<Exception>();

            public List<PlaneEvent> Events { get { lock (gate) return events.ToList(); } }
            public List<Exception> Errors { get { lock (gate) return errors.ToList(); } }

            public void Handle(IList<PlaneEvent> batch) { lock (gate) events.AddRange(batch); }

            public SubscribeOptions Options(EventTransport transport, string after)
            {
                return new SubscribeOptions
                {
                    Transport = transport,
                    After = after,
                    Topics = new[] { EventTopics.Session },
                    MinBackoff = TimeSpan.FromMilliseconds(20),
                    MaxBackoff = TimeSpan.FromMilliseconds(200),
                    PollWait = 2,
                    OnError = error => { lock (gate) errors.Add(error); },
                };
            }

            public int Logins { get { return Events.Count(e => e.Is(EventTypes.SessionLogin)); } }
        }

        private static async Task<string> NewestCursor(ArenaClient client)
        {
            while (true)
            {
                var page = await client.Events.PollAsync(topics: new[] { EventTopics.Session });
                if (page.Events.Count == 0) return page.Cursor;
            }
        }

        private static async Task Run(string baseUrl, string proxyUrl, string username, string password)
        {
            var player = await SignIn(baseUrl, username, password);
            var cursor = await NewestCursor(player);

            step = "socket";
            var heard = new Heard();
            var socket = player.Events.Subscribe(heard.Handle, heard.Options(EventTransport.Auto, cursor));
            await SignIn(baseUrl, username, password);
            await Until("the other login by socket", () => heard.Logins == 1);
            Check(socket.Transport == EventTransport.Socket, "the socket carried it, not the long poll");
            Check(heard.Errors.Count == 0, "nothing went wrong: " + string.Join("; ", heard.Errors.Select(e => e.Message)));
            var login = heard.Events.Single();
            Check(login.DataString("sessionId") != null && login.Topic == EventTopics.Session && login.CreatedAt != null, "the event as the server sent it");
            await socket.StopAsync();
            Check((await socket.Done).Reason == SubscriptionEndReason.Stopped, "stopped");
            cursor = socket.Cursor;
            Check(cursor != null, "a cursor to resume from");
            Ok("socket");

            step = "long poll";
            var polled = new Heard();
            var poll = player.Events.Subscribe(polled.Handle, polled.Options(EventTransport.LongPoll, cursor));
            await SignIn(baseUrl, username, password);
            await Until("the other login by long poll", () => polled.Logins == 1);
            Check(poll.Transport == EventTransport.LongPoll, "long polling");
            Check(polled.Events.Count == 1, "only the new login, nothing from before the cursor");
            Check(polled.Errors.Count == 0, "nothing went wrong: " + string.Join("; ", polled.Errors.Select(e => e.Message)));
            await poll.StopAsync();
            cursor = poll.Cursor;
            Ok("long poll");

            step = "resume";
            // Heard one, stopped (the cursor saved), two logins while away, then a new socket from the saved cursor.
            var before = new Heard();
            var first = player.Events.Subscribe(before.Handle, before.Options(EventTransport.Socket, cursor));
            await SignIn(baseUrl, username, password);
            await Until("a login before the reconnect", () => before.Logins == 1);
            await first.StopAsync();
            var saved = first.Cursor;
            await SignIn(baseUrl, username, password);
            await SignIn(baseUrl, username, password);
            var truth = (await player.Events.PollAsync(after: saved, topics: new[] { EventTopics.Session })).Events.Select(e => e.Id).ToList();
            Check(truth.Count == 2, "two logins while away (" + truth.Count + ")");
            var after = new Heard();
            var second = player.Events.Subscribe(after.Handle, after.Options(EventTransport.Socket, saved));
            await Until("the logins made while away", () => after.Events.Count >= 2);
            await Task.Delay(300);
            Check(string.Join(",", after.Events.Select(e => e.Id)) == string.Join(",", truth), "every event once, in order, none from before");
            Check(!after.Events.Any(e => before.Events.Any(b => b.Id == e.Id)), "nothing heard twice");
            await second.StopAsync();
            Ok("resume");

            step = "fall back";
            // Behind a proxy that drops the upgrade: three sockets fail to open, then the long poll, from the cursor.
            var proxied = await SignIn(proxyUrl, username, password);
            cursor = await NewestCursor(proxied);
            var fallen = new Heard();
            var auto = proxied.Events.Subscribe(fallen.Handle, fallen.Options(EventTransport.Auto, cursor));
            await Until("the fall back to the long poll", () => auto.Transport == EventTransport.LongPoll);
            await SignIn(baseUrl, username, password);
            await Until("the other login by long poll", () => fallen.Logins == 1);
            Check(fallen.Errors.OfType<EventSocketException>().Count() == 3, "three sockets failed to open (" + fallen.Errors.Count + " errors)");
            await auto.StopAsync();
            Ok("fall back");

            step = "session ended";
            var ending = new Heard();
            var last = player.Events.Subscribe(ending.Handle, ending.Options(EventTransport.Socket, await NewestCursor(player)));
            await SignIn(baseUrl, username, password);
            await Until("a login: the socket is open", () => ending.Logins == 1);
            // The subscribing session logs out: the logout event comes, then the socket closes 4001.
            await player.CallAsync(new Call("POST", "/api/v1/user/s/logout", new Dictionary<string, object>()), default(System.Threading.CancellationToken));
            var end = await last.Done;
            Check(end.Reason == SubscriptionEndReason.Failed, "it ended failed");
            var closed = end.Error as EventSocketException;
            Check(closed != null && closed.CloseCode == SocketCloseCodes.SessionEnded, "with 4001: " + end.Error);
            Check(ending.Events.Any(e => e.Is(EventTypes.SessionLogout)), "the logout came first");
            Ok("session ended");
        }
    }
}
