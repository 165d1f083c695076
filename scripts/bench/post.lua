-- wrk script: POST the JSON file named by BODY_FILE to the URL given on the command line.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.body = file:read("*a")
file:close()
