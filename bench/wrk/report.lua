-- Appended to every scenario script by bench/wrk.ts: writes wrk's summary as
-- one JSON object to the file named by BENCH_REPORT. A script may count its
-- own successes in a global `counted` (summed over threads).
local threads = {}
setup = function(thread) table.insert(threads, thread) end

done = function(summary, latency, requests)
  local counted = 0
  for _, t in ipairs(threads) do counted = counted + (tonumber(t:get("counted")) or 0) end
  local out = io.open(os.getenv("BENCH_REPORT"), "w")
  local e = summary.errors
  out:write(string.format(
    '{"requests":%d,"durationUs":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"counted":%d}',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, counted))
  out:close()
end
