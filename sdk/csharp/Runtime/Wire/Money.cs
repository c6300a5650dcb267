// Wire types of the wallet, withdrawals and the PIN purchase. Field names are
// the server's ([JsonProperty]); amounts are decimal strings, never numbers;
// the drift check holds every type to the server's OpenAPI document.
using System.Collections.Generic;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    /// <summary>The signed-in player's wallet (<see cref="WalletApi.GetAsync"/>).</summary>
    [Wire("GET /api/v1/wallet 200")]
    public sealed class Wallet
    {
        [JsonProperty("asset")] public string Asset { get; set; }
        /// <summary>Decimal string.</summary>
        [JsonProperty("balance")] public string Balance { get; set; }
        /// <summary>Base58 Ed25519 public key of the 2-of-3 custody key.</summary>
        [JsonProperty("address")] public string Address { get; set; }
    }

    /// <summary>What a movement of the wallet was (<see cref="WalletTransaction.Kind"/>); <c>withdrawal_reversal</c> gives back a withdrawal custody refused or an operator rejected.</summary>
    public static class TransactionKinds
    {
        public const string Credit = "credit";
        public const string Adjustment = "adjustment";
        public const string Withdrawal = "withdrawal";
        public const string WithdrawalReversal = "withdrawal_reversal";
        public const string EntryFee = "entry_fee";
        public const string EntryFeeRefund = "entry_fee_refund";
        public const string Prize = "prize";
        public const string Stake = "stake";
        public const string StakePayout = "stake_payout";
        public const string StakeRefund = "stake_refund";
    }

    /// <summary>One movement of the signed-in player's wallet (<see cref="WalletApi.TransactionsAsync"/>).</summary>
    [Wire("GET /api/v1/wallet/transactions 200", "transactions[]")]
    public sealed class WalletTransaction
    {
        /// <summary>The movement (<c>ltx_…</c>).</summary>
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>One of <see cref="TransactionKinds"/>.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        /// <summary>Signed decimal string: positive credits the wallet, negative debits it.</summary>
        [JsonProperty("amount")] public string Amount { get; set; }
        /// <summary>Decimal string: the balance right after this movement.</summary>
        [JsonProperty("balanceAfter")] public string BalanceAfter { get; set; }
        /// <summary>The operator's reference of a credit or adjustment; the withdrawal id of a withdrawal and its reversal; the tournament id of an entry fee, its refund and a prize; the match id of a stake, its payout and its refund. Null otherwise.</summary>
        [JsonProperty("reference")] public string Reference { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
    }

    /// <summary>A payout of yours held for an operator's review: released, it is paid as a movement (<c>stake_payout</c> or <c>prize</c>); voided, it is not.</summary>
    [Wire("GET /api/v1/wallet/transactions 200", "held[]")]
    public sealed class HeldPayout
    {
        [JsonProperty("holdId")] public string HoldId { get; set; }
        /// <summary><c>stake_payout</c> or <c>prize</c>.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        /// <summary>What you are paid if it is released (decimal string).</summary>
        [JsonProperty("amount")] public string Amount { get; set; }
        [JsonProperty("asset")] public string Asset { get; set; }
        [JsonProperty("matchId")] public string MatchId { get; set; }
        /// <summary>Null for a queue's or a challenge's match.</summary>
        [JsonProperty("tournamentId")] public string TournamentId { get; set; }
        [JsonProperty("heldAt")] public string HeldAt { get; set; }
    }

    /// <summary>A page of the wallet's movements, oldest first.</summary>
    [Wire("GET /api/v1/wallet/transactions 200")]
    public sealed class TransactionsPage
    {
        [JsonProperty("transactions")] public List<WalletTransaction> Transactions { get; set; }
        /// <summary>Pass as <c>after</c> to read on; with no movements it stays where you were.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
        /// <summary>Your payouts held for an operator's review (integrity signals), oldest first, on every page: not movements; one released shows up as a movement.</summary>
        [JsonProperty("held")] public List<HeldPayout> Held { get; set; }
    }

    /// <summary>A withdrawal's status (<see cref="Withdrawal.Status"/>).</summary>
    public static class WithdrawalStatuses
    {
        /// <summary>Above the operator's approval threshold, waiting for an operator.</summary>
        public const string AwaitingApproval = "awaiting_approval";
        /// <summary>The first withdrawal to this address, signed when <c>releasesAt</c> comes.</summary>
        public const string Held = "held";
        /// <summary>Being signed.</summary>
        public const string PendingSignature = "pending_signature";
        /// <summary>Final: custody signed it.</summary>
        public const string Signed = "signed";
        /// <summary>Final: custody refused it; the funds returned.</summary>
        public const string Failed = "failed";
        /// <summary>Final: an operator rejected it; the funds returned.</summary>
        public const string Rejected = "rejected";
    }

    /// <summary>A withdrawal (<see cref="WalletApi.WithdrawalsAsync"/>, the result of a PIN purchase).</summary>
    [Wire("GET /api/v1/wallet/withdrawals 200", "withdrawals[]")]
    [Wire("POST /api/v1/security/pin-session/{id}/verify 200", "withdrawal")]
    public sealed class Withdrawal
    {
        [JsonProperty("id")] public string Id { get; set; }
        /// <summary>One of <see cref="WithdrawalStatuses"/>: <c>signed</c>, <c>failed</c> and <c>rejected</c> are final, the last two with the funds returned.</summary>
        [JsonProperty("status")] public string Status { get; set; }
        /// <summary>Decimal string.</summary>
        [JsonProperty("amount")] public string Amount { get; set; }
        [JsonProperty("asset")] public string Asset { get; set; }
        [JsonProperty("destinationAddress")] public string DestinationAddress { get; set; }
        [JsonProperty("idempotencyKey")] public string IdempotencyKey { get; set; }
        /// <summary>Base58 Ed25519 signature over the canonical withdrawal message, once signed.</summary>
        [JsonProperty("signature")] public string Signature { get; set; }
        /// <summary>Why custody refused it, once <c>failed</c>.</summary>
        [JsonProperty("failureReason")] public string FailureReason { get; set; }
        /// <summary>Why it is not signed yet, while <c>awaiting_approval</c> (<c>approval_required</c>) or <c>held</c> (<c>new_destination</c>).</summary>
        [JsonProperty("reason")] public string Reason { get; set; }
        /// <summary>When its new-destination hold ends (ISO 8601), while it waits with one.</summary>
        [JsonProperty("releasesAt")] public string ReleasesAt { get; set; }
        /// <summary>The operator's reason, once <c>rejected</c>.</summary>
        [JsonProperty("rejectionReason")] public string RejectionReason { get; set; }
        [JsonProperty("createdAt")] public string CreatedAt { get; set; }
    }

    /// <summary>A page of the signed-in player's withdrawals, oldest first.</summary>
    [Wire("GET /api/v1/wallet/withdrawals 200")]
    public sealed class WithdrawalsPage
    {
        [JsonProperty("withdrawals")] public List<Withdrawal> Withdrawals { get; set; }
        /// <summary>Pass as <c>after</c> for the next page; null at the end.</summary>
        [JsonProperty("cursor")] public string Cursor { get; set; }
    }

    /// <summary>A one-time PIN session (minted by <see cref="PurchasesApi.AuthorizeAsync"/>).</summary>
    [Wire("POST /api/v1/security/pin-session 201")]
    public sealed class PinSessionResponse
    {
        [JsonProperty("sessionId")] public string SessionId { get; set; }
        /// <summary>Sent as x-secure-session with the one verify.</summary>
        [JsonProperty("sessionToken")] public string SessionToken { get; set; }
        [JsonProperty("expiresAt")] public string ExpiresAt { get; set; }
        [JsonProperty("maxAttempts")] public int MaxAttempts { get; set; }
    }

    /// <summary>The answer to a PIN verify: a wrong PIN is <c>Valid = false</c>, not an error.</summary>
    [Wire("POST /api/v1/security/pin-session/{id}/verify 200")]
    public class PinVerifyResponse
    {
        [JsonProperty("valid")] public bool Valid { get; set; }
        [JsonProperty("locked")] public bool Locked { get; set; }
        /// <summary>Consecutive failures; 0 after a valid PIN.</summary>
        [JsonProperty("attempt")] public int Attempt { get; set; }
        /// <summary>The withdrawal the valid PIN authorized; null otherwise.</summary>
        [JsonProperty("withdrawal")] public Withdrawal Withdrawal { get; set; }
    }

    [Wire("POST /api/v1/security/pin-session/{id}/verify body")]
    internal sealed class VerifyBody
    {
        [JsonProperty("pin")] public string Pin { get; set; }
        /// <summary>Decimal string.</summary>
        [JsonProperty("amount")] public string Amount { get; set; }
        [JsonProperty("destinationAddress")] public string DestinationAddress { get; set; }
        [JsonProperty("idempotencyKey")] public string IdempotencyKey { get; set; }
    }

    [Wire("PUT /api/v1/security/pin body")]
    internal sealed class SetPinBody
    {
        [JsonProperty("pin")] public string Pin { get; set; }
        /// <summary>The account password, to re-authenticate.</summary>
        [JsonProperty("password")] public string Password { get; set; }
    }

    [Wire("POST /api/v1/security/events body")]
    internal sealed class SecurityEventBody
    {
        /// <summary>UPPER_SNAKE, e.g. ENV_COMPROMISED.</summary>
        [JsonProperty("kind")] public string Kind { get; set; }
        [JsonProperty("level")] public string Level { get; set; }
        [JsonProperty("details")] public JObject Details { get; set; }
        [JsonProperty("occurredAt")] public string OccurredAt { get; set; }
    }

    /// <summary>Whether the server accepted a security event (false when it shed it under overload).</summary>
    [Wire("POST /api/v1/security/events 202")]
    internal sealed class SecurityEventAccepted
    {
        [JsonProperty("accepted")] public bool Accepted { get; set; }
    }

    /// <summary>The set-PIN answer.</summary>
    [Wire("PUT /api/v1/security/pin 200")]
    internal sealed class PinSetResponse
    {
        [JsonProperty("ok")] public bool Ok { get; set; }
    }
}
