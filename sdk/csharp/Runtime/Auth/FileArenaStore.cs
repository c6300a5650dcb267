// A store in one JSON file, for desktop games and tests. Every change rewrites
// the file atomically (a temp file beside it, then a rename), so a crash
// mid-write leaves the old file or the new one, never half of one.
using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Newtonsoft.Json;

namespace Arena.Sdk
{
    /// <summary>
    /// Keeps the SDK's values (tokens, device token, a guest's secret) in one JSON file, an object of
    /// strings. The values are secrets: put the file in the user's own data directory (e.g.
    /// <c>Environment.SpecialFolder.LocalApplicationData</c>), which other users cannot read. One
    /// process at a time: two processes sharing the file overwrite each other's changes.
    /// </summary>
    public sealed class FileArenaStore : IArenaStore
    {
        private readonly string path;
        private readonly object gate = new object();
        private readonly Dictionary<string, string> values;

        /// <summary>
        /// Opens the store at <paramref name="path"/> (created on the first change, with its directory).
        /// A file that is not a JSON object of strings is an ArenaException naming it (delete it to start afresh).
        /// </summary>
        public FileArenaStore(string path)
        {
            if (string.IsNullOrEmpty(path)) throw new ArgumentException("path is empty", "path");
            this.path = Path.GetFullPath(path);
            values = Load(this.path);
        }

        /// <summary>The file's full path.</summary>
        public string FilePath { get { return path; } }

        /// <summary>The value kept under <paramref name="key"/>, or null.</summary>
        public string Get(string key)
        {
            lock (gate)
            {
                string value;
                return values.TryGetValue(key, out value) ? value : null;
            }
        }

        /// <summary>Keeps <paramref name="value"/> under <paramref name="key"/> and rewrites the file before returning.</summary>
        public void Set(string key, string value)
        {
            if (key == null) throw new ArgumentNullException("key");
            if (value == null) { Delete(key); return; }
            lock (gate)
            {
                string old;
                if (values.TryGetValue(key, out old) && old == value) return;
                values[key] = value;
                Save();
            }
        }

        /// <summary>Forgets <paramref name="key"/> and rewrites the file before returning.</summary>
        public void Delete(string key)
        {
            if (key == null) throw new ArgumentNullException("key");
            lock (gate)
            {
                if (!values.Remove(key)) return;
                Save();
            }
        }

        private static Dictionary<string, string> Load(string path)
        {
            if (!File.Exists(path)) return new Dictionary<string, string>();
            string text;
            try
            {
                text = File.ReadAllText(path, Encoding.UTF8);
            }
            catch (IOException error)
            {
                throw new ArenaException("The store file " + path + " cannot be read: " + error.Message, error);
            }
            try
            {
                var loaded = JsonConvert.DeserializeObject<Dictionary<string, string>>(text, Json.Settings);
                if (loaded == null) throw new JsonException("not an object");
                return loaded;
            }
            catch (JsonException error)
            {
                throw new ArenaException("The store file " + path + " is not a JSON object of strings (delete it to start afresh)", error);
            }
        }

        private void Save()
        {
            var directory = Path.GetDirectoryName(path);
            if (!string.IsNullOrEmpty(directory)) Directory.CreateDirectory(directory);
            var temp = path + "." + Guid.NewGuid().ToString("N") + ".tmp";
            try
            {
                File.WriteAllText(temp, JsonConvert.SerializeObject(values, Formatting.Indented), new UTF8Encoding(false));
                if (File.Exists(path)) File.Replace(temp, path, null);
                else File.Move(temp, path);
            }
            finally
            {
                if (File.Exists(temp)) File.Delete(temp);
            }
        }
    }
}
