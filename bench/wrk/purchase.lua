-- PIN purchases: mint a PIN session, then verify it once with the right PIN
-- for a small withdrawal. A connection's next request is a verify when a
-- minted session is waiting, else a mint. One buyer (BENCH_BEARER, with PIN
-- BENCH_PIN), so a mint's answer needs no matching to its asker.
local bearer = os.getenv("BENCH_BEARER")
local address = os.getenv("BENCH_ADDRESS")
local pin = os.getenv("BENCH_PIN")
local minted = {}
local serial = 0
counted = 0

function request()
  local waiting = table.remove(minted, 1)
  if waiting ~= nil then
    serial = serial + 1
    local body = string.format('{"pin":"%s","amount":"0.01","destinationAddress":"%s","idempotencyKey":"bench-%d-%d"}', pin, address, os.time(), serial)
    return wrk.format("POST", "/api/v1/security/pin-session/" .. waiting.id .. "/verify",
      { ["authorization"] = "Bearer " .. bearer, ["x-secure-session"] = waiting.token, ["content-type"] = "application/json" }, body)
  end
  return wrk.format("POST", "/api/v1/security/pin-session",
    { ["authorization"] = "Bearer " .. bearer, ["content-type"] = "application/json" }, "{}")
end

function response(status, headers, body)
  if status == 201 then
    local id = body:match('"sessionId":"([^"]+)"')
    local token = body:match('"sessionToken":"([^"]+)"')
    if id ~= nil then table.insert(minted, { id = id, token = token }) end
  elseif status == 200 and body:find('"valid":true', 1, true) then
    counted = counted + 1
  end
end
