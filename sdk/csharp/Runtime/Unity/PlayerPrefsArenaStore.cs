#if UNITY_5_3_OR_NEWER
// A store in Unity's PlayerPrefs. PlayerPrefs is plain storage (the registry on
// Windows, a plist on macOS, a file on Linux and Android, localStorage on WebGL):
// a game that can keep secrets in the platform's keychain or keystore should
// write its own IArenaStore for them.
//
// PlayerPrefs may only be touched on Unity's main thread, while the SDK writes
// to its store from whichever thread completes a sign-in or rotation. So the
// values live in memory (read at construction, on the main thread) and every
// change is written through to PlayerPrefs on the main thread: at once when
// made there, else posted to the main thread's SynchronizationContext.
using System.Collections.Generic;
using System.Threading;
using UnityEngine;

namespace Arena.Sdk
{
    /// <summary>
    /// Keeps the SDK's values (tokens, device token, a guest's secret) in <c>PlayerPrefs</c>, under
    /// the SDK's keys (<see cref="ArenaStoreKeys"/>) with an optional prefix, saving after every
    /// change. Construct it on Unity's main thread (in Awake or Start); it may then be used from any thread.
    /// </summary>
    public sealed class PlayerPrefsArenaStore : IArenaStore
    {
        private static readonly string[] Keys = { ArenaStoreKeys.AccessToken, ArenaStoreKeys.RefreshToken, ArenaStoreKeys.ExpiresAt, ArenaStoreKeys.DeviceToken, ArenaStoreKeys.DeviceSecret };

        private readonly string prefix;
        private readonly SynchronizationContext mainThread;
        private readonly object gate = new object();
        private readonly Dictionary<string, string> values = new Dictionary<string, string>();

        /// <summary>A store whose keys are the SDK's, preceded by <paramref name="prefix"/> (one per profile, say). Call on the main thread.</summary>
        public PlayerPrefsArenaStore(string prefix = "")
        {
            this.prefix = prefix ?? "";
            mainThread = SynchronizationContext.Current;
            if (mainThread == null) throw new System.InvalidOperationException("PlayerPrefsArenaStore: construct it on Unity's main thread");
            foreach (var key in Keys)
                if (PlayerPrefs.HasKey(this.prefix + key)) values[key] = PlayerPrefs.GetString(this.prefix + key);
        }

        /// <summary>The value kept under <paramref name="key"/>, or null.</summary>
        public string Get(string key)
        {
            lock (gate)
            {
                string value;
                return values.TryGetValue(key, out value) ? value : null;
            }
        }

        /// <summary>Keeps the value; PlayerPrefs is written and saved on the main thread.</summary>
        public void Set(string key, string value)
        {
            if (value == null) { Delete(key); return; }
            lock (gate) values[key] = value;
            WriteThrough(key);
        }

        /// <summary>Forgets the key; PlayerPrefs is written and saved on the main thread.</summary>
        public void Delete(string key)
        {
            lock (gate) values.Remove(key);
            WriteThrough(key);
        }

        /// <summary>Writes the key's value as it is when the write runs (so writes that run out of order still end on the latest).</summary>
        private void WriteThrough(string key)
        {
            System.Action write = () =>
            {
                var value = Get(key);
                if (value == null) PlayerPrefs.DeleteKey(prefix + key); else PlayerPrefs.SetString(prefix + key, value);
                PlayerPrefs.Save();
            };
            if (SynchronizationContext.Current == mainThread) write();
            else mainThread.Post(_ => write(), null);
        }
    }
}
#endif
