// Prints what an assembly references and the public types it exports, as JSON
// ({"references":[...],"types":[...]}, both sorted), for
// test/sdk-csharp/compile.test.ts where monodis is missing (Debian's mono-devel
// has none). Its own Main: not part of the unit-test exe.
using System;
using System.Linq;
using System.Reflection;
using Newtonsoft.Json.Linq;

namespace Arena.Sdk.Tools
{
    public static class AssemblyInfo
    {
        public static int Main(string[] args)
        {
            if (args.Length != 1)
            {
                Console.Error.WriteLine("usage: AssemblyInfo.exe <assembly.dll>");
                return 2;
            }
            var assembly = Assembly.LoadFrom(args[0]);
            var references = assembly.GetReferencedAssemblies().Select(name => name.Name).OrderBy(name => name, StringComparer.Ordinal);
            var types = assembly.GetExportedTypes().Select(type => type.FullName).OrderBy(name => name, StringComparer.Ordinal);
            Console.WriteLine(new JObject { { "references", new JArray(references) }, { "types", new JArray(types) } }.ToString());
            return 0;
        }
    }
}
