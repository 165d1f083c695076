-- wrk script: POST one order per customer of brand-j (phones 96xxxxxxxx), each last ordered on
-- 2026-01-01 (lost customers), PER_THREAD customers per wrk thread; past that the thread replays
-- its first orders (unchanged, no new customers).
local next_id = 0
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end
function init(args)
  counter = 0
  per_thread = tonumber(os.getenv("PER_THREAD") or "100000")
end
function request()
  local n = tid * per_thread + (counter % per_thread)
  counter = counter + 1
  local body = string.format(
    '{"parentBusinessId":"brand-j","businessId":"o1","orderId":"j-%d","customer":{"name":"Guest %d","phone":"96%08d"},"amount":250,"orderTime":"2026-01-01 10:00:00"}',
    n, n, n)
  return wrk.format("POST", "/injestion/platform", {["Content-Type"] = "application/json"}, body)
end
