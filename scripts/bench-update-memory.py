#!/usr/bin/python3
"""Server memory through many updates of one large object.

Starts `arbiter serve` (SQLite store, the default), creates one Namespace carrying a 200 KiB
annotation, then replaces that annotation UPDATES times (default 100,000) over one keep-alive
connection while one watch follows every change, and samples the server's resident set size
(VmRSS) every 5% of the way. The watch history and the store are bounded by bytes and time, so the
resident set must level off instead of growing with the number of updates: the script exits 1 if
the last sample is more than 1.5x the sample a fifth of the way in.
Run: scripts/bench-update-memory.py [build/bin/arbiter] [UPDATES]
"""
import http.client
import json
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
import serve_e2e_test as e2e  # noqa: E402

ANNOTATION_BYTES = 200 * 1024


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def follow_watch(port):
    """A watch on namespaces whose stream is drained by a thread, as an informer would."""
    import threading
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /api/v1/namespaces?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n")
    seen = [0]

    def drain():
        while True:
            try:
                chunk = s.recv(1 << 20)
            except OSError:
                return
            if not chunk:
                return
            seen[0] += chunk.count(b'"MODIFIED"')
    threading.Thread(target=drain, daemon=True).start()
    return s, seen


def main():
    if len(sys.argv) > 1:
        e2e.ARBITER = sys.argv[1]
    updates = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        server = e2e.Server(tmp).start()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port)
            filler = "x" * ANNOTATION_BYTES
            body = {"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": "big", "annotations": {"payload": filler}}}
            conn.request("POST", "/api/v1/namespaces", json.dumps(body), {"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            assert r.status == 201, r.status
            watch, seen = follow_watch(server.port)
            samples = [(0, rss_mib(server.proc.pid))]
            step = max(1, updates // 20)
            start = time.time()
            for i in range(1, updates + 1):
                # A merge patch that changes the whole annotation (its first bytes carry the count).
                value = f"{i:010d}" + filler[10:]
                patch = json.dumps({"metadata": {"annotations": {"payload": value}}})
                conn.request("PATCH", "/api/v1/namespaces/big", patch,
                             {"Content-Type": "application/merge-patch+json"})
                r = conn.getresponse()
                r.read()
                if r.status != 200:
                    raise RuntimeError(f"update {i}: HTTP {r.status}")
                if i % step == 0:
                    samples.append((i, rss_mib(server.proc.pid)))
                    rate = i / (time.time() - start)
                    print(f"{i:>7} updates  server RSS {samples[-1][1]:7.1f} MiB  ({rate:.0f} updates/s, "
                          f"{seen[0]} seen by the watch)", flush=True)
            watch.close()
        finally:
            server.stop()
    peak = max(m for _, m in samples)
    fifth = next(m for i, m in samples if i >= updates // 5)
    last = samples[-1][1]
    print(f"RSS: start {samples[0][1]:.1f} MiB, after {updates // 5} updates {fifth:.1f} MiB, "
          f"peak {peak:.1f} MiB, end {last:.1f} MiB; {updates} updates of {ANNOTATION_BYTES // 1024} KiB "
          f"= {updates * ANNOTATION_BYTES / 2**30:.1f} GiB written")
    if last > 1.5 * fifth:
        print("FAIL: memory grows with the number of updates")
        sys.exit(1)


if __name__ == "__main__":
    main()
