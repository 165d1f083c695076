-- wrk script: POST single orders to /injestion/platform, each with a unique orderId, spread over
-- 50 brands and 100,000 customers.
local threads = {}
local next_id = 0
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end
function init(args)
  counter = 0
  run = os.getenv("RUN_ID") or "0"
end
function request()
  counter = counter + 1
  local body = string.format(
    '{"parentBusinessId":"brand-%d","businessId":"o1","orderId":"%s-%d-%d","customer":{"name":"Bench","phone":"98%08d"},"amount":%d.5,"orderTime":"2026-11-21 10:00:00"}',
    counter % 50, run, tid, counter, (tid * 100003 + counter) % 100000, counter % 500)
  return wrk.format("POST", "/injestion/platform", {["Content-Type"] = "application/json"}, body)
end
