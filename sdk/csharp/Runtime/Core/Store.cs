// What must survive a restart, behind an interface the game chooses: the
// tokens, the device token and a guest's device secret. Values are secrets:
// a store for a shipped game should keep them where the platform keeps
// secrets (the keychain, Android's keystore) when it can.
using System;
using System.Collections.Generic;

namespace Arena.Sdk
{
    public interface IArenaStore
    {
        /// <summary>The value kept under <paramref name="key"/>, or null.</summary>
        string Get(string key);
        void Set(string key, string value);
        void Delete(string key);
    }

    /// <summary>Keeps nothing past the process: the default.</summary>
    public sealed class MemoryArenaStore : IArenaStore
    {
        private readonly Dictionary<string, string> values = new Dictionary<string, string>();
        private readonly object gate = new object();

        public string Get(string key) { lock (gate) { string value; return values.TryGetValue(key, out value) ? value : null; } }
        public void Set(string key, string value) { lock (gate) values[key] = value; }
        public void Delete(string key) { lock (gate) values.Remove(key); }
    }

    /// <summary>The keys the SDK uses in a store.</summary>
    public static class ArenaStoreKeys
    {
        public const string AccessToken = "arena.accessToken";
        public const string RefreshToken = "arena.refreshToken";
        public const string ExpiresAt = "arena.expiresAt";
        public const string DeviceToken = "arena.deviceToken";
        public const string DeviceSecret = "arena.deviceSecret";
    }
}
