using System;

namespace Arena.Sdk
{
    /// <summary>
    /// Where a wire type appears in the server's OpenAPI document (served at /openapi/json),
    /// so the drift check (test/sdk-csharp/wire-types.test.ts) can hold the type's
    /// [JsonProperty] fields to it: a renamed or dropped field fails the build.
    /// <paramref name="at"/> is <c>"METHOD /path/{param} STATUS"</c> for an answer or
    /// <c>"METHOD /path body"</c> for a request body, with the path as the document writes it;
    /// <paramref name="pointer"/> walks the schema from there: property names joined by
    /// <c>.</c>, <c>[]</c> for an array's items, empty for the whole schema.
    /// </summary>
    [AttributeUsage(AttributeTargets.Class, AllowMultiple = true, Inherited = false)]
    internal sealed class WireAttribute : Attribute
    {
        public string At { get; private set; }
        public string Pointer { get; private set; }

        public WireAttribute(string at, string pointer = "")
        {
            At = at;
            Pointer = pointer;
        }
    }
}
