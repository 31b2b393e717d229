#!/usr/bin/python3
"""Latency of one client's create-and-get while the HTTP edge holds many other connections.

Starts `arbiter serve` (memory store) on a free port, measures 200 create-and-get pairs with no
other connection (the baseline), then again while 1,000 watches, 500 idle keep-alive connections
and 64 half-sent requests are held open, and prints medians and p99 in milliseconds.
Run: scripts/bench-edge.py [build/bin/arbiter]
"""
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import serve_e2e_test as e2e  # noqa: E402


def measure(url, prefix, n=200):
    times = sorted(e2e.create_and_get(url, f"{prefix}-{i}") * 1000 for i in range(n))
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def main():
    if len(sys.argv) > 1:
        e2e.ARBITER = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        server = e2e.Server(tmp, extra=["--store", "memory", "--no-simulate-nodes"]).start()
        try:
            base = measure(server.url, "base")
            held = e2e.hold_connections(server.port, watches=1000, idle=500, slow=64)
            try:
                loaded = measure(server.url, "loaded")
            finally:
                for s in held:
                    s.close()
        finally:
            server.stop()
    print(f"create-and-get, no other connection:               median {base[0]:.2f} ms, p99 {base[1]:.2f} ms")
    print(f"create-and-get, 1000 watches + 500 idle + 64 slow: median {loaded[0]:.2f} ms, p99 {loaded[1]:.2f} ms")
    print(f"ratio of medians: {loaded[0] / base[0]:.2f}")


if __name__ == "__main__":
    main()
