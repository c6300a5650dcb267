// NOT Unity: a stub of the few UnityEngine members the SDK's Unity-only code
// (Runtime/Unity/*.cs) and its sample (Samples~) use, with the signatures of
// Unity's scripting reference (2021.3: UnityWebRequest, UnityWebRequest.Result,
// UnityWebRequestAsyncOperation, AsyncOperation.completed, UploadHandlerRaw,
// UploadHandler.contentType, DownloadHandlerBuffer, DownloadHandler.data,
// GetResponseHeaders; PlayerPrefs; MonoBehaviour, TooltipAttribute,
// GUILayout.Label, Debug.Log). test/sdk-csharp/compile.test.ts and docs.test.ts compiles the SDK with
// -define:UNITY_WEBGL -define:UNITY_5_3_OR_NEWER against it, as a WebGL player
// build would: a compile check of syntax and API shape, never a run (the
// members throw or do nothing).
using System;
using System.Collections.Generic;

namespace UnityEngine
{
    public class PlayerPrefs
    {
        public static bool HasKey(string key) { throw new NotSupportedException("stub"); }
        public static string GetString(string key) { throw new NotSupportedException("stub"); }
        public static string GetString(string key, string defaultValue) { throw new NotSupportedException("stub"); }
        public static void SetString(string key, string value) { throw new NotSupportedException("stub"); }
        public static void DeleteKey(string key) { throw new NotSupportedException("stub"); }
        public static void Save() { throw new NotSupportedException("stub"); }
    }

    public class Debug
    {
        public static void Log(object message) { }
    }

    public class Object { }
    public class Component : Object { }
    public class Behaviour : Component { }
    public class MonoBehaviour : Behaviour { }

    [AttributeUsage(AttributeTargets.Field, Inherited = true, AllowMultiple = false)]
    public class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }

    public sealed class GUILayoutOption { }

    public class GUILayout
    {
        public static void Label(string text, params GUILayoutOption[] options) { }
    }

    public class AsyncOperation
    {
        public bool isDone { get { throw new NotSupportedException("stub"); } }
        public event Action<AsyncOperation> completed { add { throw new NotSupportedException("stub"); } remove { } }
    }
}

namespace UnityEngine.Networking
{
    public class UnityWebRequestAsyncOperation : AsyncOperation
    {
        public UnityWebRequest webRequest { get { throw new NotSupportedException("stub"); } }
    }

    public class DownloadHandler : IDisposable
    {
        public byte[] data { get { throw new NotSupportedException("stub"); } }
        public string text { get { throw new NotSupportedException("stub"); } }
        public void Dispose() { }
    }

    public sealed class DownloadHandlerBuffer : DownloadHandler
    {
        public DownloadHandlerBuffer() { }
    }

    public class UploadHandler : IDisposable
    {
        public string contentType { get { throw new NotSupportedException("stub"); } set { throw new NotSupportedException("stub"); } }
        public void Dispose() { }
    }

    public sealed class UploadHandlerRaw : UploadHandler
    {
        public UploadHandlerRaw(byte[] data) { }
    }

    public class UnityWebRequest : IDisposable
    {
        public enum Result { InProgress, Success, ConnectionError, ProtocolError, DataProcessingError }

        public UnityWebRequest(string url, string method) { }
        public DownloadHandler downloadHandler { get; set; }
        public UploadHandler uploadHandler { get; set; }
        public int timeout { get; set; }
        public long responseCode { get { throw new NotSupportedException("stub"); } }
        public Result result { get { throw new NotSupportedException("stub"); } }
        public string error { get { throw new NotSupportedException("stub"); } }
        public void SetRequestHeader(string name, string value) { throw new NotSupportedException("stub"); }
        public Dictionary<string, string> GetResponseHeaders() { throw new NotSupportedException("stub"); }
        public UnityWebRequestAsyncOperation SendWebRequest() { throw new NotSupportedException("stub"); }
        public void Abort() { }
        public void Dispose() { }
    }
}
