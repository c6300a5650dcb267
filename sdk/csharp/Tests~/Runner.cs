// A test runner small enough to need nothing but the base library: every
// public static method marked [Test] in this assembly runs (one returning a
// Task is awaited, with a time limit), and each prints "ok <name>" or
// "FAIL <name>: <why>". The exit code is the number of failures (0: all passed).
// Arguments filter by substring of "Class.Method".
using System;
using System.Linq;
using System.Reflection;
using System.Threading.Tasks;

namespace Arena.Sdk.Tests
{
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class TestAttribute : Attribute { }

    public sealed class AssertionException : Exception
    {
        public AssertionException(string message) : base(message) { }
    }

    public static class Assert
    {
        public static void True(bool condition, string what)
        {
            if (!condition) throw new AssertionException(what);
        }

        public static void Equal<T>(T expected, T actual, string what = null)
        {
            if (!Equals(expected, actual)) throw new AssertionException((what == null ? "" : what + ": ") + "expected <" + expected + ">, got <" + actual + ">");
        }

        /// <summary>Runs <paramref name="action"/> and returns the exception of type E it threw; fails if it threw none or another.</summary>
        public static async Task<E> ThrowsAsync<E>(Func<Task> action, string what = null) where E : Exception
        {
            try
            {
                await action();
            }
            catch (E error)
            {
                return error;
            }
            catch (Exception other)
            {
                throw new AssertionException((what == null ? "" : what + ": ") + "expected " + typeof(E).Name + ", got " + other.GetType().Name + ": " + other.Message);
            }
            throw new AssertionException((what == null ? "" : what + ": ") + "expected " + typeof(E).Name + ", nothing was thrown");
        }
    }

    public static class Runner
    {
        /// <summary>The longest one test may run.</summary>
        private static readonly TimeSpan Limit = TimeSpan.FromSeconds(20);

        public static int Main(string[] args)
        {
            var tests = typeof(Runner).Assembly.GetTypes()
                .SelectMany(type => type.GetMethods(BindingFlags.Public | BindingFlags.Static))
                .Where(method => method.GetCustomAttributes(typeof(TestAttribute), false).Length > 0)
                .Select(method => new { method, name = method.DeclaringType.Name + "." + method.Name })
                .Where(test => args.Length == 0 || args.Any(filter => test.name.Contains(filter)))
                .OrderBy(test => test.name, StringComparer.Ordinal)
                .ToList();
            var failures = 0;
            foreach (var test in tests)
            {
                try
                {
                    var result = test.method.Invoke(null, null);
                    var task = result as Task;
                    if (task != null && !task.Wait(Limit)) throw new AssertionException("did not finish within " + Limit.TotalSeconds + " s");
                    Console.WriteLine("ok " + test.name);
                }
                catch (Exception error)
                {
                    failures++;
                    var cause = Unwrap(error);
                    Console.WriteLine("FAIL " + test.name + ": " + cause.GetType().Name + ": " + cause.Message.Replace('\n', ' '));
                    Console.Error.WriteLine(test.name + ": " + cause);
                }
            }
            Console.WriteLine(tests.Count + " tests, " + failures + " failed");
            return failures;
        }

        private static Exception Unwrap(Exception error)
        {
            while ((error is TargetInvocationException || error is AggregateException) && error.InnerException != null) error = error.InnerException;
            return error;
        }
    }
}
