-- wrk script: POST /integration/v1/redeem_points (1 point, a unique order id per request) with the
-- integration token in TOKEN. CUSTOMERS=1 hammers one hot customer; CUSTOMERS=N spreads over N.
-- TARGET_PATH overrides the path (the baseline server answers /v1/logs).
package.path = "scripts/bench/?.lua;" .. package.path
local pace = require("pace")
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
  -- PACE_RATE=N: N calls/s over all threads (scripts/bench/pace.lua; bench-redeem.sh, PACED_RATE)
  pacer = pace.from_env()
end
function delay()
  return pacer and pacer:delay() or 0
end
function request()
  counter = counter + 1
  local customer = (tid * 7919 + counter) % customers
  local body = string.format('{"customer_number":"97%08d","points":1,"order_id":"%s-%d-%d","outlet_id":"o1"}', customer, run, tid, counter)
  return wrk.format("POST", path, {["Content-Type"] = "application/json", ["Authorization"] = token}, body)
end
