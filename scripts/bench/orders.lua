-- wrk script: POST single orders to /injestion/platform, each with a unique orderId, spread over
-- 50 brands (BRANDS=N: N brands) and 100,000 customers. NEW_CUSTOMERS=1: every order is from a new customer of one
-- brand, `brand-big` (scripts/bench-customers-memory.sh; CUSTOMER_BLOCK numbers the burst, so
-- phone numbers are 9 + block (4 digits) + wrk thread (2) + counter (4)).
package.path = "scripts/bench/?.lua;" .. package.path
local pace = require("pace")
local next_id = 0
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
end
function init(args)
  counter = 0
  run = os.getenv("RUN_ID") or "0"
  new_customers = os.getenv("NEW_CUSTOMERS") == "1"
  block = tonumber(os.getenv("CUSTOMER_BLOCK") or "0")
  -- REFUND=1: the same orders again, refunded as a whole (scripts/bench-refunds.sh)
  status = os.getenv("REFUND") == "1" and ',"status":3' or ''
  -- UPDATE=1: the same orders again with another amount (an order update)
  bump = os.getenv("UPDATE") == "1" and 1 or 0
  -- BRANDS=N: orders spread over N brands (default 50; scripts/bench-brands.sh)
  brands = tonumber(os.getenv("BRANDS") or "50")
  -- PACE_RATE=N: N orders/s over all threads (scripts/bench/pace.lua; bench-orders.sh's paced mode)
  pacer = pace.from_env()
end
function delay()
  return pacer and pacer:delay() or 0
end
function request()
  counter = counter + 1
  if new_customers then
    return order("brand-big", string.format("9%04d%02d%04d", block, tid, counter))
  end
  return order(string.format("brand-%d", (tid * 7919 + counter) % brands), string.format("98%08d", (tid * 100003 + counter) % 100000))
end
function order(brand, phone)
  local body = string.format(
    '{"parentBusinessId":"%s","businessId":"o1","orderId":"%s-%d-%d","customer":{"name":"Bench","phone":"%s"},"amount":%d.5,"orderTime":"2026-11-21 10:00:00"%s}',
    brand, run, tid, counter, phone, counter % 500 + bump, status)
  return wrk.format("POST", "/injestion/platform", {["Content-Type"] = "application/json"}, body)
end
