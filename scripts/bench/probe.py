"""A latency probe: GET `path` on loopback `port` about every 5 ms for `seconds`, one request at
a time on one connection; prints p50, p99, max and the first requests slower than 20 ms (seconds
into the probe, ms). Run beside a load to tell a stall of the whole server (every probe slow at
once) from one of the loaded requests only.

    python3 scripts/bench/probe.py PORT PATH SECONDS
"""
import http.client
import sys
import time

port, path, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
latencies, stalls = [], []
start = time.perf_counter()
while time.perf_counter() < start + seconds:
    sent = time.perf_counter()
    connection.request("GET", path)
    connection.getresponse().read()
    ms = (time.perf_counter() - sent) * 1000
    latencies.append(ms)
    if ms > 20:
        stalls.append((round(sent - start, 2), round(ms, 1)))
    time.sleep(0.005)
latencies.sort()
print(f"probe {path}: n={len(latencies)} p50={latencies[len(latencies) // 2]:.2f}ms "
      f"p99={latencies[int(len(latencies) * 0.99)]:.2f}ms max={latencies[-1]:.1f}ms "
      f"over_20ms={len(stalls)} first={stalls[:8]}")
