// JSON on the wire: Newtonsoft.Json (in Unity, com.unity.nuget.newtonsoft-json).
// Wire types name every field with [JsonProperty]; dates and amounts stay
// strings as the server writes them (an amount is never a JSON number).
using System;
using System.Text;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk
{
    internal static class Json
    {
        internal static readonly JsonSerializerSettings Settings = new JsonSerializerSettings
        {
            NullValueHandling = NullValueHandling.Ignore,
            MissingMemberHandling = MissingMemberHandling.Ignore,
            DateParseHandling = DateParseHandling.None,
            FloatParseHandling = FloatParseHandling.Double,
        };

        internal static byte[] Bytes(object value)
        {
            return Encoding.UTF8.GetBytes(JsonConvert.SerializeObject(value, Formatting.None, Settings));
        }

        internal static string Text(object value)
        {
            return JsonConvert.SerializeObject(value, Formatting.None, Settings);
        }

        /// <summary>Parses a 2xx answer's body as T, or throws 'invalid_response'.</summary>
        internal static T Read<T>(TransportResponse response)
        {
            if (!response.IsSuccess) throw ArenaApiException.From(response);
            try
            {
                var value = JsonConvert.DeserializeObject<T>(response.Text, Settings);
                if (value == null) throw new JsonException("empty body");
                return value;
            }
            catch (JsonException)
            {
                throw new ArenaApiException(response.Status, "invalid_response", "The server answered " + response.Status + " with a body that is not the expected JSON", null, null, response.Header("x-request-id"));
            }
        }

        internal static T Parse<T>(string text)
        {
            return JsonConvert.DeserializeObject<T>(text, Settings);
        }

        internal static JObject Object(string text)
        {
            using (var reader = new JsonTextReader(new System.IO.StringReader(text)) { DateParseHandling = DateParseHandling.None })
                return JObject.Load(reader);
        }
    }
}
