#!/usr/bin/env python3
"""Per-request latency as the wire saw it, from a tcpdump capture of a closed-loop HTTP/1.1 run.

    wire_latency.py CAPTURE.pcap SERVER_PORT

For every client connection, a request is a segment with payload towards SERVER_PORT and its
answer the next segment with payload back (one request in flight per connection, as wrk sends
without pipelining; engage's answers here are one segment each). Prints one line:

    wire n=<answers> mean=<ms> p50=<ms> p99=<ms> p99.9=<ms> max=<ms> busy=<s of s> stalls=<k>

`busy` is the sum of the latencies against connections x capture span: for a closed loop it
cannot exceed the span, which checks the pairing. A stall is a moment when every connection
waited at least 10 ms together (requests whose wait overlaps, at least one per connection).

Why this exists: wrk 4.1 adds synthetic samples to its latency histogram after the run (its
coordinated-omission correction, `stats_correct` in wrk.c), so its p99 counts a 200 ms stall as
some hundred slow requests. docs/benchmarks/10-issue-13-the-hot-paths-towards-their-floors.md, "Redemptions: where the p99 goes".
"""

import struct
import sys
from collections import Counter

STALL_MS = 10.0


def packets(path):
    """(time, source port, destination port, payload length) of each TCP/IPv4 packet."""
    with open(path, "rb") as f:
        header = f.read(24)
        magic = struct.unpack("<I", header[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            sys.exit(f"{path}: not a little-endian pcap file")
        scale = 1e9 if magic == 0xA1B23C4D else 1e6
        link = struct.unpack("<I", header[20:24])[0]
        offset = {0: 4, 1: 14, 113: 16, 276: 20}.get(link)
        if offset is None:
            sys.exit(f"{path}: link type {link} not handled")
        while True:
            record = f.read(16)
            if len(record) < 16:
                return
            seconds, fraction, captured, _ = struct.unpack("<IIII", record)
            data = f.read(captured)
            ip = data[offset:]
            if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
                continue
            ip_header = (ip[0] & 15) * 4
            total = struct.unpack(">H", ip[2:4])[0]
            tcp = ip[ip_header:]
            if len(tcp) < 13:
                continue
            source, destination = struct.unpack(">HH", tcp[:4])
            payload = total - ip_header - (tcp[12] >> 4) * 4
            yield seconds + fraction / scale, source, destination, payload


def percentile(values, p):
    return values[min(len(values) - 1, int(len(values) * p / 100))]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, port = sys.argv[1], int(sys.argv[2])
    sent = {}
    answers = []  # (client port, request time, answer time)
    first = last = None
    for time, source, destination, payload in packets(path):
        first = time if first is None else first
        last = time
        if payload <= 0:
            continue
        if destination == port:
            sent[source] = time
        elif source == port and destination in sent:
            answers.append((destination, sent.pop(destination), time))
    per_connection = Counter(client for client, _, _ in answers)
    # the load's connections, not a metrics scrape's one or two requests
    load = {client for client, n in per_connection.items() if n >= 10}
    answers = [a for a in answers if a[0] in load]
    if not answers:
        sys.exit(f"{path}: no request/answer pairs on port {port}")
    latencies = sorted((answer - request) * 1000 for _, request, answer in answers)
    span = last - first
    busy = sum(latencies) / 1000
    # stalls: overlapping waits of >= STALL_MS that cover every connection
    slow = sorted((request, answer, client) for client, request, answer in answers if (answer - request) * 1000 >= STALL_MS)
    stalls, group, end = 0, set(), None
    for request, answer, client in slow:
        if end is not None and request < end:
            group.add(client)
            end = max(end, answer)
        else:
            stalls += len(group) == len(load)
            group, end = {client}, answer
    stalls += len(group) == len(load)
    print(
        f"wire n={len(latencies)} mean={busy * 1000 / len(latencies):.2f}ms p50={percentile(latencies, 50):.2f}ms "
        f"p99={percentile(latencies, 99):.2f}ms p99.9={percentile(latencies, 99.9):.2f}ms max={latencies[-1]:.1f}ms "
        f"busy={busy:.0f}s/{len(load) * span:.0f}s stalls={stalls}"
    )


if __name__ == "__main__":
    main()
