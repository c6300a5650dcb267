-- Sends the requests listed in BENCH_REQUESTS, one per line:
--   METHOD <tab> PATH <tab> header: value|header: value <tab> BODY
-- BENCH_MODE=cycle starts over at the end (for a timed run); BENCH_MODE=once
-- stops after the last answer (for single-use requests such as claims).
-- BENCH_SAVE names a file that gets the body of every 2xx answer, one a line.
-- BENCH_DELAY_MS spaces each connection's requests: after each answer a
-- connection waits an exponentially distributed pause of that mean, so the
-- connections' requests arrive spread out (close to Poisson arrivals) rather
-- than in synchronized bursts of one request per connection, which would
-- measure the queue of a burst instead of the server's latency at that rate.
local requests = {}
local next_index = 1
local answered = 0
counted = 0
local mode = os.getenv("BENCH_MODE") or "cycle"
local save_path = os.getenv("BENCH_SAVE")
local save = nil
local delay_ms = tonumber(os.getenv("BENCH_DELAY_MS") or "0")

local function split(s, sep)
  local out = {}
  for part in (s .. sep):gmatch("(.-)" .. sep) do table.insert(out, part) end
  return out
end

function init(args)
  for line in io.lines(os.getenv("BENCH_REQUESTS")) do
    local f = split(line, "\t")
    local headers = {}
    if f[3] ~= nil and f[3] ~= "" then
      for _, h in ipairs(split(f[3], "|")) do
        local k, v = h:match("^([^:]+):%s*(.*)$")
        headers[k] = v
      end
    end
    local body = f[4]
    if body == "" then body = nil end
    if body ~= nil then headers["content-type"] = "application/json" end
    table.insert(requests, wrk.format(f[1], f[2], headers, body))
  end
  if save_path ~= nil and save_path ~= "" then save = io.open(save_path, "a") end
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

function request()
  local r = requests[next_index]
  if next_index < #requests then
    next_index = next_index + 1
  elseif mode == "cycle" then
    next_index = 1
  end
  return r
end

if delay_ms > 0 then
  function delay()
    -- wrk takes whole milliseconds.
    return math.floor(-delay_ms * math.log(1 - math.random()) + 0.5)
  end
end

if mode == "once" or save_path ~= nil then
  function response(status, headers, body)
    if save ~= nil and status >= 200 and status < 300 then save:write(body, "\n") save:flush() end
    answered = answered + 1
    if status >= 200 and status < 300 then counted = counted + 1 end
    if mode == "once" and answered >= #requests then wrk.thread:stop() end
  end
end
