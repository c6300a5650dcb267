// The purchase client (secure purchases: a PIN session, one verify): on-device
// integrity checks, then a one-time PIN session minted and verified exactly
// once. A verify is never sent twice, whatever happens to the first one: not
// retried on a network error, not replayed after a token rotation.
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    public sealed partial class ArenaClient
    {
        private PurchasesApi purchases;

        /// <summary>PIN purchases (withdrawals) with on-device integrity checks, and setting the PIN.</summary>
        public PurchasesApi Purchases { get { return purchases ?? (purchases = new PurchasesApi(this)); } }
    }

    /// <summary>What <see cref="PurchasesApi.AuthorizeAsync"/> returns: the verify's answer, the key it was sent with and the PIN session it used.</summary>
    public sealed class AuthorizeResult
    {
        /// <summary>Whether the PIN was right; a wrong PIN is <c>false</c>, not an error.</summary>
        public bool Valid { get; set; }
        /// <summary>Whether the PIN is now locked (too many wrong ones).</summary>
        public bool Locked { get; set; }
        /// <summary>Consecutive failures; 0 after a valid PIN.</summary>
        public int Attempt { get; set; }
        /// <summary>The withdrawal the valid PIN authorized; null otherwise.</summary>
        public Withdrawal Withdrawal { get; set; }
        /// <summary>The idempotency key the verify was sent with.</summary>
        public string IdempotencyKey { get; set; }
        /// <summary>The one-time PIN session the verify used.</summary>
        public string PinSessionId { get; set; }
    }

    /// <summary>Secure purchases (<see cref="ArenaClient.Purchases"/>): integrity checks, a one-time PIN session, one verify.</summary>
    public sealed class PurchasesApi
    {
        private readonly ArenaClient client;
        private readonly object gate = new object();
        private readonly List<IIntegrityCheck> checks = new List<IIntegrityCheck>();

        internal PurchasesApi(ArenaClient client) { this.client = client; }

        /// <summary>Adds an on-device check; it runs before every purchase.</summary>
        public void AddIntegrityCheck(IIntegrityCheck check)
        {
            if (check == null) throw new ArgumentNullException("check");
            lock (gate) checks.Add(check);
        }

        /// <summary>Adds an on-device check made of a name and an asynchronous function; it runs before every purchase.</summary>
        public void AddIntegrityCheck(string name, Func<CancellationToken, Task<IntegrityVerdict>> check)
        {
            AddIntegrityCheck(new FuncIntegrityCheck(name, check));
        }

        /// <summary>Adds an on-device check made of a name and a synchronous function; it runs before every purchase.</summary>
        public void AddIntegrityCheck(string name, Func<IntegrityVerdict> check)
        {
            if (check == null) throw new ArgumentNullException("check");
            AddIntegrityCheck(new FuncIntegrityCheck(name, _ => Task.FromResult(check())));
        }

        /// <summary>
        /// Runs every check, all at once. No checks means SAFE: the app decides what its platform
        /// can detect. A check that throws, or returns no level, counts as COMPROMISED — except
        /// that a cancellation of <paramref name="cancellationToken"/> itself is thrown as such.
        /// </summary>
        public async Task<IntegrityReport> CheckIntegrityAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            IIntegrityCheck[] all;
            lock (gate) all = checks.ToArray();
            var running = new Task<IntegrityFinding>[all.Length];
            for (var i = 0; i < all.Length; i++) running[i] = RunCheckAsync(all[i], i, cancellationToken);
            var findings = await Task.WhenAll(running).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
            var level = IntegrityLevels.Safe;
            foreach (var finding in findings) if (IntegrityLevels.Rank(finding.Level) > IntegrityLevels.Rank(level)) level = finding.Level;
            return new IntegrityReport { Level = level, Findings = new List<IntegrityFinding>(findings) };
        }

        private static async Task<IntegrityFinding> RunCheckAsync(IIntegrityCheck check, int index, CancellationToken cancellationToken)
        {
            string name = null;
            try
            {
                name = check.Name;
            }
            catch (Exception) { /* a name that throws is no name */ }
            if (string.IsNullOrEmpty(name)) name = "check_" + (index + 1);
            try
            {
                var verdict = await check.CheckAsync(cancellationToken).ConfigureAwait(false);
                if (verdict == null || IntegrityLevels.Rank(verdict.Level) < 0)
                    return new IntegrityFinding { Check = name, Level = IntegrityLevels.Compromised, Reason = "check returned no level" };
                return new IntegrityFinding { Check = name, Level = verdict.Level, Reason = string.IsNullOrEmpty(verdict.Reason) ? null : verdict.Reason };
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                throw;
            }
            catch (Exception error)
            {
                return new IntegrityFinding { Check = name, Level = IntegrityLevels.Compromised, Reason = "check failed: " + error.Message };
            }
        }

        /// <summary>
        /// Authorizes one withdrawal of <paramref name="amount"/> (a decimal string, e.g. "12.50") to
        /// <paramref name="destinationAddress"/>: integrity checks, a new PIN session, one verify.
        /// <list type="bullet">
        /// <item>COMPROMISED: reports ENV_COMPROMISED (best effort) and throws <see cref="IntegrityBlockedException"/>; nothing is minted.</item>
        /// <item>WARN: reports ENV_WARN (best effort) and goes on.</item>
        /// <item>A wrong PIN is not an error: <c>Valid = false</c>, with <c>Locked</c> and <c>Attempt</c>.</item>
        /// <item>410 → <see cref="PinSessionExpiredException"/>, 429 → <see cref="PinLockedException"/> (429 <c>rate_limited</c> → <see cref="RateLimitedException"/>), other refusals → <see cref="ArenaApiException"/>.</item>
        /// <item>No answer to the verify (network error, timeout, cancellation, a 5xx): <see cref="OutcomeUnknownException"/>
        /// with the idempotency key. The verify is never sent a second time, not even after a token rotation.</item>
        /// </list>
        /// <paramref name="idempotencyKey"/> defaults to a new UUID; pass the key of an OutcomeUnknownException to learn that attempt's outcome.
        /// </summary>
        public async Task<AuthorizeResult> AuthorizeAsync(string pin, string amount, string destinationAddress, string idempotencyKey = null, CancellationToken cancellationToken = default(CancellationToken))
        {
            if (pin == null) throw new ArgumentNullException("pin");
            if (amount == null) throw new ArgumentNullException("amount");
            if (destinationAddress == null) throw new ArgumentNullException("destinationAddress");
            var integrity = await CheckIntegrityAsync(cancellationToken).ConfigureAwait(false);
            if (integrity.Level == IntegrityLevels.Compromised)
            {
                var reported = await ReportAsync("ENV_COMPROMISED", integrity, cancellationToken).ConfigureAwait(false);
                throw new IntegrityBlockedException(integrity.Findings, reported);
            }
            if (integrity.Level == IntegrityLevels.Warn) await ReportAsync("ENV_WARN", integrity, cancellationToken).ConfigureAwait(false);

            var minted = await client.Auth.SendAsync(new Call("POST", "/api/v1/security/pin-session", new JObject()), cancellationToken).ConfigureAwait(false);
            if (!minted.IsSuccess) throw PinError(minted);
            var mint = Json.Read<PinSessionResponse>(minted);
            var key = idempotencyKey ?? Ids.NewIdempotencyKey();
            var call = new Call("POST", "/api/v1/security/pin-session/" + ArenaClient.Segment(mint.SessionId) + "/verify",
                new VerifyBody { Pin = pin, Amount = amount, DestinationAddress = destinationAddress, IdempotencyKey = key })
                .With("x-secure-session", mint.SessionToken);
            // Failing to get a token (a rotation without an answer) happens before the
            // verify is sent: that is an ordinary error, not an unknown outcome.
            var lease = await client.Auth.FreshTokenAsync(cancellationToken).ConfigureAwait(false);
            TransportResponse response;
            try
            {
                response = await client.Auth.SendOnceAsync(call, lease.Token, cancellationToken).ConfigureAwait(false);
            }
            catch (ArenaNetworkException error)
            {
                throw new OutcomeUnknownException(key, mint.SessionId, error);
            }
            catch (OperationCanceledException error)
            {
                // Cancelled in flight: the server may have made the withdrawal.
                throw new OutcomeUnknownException(key, mint.SessionId, error);
            }
            // A 5xx may come after the withdrawal committed (a proxy timing out, say): as unknown as no answer.
            if (response.Status >= 500) throw new OutcomeUnknownException(key, mint.SessionId, ArenaApiException.From(response));
            if (!response.IsSuccess) throw PinError(response);
            PinVerifyResponse result;
            try
            {
                result = Json.Parse<PinVerifyResponse>(response.Text);
                if (result == null) throw new JsonException("empty body");
            }
            catch (JsonException error)
            {
                throw new OutcomeUnknownException(key, mint.SessionId, error);
            }
            return new AuthorizeResult { Valid = result.Valid, Locked = result.Locked, Attempt = result.Attempt, Withdrawal = result.Withdrawal, IdempotencyKey = key, PinSessionId = mint.SessionId };
        }

        /// <summary>Sets or changes the PIN (4–8 digits); the account <paramref name="password"/> re-authenticates.</summary>
        public async Task SetPinAsync(string pin, string password, CancellationToken cancellationToken = default(CancellationToken))
        {
            await client.CallAsync<PinSetResponse>(new Call("PUT", "/api/v1/security/pin", new SetPinBody { Pin = pin, Password = password }), cancellationToken).ConfigureAwait(false);
        }

        /// <summary>Best effort: a report that fails must not decide the purchase, so it answers whether it got through.</summary>
        private async Task<bool> ReportAsync(string kind, IntegrityReport integrity, CancellationToken cancellationToken)
        {
            try
            {
                var findings = new JArray();
                foreach (var finding in integrity.Findings)
                {
                    var item = new JObject { { "check", finding.Check }, { "level", finding.Level } };
                    if (finding.Reason != null) item["reason"] = finding.Reason;
                    findings.Add(item);
                }
                var body = new SecurityEventBody { Kind = kind, Level = integrity.Level, Details = new JObject { { "findings", findings } } };
                var response = await client.Auth.SendAsync(new Call("POST", "/api/v1/security/events", body), cancellationToken).ConfigureAwait(false);
                if (response.Status != 202) return false;
                // 202 with accepted: false means the server shed it under load.
                var accepted = Json.Parse<SecurityEventAccepted>(response.Text);
                return accepted != null && accepted.Accepted;
            }
            catch (Exception)
            {
                return false;
            }
        }

        /// <summary>
        /// On the PIN routes a 429 is the PIN lock and a 410 the expired one-time session,
        /// whichever error shape carried them; but an envelope saying <c>rate_limited</c> is
        /// the server's rate limit (<see cref="RateLimitedException"/>).
        /// </summary>
        internal static ArenaApiException PinError(TransportResponse response)
        {
            var error = ArenaApiException.From(response);
            if (error is PinLockedException || error is PinSessionExpiredException) return error;
            if (error.Status == 429 && !EnvelopeSays(response, "rate_limited")) return new PinLockedException(error.Status, error.Code, error.Message, error.Details, error.RetryAfterSeconds, error.RequestId);
            if (error.Status == 410) return new PinSessionExpiredException(error.Status, error.Code, error.Message, error.Details, error.RetryAfterSeconds, error.RequestId);
            return error;
        }

        /// <summary>Whether the answer is an error envelope with this code (a bare status derives a code, but says nothing).</summary>
        private static bool EnvelopeSays(TransportResponse response, string code)
        {
            try
            {
                var error = Json.Object(response.Text)["error"] as JObject;
                return error != null && error["message"] != null && error["message"].Type == JTokenType.String && error["code"] != null && (string)error["code"] == code;
            }
            catch (Exception)
            {
                return false;
            }
        }
    }
}
