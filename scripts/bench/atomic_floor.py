#!/usr/bin/env python3
"""What one write costs nats-server, without engage: a lone atomic batch (ADR-50) of 1, 3 and 50
KV messages against as many plain publishes awaited together, on a KV-like stream (one value per
subject) of REPLICAS replicas. The floor under a redemption's commit (docs/benchmarks/34-...).

    python3 scripts/bench/atomic_floor.py NATS_URL REPLICAS [ROUNDS=300]

Needs nats-py (`pip install nats-py`); the stream KV_floor is made (and replaced) on the server.
"""
import asyncio
import json
import sys
import time

import nats


async def main(url: str, replicas: int, rounds: int) -> None:
    nc = await nats.connect(url)
    try:
        await nc.request("$JS.API.STREAM.DELETE.KV_floor", b"", timeout=10)
    except Exception:
        pass
    config = {"name": "KV_floor", "subjects": ["$KV.floor.>"], "max_msgs_per_subject": 1, "allow_atomic": True,
              "num_replicas": replicas, "allow_direct": True, "storage": "file"}
    answer = json.loads((await nc.request("$JS.API.STREAM.CREATE.KV_floor", json.dumps(config).encode(), timeout=10)).data)
    assert "error" not in answer, answer
    value = b"x" * 500

    async def atomic(n: int, batch: str) -> None:
        for k in range(n):
            headers = {"Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(k + 1)}
            if k == n - 1:
                headers["Nats-Batch-Commit"] = "1"
                reply = json.loads((await nc.request(f"$KV.floor.k{k}", value, headers=headers, timeout=5)).data)
                assert "error" not in reply, reply
            else:
                await nc.publish(f"$KV.floor.k{k}", value, headers=headers)

    async def plain(n: int, _batch: str) -> None:
        await asyncio.gather(*[nc.request(f"$KV.floor.k{k}", value, timeout=5) for k in range(n)])

    for name, write in (("atomic batch", atomic), ("plain publishes", plain)):
        for n in (1, 3, 50):
            took = []
            for i in range(rounds):
                started = time.perf_counter()
                await write(n, f"{name[0]}{n}-{i}-{time.time_ns()}")
                took.append((time.perf_counter() - started) * 1000)
            took.sort()
            q = lambda p: took[min(len(took) - 1, int(len(took) * p))]
            print(f"replicas={replicas} {name} of {n}: p50={q(0.5):.2f} ms p90={q(0.9):.2f} ms p99={q(0.99):.2f} ms")
    await nc.request("$JS.API.STREAM.DELETE.KV_floor", b"", timeout=10)
    await nc.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 300))
