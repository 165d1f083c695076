#!/usr/bin/env python3
"""The disk's durable-write round trip, as the log's segment appender pays it.

Each case writes small records into a file whose first 64 MiB were written with zeros and synced
beforehand (as the segment log keeps zeros ahead of its last block), for SECONDS each (going round the 64 MiB again when they reach its end), and prints
operations per second and the latency of one operation (mean, p50, p99, in microseconds):

- `buffered+fdatasync, N thread(s)`: a 600-byte `pwrite` then `fdatasync`, what one group commit
  of the appender does; with 2 threads, two such syncs are in flight at once (do they overlap on
  the device, or queue?);
- `direct write`: one 4 KiB `O_DIRECT` write, no sync (one round trip to the device);
- `direct write+fdatasync`: the same followed by `fdatasync` (the write, then the cache flush).

    scripts/bench/disk_sync.py [DIR=target] [SECONDS=3]

Used by BENCHMARKS.md ("Log ingestion", single events: the bound set by the disk).
"""

import mmap
import os
import statistics
import sys
import threading
import time

directory = sys.argv[1] if len(sys.argv) > 1 else "target"
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
path = os.path.join(directory, "disk-sync-bench.dat")
ZEROED = 64 << 20
RECORD = b"x" * 600


def zeroed_file():
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    chunk = b"\0" * (1 << 20)
    for offset in range(0, ZEROED, len(chunk)):
        os.pwrite(fd, chunk, offset)
    os.fsync(fd)
    os.close(fd)


def report(name, latencies):
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"{name}: ops/s={len(latencies) / seconds:.0f} mean_us={1e6 * statistics.fmean(latencies):.0f} "
        f"p50_us={1e6 * statistics.median(latencies):.0f} p99_us={1e6 * p99:.0f}"
    )


def buffered(threads):
    zeroed_file()
    fd = os.open(path, os.O_RDWR)
    lock = threading.Lock()
    next_offset = [0]
    latencies = [[] for _ in range(threads)]
    stop = time.monotonic() + seconds

    def work(mine):
        while time.monotonic() < stop:
            with lock:
                offset = next_offset[0]
                next_offset[0] = (offset + len(RECORD)) % (ZEROED - len(RECORD))
            started = time.perf_counter()
            os.pwrite(fd, RECORD, offset)
            os.fdatasync(fd)
            mine.append(time.perf_counter() - started)

    workers = [threading.Thread(target=work, args=(latencies[i],)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    os.close(fd)
    report(f"buffered+fdatasync, {threads} thread(s)", [x for mine in latencies for x in mine])


def direct(sync):
    zeroed_file()
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    block = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT needs
    block.write(b"x" * 4096)
    latencies = []
    offset = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        started = time.perf_counter()
        os.pwritev(fd, [block], offset)
        if sync:
            os.fdatasync(fd)
        latencies.append(time.perf_counter() - started)
        offset = (offset + 4096) % ZEROED
    os.close(fd)
    report("direct write+fdatasync" if sync else "direct write", latencies)


try:
    buffered(1)
    buffered(2)
    direct(False)
    direct(True)
    buffered(1)
finally:
    if os.path.exists(path):
        os.remove(path)
