-- wrk script: POST one NPS answer per request to /crm_api/nps/data, each from another customer
-- (mobileNo counts up per thread), so every request writes a new response.
local counter = 0
local thread_id = 0
function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
end
function request()
  counter = counter + 1
  local body = string.format(
    '{"parentBusinessId":"brand-nps","businessId":"o%d","mobileNo":"9%09d","rating":%d,"order_id":"n-%d","questions":[{"q":"Why?","a":"Food"}]}',
    counter % 20, (id or 0) * 100000000 + counter, counter % 11, counter)
  return wrk.format("POST", "/crm_api/nps/data", {["Content-Type"] = "application/json"}, body)
end
