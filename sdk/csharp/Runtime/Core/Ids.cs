using System;
using System.Security.Cryptography;

namespace Arena.Sdk
{
    /// <summary>Random values the client makes: device tokens, guest secrets, idempotency keys.</summary>
    internal static class Ids
    {
        private static readonly RandomNumberGenerator Random = RandomNumberGenerator.Create();

        /// <summary>32 random bytes as base64url (43 characters): the device token and a guest's device secret.</summary>
        internal static string NewDeviceToken()
        {
            return Base64Url(Bytes(32));
        }

        internal static string NewDeviceSecret()
        {
            return Base64Url(Bytes(32));
        }

        /// <summary>A new UUID (v4), as the server expects an idempotency key.</summary>
        internal static string NewIdempotencyKey()
        {
            return Guid.NewGuid().ToString();
        }

        internal static byte[] Bytes(int count)
        {
            var bytes = new byte[count];
            lock (Random) Random.GetBytes(bytes);
            return bytes;
        }

        internal static string Base64Url(byte[] bytes)
        {
            return Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');
        }
    }
}
