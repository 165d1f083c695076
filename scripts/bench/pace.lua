-- A set rate for wrk, as wrk2's `-R` holds one: PACE_RATE=N requests per second over all of wrk's
-- threads (THREADS=T: the `-t` given to wrk, default 2). Each thread hands out send times
-- 1/(N/T) s apart; a connection free before its time waits for it, one free after it sends at
-- once, so a slow answer delays the requests behind it instead of lowering the rate (the
-- schedule never slips by more than a second: past that it restarts from now). The rate a run
-- reached is still what wrk reports: a server that cannot keep up shows as less than PACE_RATE.
--
--   package.path = "scripts/bench/?.lua;" .. package.path
--   local pace = require("pace")
--   function init(args) pacer = pace.from_env() end      -- nil without PACE_RATE
--   function delay() return pacer and pacer:delay() or 0 end
local ffi = require("ffi")
pcall(ffi.cdef, [[
  typedef struct { long tv_sec; long tv_nsec; } engage_pace_timespec;
  int clock_gettime(int clk_id, engage_pace_timespec *tp);
]])
local CLOCK_MONOTONIC = 1
local now_buffer = ffi.new("engage_pace_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, now_buffer)
  return tonumber(now_buffer.tv_sec) * 1000 + tonumber(now_buffer.tv_nsec) / 1e6
end

local Pacer = {}
Pacer.__index = Pacer

-- The pacer of one wrk thread; nil when PACE_RATE is unset or 0.
local function from_env()
  local rate = tonumber(os.getenv("PACE_RATE") or "0")
  if rate <= 0 then
    return nil
  end
  local threads = tonumber(os.getenv("THREADS") or "2")
  return setmetatable({ interval = 1000 * threads / rate, next_at = nil }, Pacer)
end

-- Milliseconds the connection asking waits before its next request.
function Pacer:delay()
  local now = now_ms()
  if self.next_at == nil or self.next_at < now - 1000 then
    self.next_at = now
  end
  local wait = self.next_at - now
  self.next_at = self.next_at + self.interval
  if wait <= 0 then
    return 0
  end
  return math.floor(wait + 0.5)
end

return { from_env = from_env, now_ms = now_ms }
