-- wrk script: POST the file named by BODY_FILE (bytes as they are) to the URL given on the
-- command line, as CONTENT_TYPE (default application/json).
wrk.method = "POST"
wrk.headers["Content-Type"] = os.getenv("CONTENT_TYPE") or "application/json"
local file = assert(io.open(os.getenv("BODY_FILE"), "rb"))
wrk.body = file:read("*a")
file:close()
