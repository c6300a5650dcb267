// Every failure the SDK throws. An HTTP answer that is not 2xx becomes an
// ArenaApiException (or a subclass to catch by type) carrying the envelope's
// code; a request that got no answer is an ArenaNetworkException, except a
// PIN verify, whose outcome is then unknown (OutcomeUnknownException).
using System;
using System.Collections.Generic;
using System.Globalization;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    /// <summary>The base of every exception the SDK throws on purpose.</summary>
    public class ArenaException : Exception
    {
        public ArenaException(string message) : base(message) { }
        public ArenaException(string message, Exception inner) : base(message, inner) { }
    }

    /// <summary>One field the server refused (`details` of a 422).</summary>
    [Wire("POST /api/v1/user/login 422", "error.details[]")]
    public sealed class ErrorDetail
    {
        [JsonProperty("path")] public string Path { get; set; }
        [JsonProperty("message")] public string Message { get; set; }
    }

    /// <summary>
    /// An error answer: the envelope <c>{ error: { code, message, status } }</c>, or, from
    /// something in front of arena (a proxy's page), a status alone, whose code is then
    /// derived from it (404 <c>not_found</c>, 503 <c>service_unavailable</c>, ...).
    /// </summary>
    public class ArenaApiException : ArenaException
    {
        /// <summary>The HTTP status.</summary>
        public int Status { get; private set; }
        /// <summary>The envelope's code: <c>invalid_credentials</c>, <c>username_taken</c>, ... (docs/api.md lists them).</summary>
        public string Code { get; private set; }
        /// <summary>The fields a 422 refused, or an empty list.</summary>
        public IList<ErrorDetail> Details { get; private set; }
        /// <summary>Seconds to wait, from <c>Retry-After</c> (429, 503), or null.</summary>
        public int? RetryAfterSeconds { get; private set; }
        /// <summary>The answer's <c>x-request-id</c>, to quote to the studio.</summary>
        public string RequestId { get; private set; }
        /// <summary><c>account_banned</c>: when the ban ends (ISO-8601), or null.</summary>
        public string Until { get; private set; }

        public ArenaApiException(int status, string code, string message, IList<ErrorDetail> details = null, int? retryAfterSeconds = null, string requestId = null, string until = null)
            : base(message)
        {
            Status = status;
            Code = code;
            Details = details ?? new List<ErrorDetail>();
            RetryAfterSeconds = retryAfterSeconds;
            RequestId = requestId;
            Until = until;
        }

        private static readonly Dictionary<int, string> CodeByStatus = new Dictionary<int, string>
        {
            { 400, "bad_request" }, { 401, "unauthorized" }, { 403, "forbidden" }, { 404, "not_found" },
            { 409, "conflict" }, { 410, "gone" }, { 413, "payload_too_large" }, { 422, "validation_failed" },
            { 429, "rate_limited" }, { 500, "internal" }, { 503, "service_unavailable" },
        };

        /// <summary>Reads an error answer. Never throws: an unreadable body still gives an exception.</summary>
        public static ArenaApiException From(TransportResponse response)
        {
            var retryAfter = ParseRetryAfter(response.Header("retry-after"));
            var requestId = response.Header("x-request-id");
            string fallback;
            if (!CodeByStatus.TryGetValue(response.Status, out fallback)) fallback = "http_" + response.Status;
            JObject body = null;
            try { body = JObject.Parse(response.Text); } catch (Exception) { /* not JSON: the status says what happened */ }
            var error = body == null ? null : body["error"] as JObject;
            if (error != null && error["message"] != null && error["message"].Type == JTokenType.String)
            {
                var code = error["code"] != null && error["code"].Type == JTokenType.String && (string)error["code"] != "" ? (string)error["code"] : fallback;
                var status = error["status"] != null && error["status"].Type == JTokenType.Integer ? (int)error["status"] : response.Status;
                var details = new List<ErrorDetail>();
                var list = error["details"] as JArray;
                if (list != null)
                    foreach (var item in list)
                    {
                        var o = item as JObject;
                        if (o != null && o["path"] != null && o["message"] != null) details.Add(new ErrorDetail { Path = (string)o["path"], Message = (string)o["message"] });
                    }
                string until = null;
                if (error["until"] != null && error["until"].Type == JTokenType.String) until = (string)error["until"];
                if (error["until"] != null && error["until"].Type == JTokenType.Date) until = ((DateTime)error["until"]).ToUniversalTime().ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
                return Make(status, code, (string)error["message"], details, retryAfter, requestId, until);
            }
            // Without an envelope (a proxy's page, a bare status) the exception is never a subclass:
            // a bare 429 is not known to be arena's rate limit, nor a bare 410 a spent PIN session.
            if (body != null && body["message"] != null && body["message"].Type == JTokenType.String)
                return new ArenaApiException(response.Status, fallback, (string)body["message"], null, retryAfter, requestId);
            return new ArenaApiException(response.Status, fallback, "HTTP " + response.Status, null, retryAfter, requestId);
        }

        internal static ArenaApiException Make(int status, string code, string message, IList<ErrorDetail> details, int? retryAfter, string requestId, string until)
        {
            if (status == 429 && code == "rate_limited") return new RateLimitedException(status, code, message, details, retryAfter, requestId);
            if (status == 429 && code == "pin_locked") return new PinLockedException(status, code, message, details, retryAfter, requestId);
            if (status == 410 && code == "session_expired") return new PinSessionExpiredException(status, code, message, details, retryAfter, requestId);
            return new ArenaApiException(status, code, message, details, retryAfter, requestId, until);
        }

        private static int? ParseRetryAfter(string value)
        {
            if (string.IsNullOrEmpty(value)) return null;
            int seconds;
            if (int.TryParse(value.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out seconds)) return seconds;
            DateTimeOffset at;
            if (DateTimeOffset.TryParse(value, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal, out at))
                return Math.Max(0, (int)Math.Ceiling((at - DateTimeOffset.UtcNow).TotalSeconds));
            return null;
        }
    }

    /// <summary>429 <c>rate_limited</c>: a rate limit of the route, the address or the account. <see cref="ArenaApiException.RetryAfterSeconds"/> says when to try again.</summary>
    public sealed class RateLimitedException : ArenaApiException
    {
        public RateLimitedException(int status, string code, string message, IList<ErrorDetail> details, int? retryAfter, string requestId)
            : base(status, code, message, details, retryAfter, requestId) { }
    }

    /// <summary>429 <c>pin_locked</c>: too many wrong PINs; <see cref="ArenaApiException.RetryAfterSeconds"/> says for how long.</summary>
    public sealed class PinLockedException : ArenaApiException
    {
        public PinLockedException(int status, string code, string message, IList<ErrorDetail> details, int? retryAfter, string requestId)
            : base(status, code, message, details, retryAfter, requestId) { }
    }

    /// <summary>410 <c>session_expired</c> on a PIN verify: the one-time session expired or was used. Mint a new one.</summary>
    public sealed class PinSessionExpiredException : ArenaApiException
    {
        public PinSessionExpiredException(int status, string code, string message, IList<ErrorDetail> details, int? retryAfter, string requestId)
            : base(status, code, message, details, retryAfter, requestId) { }
    }

    /// <summary>The request got no HTTP answer (refused, reset, DNS, timeout).</summary>
    public sealed class ArenaNetworkException : ArenaException
    {
        public ArenaNetworkException(string message, Exception inner = null) : base(message, inner) { }
    }

    /// <summary>An authenticated call while the client holds no tokens (never signed in, signed out, or the session ended).</summary>
    public sealed class NotSignedInException : ArenaException
    {
        public NotSignedInException() : base("Not signed in: sign in (Auth.LoginAsync, LoginAsGuestAsync, ...) or Auth.UseToken first") { }
    }
}
