// The C# half of the drift check (test/sdk-csharp/wire-types.test.ts): compiled
// with the SDK's sources (so its internal *Body types are visible), it prints
// as JSON every type of namespace Arena.Sdk that has [JsonProperty] properties
// (or fields): its [Wire] places and, per field, the JSON name, the kind of its
// C# type and whether that type can hold null. The bun test holds them to the
// server's OpenAPI document. Not a unit test: its own Main, kept out of the
// unit exe.
//
// A kind is an object: {"kind":"string"|"integer"|"number"|"boolean"|"any"},
// {"kind":"array","of":kind,"ofNullable":bool}, {"kind":"dictionary",...} (string keys),
// {"kind":"object","type":"Name"} (a wire type, compared by its own fields), or
// {"kind":"unsupported","type":"..."} (a date, an enum, anything else: the test
// fails on it, since the SDK keeps dates and literal unions as strings).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using Newtonsoft.Json;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tools
{
    public static class WireShapes
    {
        private const string Namespace = "Arena.Sdk";
        private const BindingFlags Members = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Instance;

        public static int Main(string[] args)
        {
            var assembly = typeof(ArenaClient).Assembly;
            var types = new JObject();
            foreach (var type in assembly.GetTypes().Where(IsWireType).OrderBy(t => NameOf(t), StringComparer.Ordinal))
            {
                var places = new JArray();
                foreach (WireAttribute wire in type.GetCustomAttributes(typeof(WireAttribute), false))
                    places.Add(new JObject { { "at", wire.At }, { "pointer", wire.Pointer } });
                var fields = new JObject();
                foreach (var member in MembersOf(type))
                {
                    var json = (JsonPropertyAttribute)member.GetCustomAttributes(typeof(JsonPropertyAttribute), true).First();
                    var name = json.PropertyName ?? member.Name;
                    var memberType = TypeOf(member);
                    fields[name] = new JObject { { "kind", KindOf(memberType) }, { "nullable", CanBeNull(memberType) }, { "property", member.Name } };
                }
                types[NameOf(type)] = new JObject { { "wire", places }, { "fields", fields }, { "generic", type.IsGenericTypeDefinition } };
            }
            Console.WriteLine(types.ToString(Formatting.Indented));
            return 0;
        }

        /// <summary>A class of Arena.Sdk (or a namespace under it) with at least one [JsonProperty] property.</summary>
        private static bool IsWireType(Type type)
        {
            if (type.Namespace == null || !(type.Namespace == Namespace || type.Namespace.StartsWith(Namespace + ".", StringComparison.Ordinal))) return false;
            if (type.Namespace.StartsWith(Namespace + ".Tools", StringComparison.Ordinal) || type.Namespace.StartsWith(Namespace + ".Tests", StringComparison.Ordinal)) return false;
            return type.IsClass && MembersOf(type).Any();
        }

        /// <summary>The [JsonProperty] properties and fields (what Newtonsoft.Json reads and writes), the inherited ones included, base class first.</summary>
        private static IEnumerable<MemberInfo> MembersOf(Type type)
        {
            var chain = new List<Type>();
            for (var at = type; at != null && at != typeof(object); at = at.BaseType) chain.Insert(0, at);
            return chain.SelectMany(t => t.GetProperties(Members | BindingFlags.DeclaredOnly).Cast<MemberInfo>().Concat(t.GetFields(Members | BindingFlags.DeclaredOnly)))
                .Where(m => m.GetCustomAttributes(typeof(JsonPropertyAttribute), true).Length > 0);
        }

        private static Type TypeOf(MemberInfo member)
        {
            var property = member as PropertyInfo;
            return property != null ? property.PropertyType : ((FieldInfo)member).FieldType;
        }

        /// <summary>Outer+Inner for a nested type, without the namespace.</summary>
        private static string NameOf(Type type)
        {
            var name = type.FullName ?? type.Name;
            return type.Namespace != null && name.StartsWith(type.Namespace + ".", StringComparison.Ordinal) ? name.Substring(type.Namespace.Length + 1) : name;
        }

        private static bool CanBeNull(Type type)
        {
            return !type.IsValueType || Nullable.GetUnderlyingType(type) != null;
        }

        private static JObject Kind(string kind) { return new JObject { { "kind", kind } }; }

        private static JObject KindOf(Type type)
        {
            var underlying = Nullable.GetUnderlyingType(type);
            if (underlying != null) type = underlying;
            if (type == typeof(string)) return Kind("string");
            if (type == typeof(bool)) return Kind("boolean");
            if (type == typeof(int) || type == typeof(long) || type == typeof(short) || type == typeof(byte) || type == typeof(uint) || type == typeof(ulong) || type == typeof(ushort) || type == typeof(sbyte)) return Kind("integer");
            if (type == typeof(double) || type == typeof(float) || type == typeof(decimal)) return Kind("number");
            if (type == typeof(object) || typeof(JToken).IsAssignableFrom(type)) return Kind("any");
            if (type.IsArray) return Of("array", type.GetElementType());
            var dictionary = Generic(type, typeof(IDictionary<,>));
            if (dictionary != null)
            {
                if (dictionary[0] != typeof(string)) return Unsupported(type);
                return Of("dictionary", dictionary[1]);
            }
            var sequence = Generic(type, typeof(IEnumerable<>));
            if (sequence != null) return Of("array", sequence[0]);
            if (type.IsClass && type.Namespace != null && type.Namespace.StartsWith(Namespace, StringComparison.Ordinal) && !type.IsGenericType)
                return new JObject { { "kind", "object" }, { "type", NameOf(type) } };
            return Unsupported(type);
        }

        /// <summary>An array or dictionary of <paramref name="item"/>, and whether an item can be null.</summary>
        private static JObject Of(string kind, Type item)
        {
            return new JObject { { "kind", kind }, { "of", KindOf(item) }, { "ofNullable", CanBeNull(item) } };
        }

        private static JObject Unsupported(Type type)
        {
            return new JObject { { "kind", "unsupported" }, { "type", type.FullName ?? type.Name } };
        }

        /// <summary>The type arguments of <paramref name="definition"/> when <paramref name="type"/> is or implements it.</summary>
        private static Type[] Generic(Type type, Type definition)
        {
            if (type.IsGenericType && type.GetGenericTypeDefinition() == definition) return type.GetGenericArguments();
            var found = type.GetInterfaces().FirstOrDefault(i => i.IsGenericType && i.GetGenericTypeDefinition() == definition);
            return found == null ? null : found.GetGenericArguments();
        }
    }
}
