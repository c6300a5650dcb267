// On-device integrity checks run before every purchase (root or jailbreak,
// debugger, accessibility abuse, screen capture, ...): each says SAFE, WARN
// or COMPROMISED; a check that throws counts as COMPROMISED, so a check an
// attacker breaks fails closed.
using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;

namespace Arena.Sdk
{
    /// <summary>What an integrity check can say, from best to worst.</summary>
    public static class IntegrityLevels
    {
        /// <summary>Nothing found.</summary>
        public const string Safe = "SAFE";
        /// <summary>Something suspicious: the purchase goes on and ENV_WARN is reported.</summary>
        public const string Warn = "WARN";
        /// <summary>Not to be trusted: the purchase is blocked and ENV_COMPROMISED is reported.</summary>
        public const string Compromised = "COMPROMISED";

        /// <summary>SAFE 0, WARN 1, COMPROMISED 2; -1 for anything else.</summary>
        internal static int Rank(string level)
        {
            switch (level)
            {
                case Safe: return 0;
                case Warn: return 1;
                case Compromised: return 2;
                default: return -1;
            }
        }
    }

    /// <summary>What a check returns: a level (<see cref="IntegrityLevels"/>), with a reason for the report if it has one.</summary>
    public sealed class IntegrityVerdict
    {
        /// <summary>One of <see cref="IntegrityLevels"/>; anything else counts as COMPROMISED.</summary>
        public string Level { get; set; }
        /// <summary>Why, for the report; may be null.</summary>
        public string Reason { get; set; }

        /// <summary>A verdict without a level yet (set <see cref="Level"/>).</summary>
        public IntegrityVerdict() { }

        /// <summary>A verdict of <paramref name="level"/> (<see cref="IntegrityLevels"/>), with a reason or none.</summary>
        public IntegrityVerdict(string level, string reason = null)
        {
            Level = level;
            Reason = reason;
        }

        /// <summary>Nothing found.</summary>
        public static IntegrityVerdict Safe(string reason = null) { return new IntegrityVerdict(IntegrityLevels.Safe, reason); }
        /// <summary>Something suspicious: the purchase goes on and the server is told (ENV_WARN).</summary>
        public static IntegrityVerdict Warn(string reason = null) { return new IntegrityVerdict(IntegrityLevels.Warn, reason); }
        /// <summary>The environment cannot be trusted: the purchase is blocked and the server told (ENV_COMPROMISED).</summary>
        public static IntegrityVerdict Compromised(string reason = null) { return new IntegrityVerdict(IntegrityLevels.Compromised, reason); }
    }

    /// <summary>
    /// An on-device check (root or jailbreak, debugger, accessibility abuse, screen capture, ...).
    /// Its <see cref="Name"/> names it in reports; a check that throws (or returns no level)
    /// counts as COMPROMISED, so a check an attacker breaks fails closed.
    /// </summary>
    public interface IIntegrityCheck
    {
        /// <summary>What the check is called in reports (empty: <c>check_N</c> by its position).</summary>
        string Name { get; }
        /// <summary>Looks at the device and says how it looks.</summary>
        Task<IntegrityVerdict> CheckAsync(CancellationToken cancellationToken);
    }

    /// <summary>What one check found.</summary>
    public sealed class IntegrityFinding
    {
        /// <summary>The check's name.</summary>
        public string Check { get; set; }
        /// <summary>One of <see cref="IntegrityLevels"/>.</summary>
        public string Level { get; set; }
        /// <summary>Why, when the check said (or why it counted as COMPROMISED); may be null.</summary>
        public string Reason { get; set; }
    }

    /// <summary>Every check's finding and the worst level among them.</summary>
    public sealed class IntegrityReport
    {
        /// <summary>The worst level any check returned (SAFE with no checks).</summary>
        public string Level { get; set; }
        /// <summary>Every check's finding, in the order the checks were added.</summary>
        public IList<IntegrityFinding> Findings { get; set; }
    }

    /// <summary>A check made of a name and a function (<see cref="PurchasesApi.AddIntegrityCheck(string, Func{CancellationToken, Task{IntegrityVerdict}})"/>).</summary>
    internal sealed class FuncIntegrityCheck : IIntegrityCheck
    {
        private readonly Func<CancellationToken, Task<IntegrityVerdict>> check;

        public FuncIntegrityCheck(string name, Func<CancellationToken, Task<IntegrityVerdict>> check)
        {
            if (check == null) throw new ArgumentNullException("check");
            Name = name;
            this.check = check;
        }

        public string Name { get; private set; }

        public Task<IntegrityVerdict> CheckAsync(CancellationToken cancellationToken) { return check(cancellationToken); }
    }

    /// <summary>An on-device check found the environment COMPROMISED: the purchase was not attempted (no PIN session was minted).</summary>
    public sealed class IntegrityBlockedException : ArenaException
    {
        /// <summary>Always COMPROMISED.</summary>
        public string Level { get { return IntegrityLevels.Compromised; } }
        /// <summary>Every check's finding.</summary>
        public IList<IntegrityFinding> Findings { get; private set; }
        /// <summary>Whether the ENV_COMPROMISED report reached the server (best effort).</summary>
        public bool Reported { get; private set; }

        /// <summary>A purchase blocked on <paramref name="findings"/>; <paramref name="reported"/>: whether the report got through.</summary>
        public IntegrityBlockedException(IList<IntegrityFinding> findings, bool reported)
            : base("Purchase blocked: the device environment is compromised (" + CompromisedChecks(findings) + ")")
        {
            Findings = findings;
            Reported = reported;
        }

        private static string CompromisedChecks(IList<IntegrityFinding> findings)
        {
            var names = new List<string>();
            foreach (var finding in findings) if (finding.Level == IntegrityLevels.Compromised) names.Add(finding.Check);
            return string.Join(", ", names.ToArray());
        }
    }

    /// <summary>
    /// The PIN verify got no answer (no connection, a timeout, a cancellation while in flight, a 5xx,
    /// an unreadable 2xx): the withdrawal may or may not have been made. Authorize again with the
    /// same <see cref="IdempotencyKey"/> to learn it; the SDK never sends a verify twice by itself.
    /// </summary>
    public sealed class OutcomeUnknownException : ArenaException
    {
        /// <summary>The key the verify was sent with.</summary>
        public string IdempotencyKey { get; private set; }
        /// <summary>The PIN session the verify used.</summary>
        public string PinSessionId { get; private set; }

        /// <summary>The verify sent with <paramref name="idempotencyKey"/> in <paramref name="pinSessionId"/> got no answer; <paramref name="cause"/> says why.</summary>
        public OutcomeUnknownException(string idempotencyKey, string pinSessionId, Exception cause)
            : base("The PIN verify got no answer; its outcome is unknown. Authorize again with the same idempotency key to learn it.", cause)
        {
            IdempotencyKey = idempotencyKey;
            PinSessionId = pinSessionId;
        }
    }
}
