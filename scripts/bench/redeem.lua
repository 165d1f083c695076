-- wrk script: POST /integration/v1/redeem_points (1 point, a unique order id per request) with the
-- integration token in TOKEN. CUSTOMERS=1 hammers one hot customer; CUSTOMERS=N spreads over N.
-- TARGET_PATH overrides the path (the baseline server answers /v1/logs).
local next_id = 0
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end
function init(args)
  counter = 0
  customers = tonumber(os.getenv("CUSTOMERS") or "1")
  token = os.getenv("TOKEN") or ""
  run = os.getenv("RUN_ID") or "0"
  path = os.getenv("TARGET_PATH") or "/integration/v1/redeem_points"
  -- PACE_MS=N: each connection waits N ms after an answer before its next call (a paced load:
  -- about connections * 1000 / (N + latency) calls/s; scripts/bench-redeem.sh, PACED_RATE)
  pace = tonumber(os.getenv("PACE_MS") or "0")
end
function delay()
  return pace
end
function request()
  counter = counter + 1
  local customer = (tid * 7919 + counter) % customers
  local body = string.format('{"customer_number":"97%08d","points":1,"order_id":"%s-%d-%d","outlet_id":"o1"}', customer, run, tid, counter)
  return wrk.format("POST", path, {["Content-Type"] = "application/json", ["Authorization"] = token}, body)
end
