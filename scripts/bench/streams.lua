-- wrk script: POST the JSON file named by BODY_FILE, its "COMPONENT" replaced per request by one of
-- 32 components (api-0 … api-31), so the events go to 32 log streams of one group, interleaved.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = assert(io.open(os.getenv("BODY_FILE"), "r"))
local template = file:read("*a")
file:close()
local n = 0
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, (template:gsub("COMPONENT", "api-" .. (n % 32))))
end
