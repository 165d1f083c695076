-- wrk script: POST single orders for one brand, each from a new customer (phone numbers counted up
-- from 9100000000 per thread block), so the brand's customer count grows with every request.
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
    '{"parentBusinessId":"brand-big","businessId":"o1","orderId":"%s-%d-%d","customer":{"name":"Bench","phone":"9%d%08d"},"amount":%d.5,"orderTime":"2026-11-21 10:00:00"}',
    run, tid, counter, tid + 1, counter, counter % 500)
  return wrk.format("POST", "/injestion/platform", {["Content-Type"] = "application/json"}, body)
end
