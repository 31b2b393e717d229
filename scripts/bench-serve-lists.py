#!/usr/bin/env python3
"""`arbiter serve` at 50,000 pods under the requests users make: paged and field-selected lists,
concurrent full lists beside single-pod reads, and a client polling for unbound pods while pods
are created.

For each binary given (label=path; several to compare builds in one run) and each run: a fresh
`arbiter serve` on SQLite in a temporary directory, NODES nodes of 4 CPU / 32Gi, then

1. PODS pods of 100m / 500Mi (about 1.6 KB of JSON each) created over 16 keep-alive connections,
   waited for until all are bound;
2. MORE pods created the same way while a client lists the unbound pods
   (fieldSelector=spec.nodeName=) every 0.1 s: the lag is from the last create's answer to the
   first poll begun after it that finds none;
3. with PODS + MORE pods bound: the server's RSS (VmRSS) and peak (VmHWM);
4. GET /api/v1/pods?limit=500 followed through every continue token: pages, items, seconds;
5. the field-selected list that matches nothing, timed 5 times (median);
6. 8 concurrent GET /api/v1/pods (whole) while another client GETs one pod in a loop: the
   slowest single-pod GET, how long the 8 took, and how far RSS rose meanwhile;
7. the dashboard, then its explanation of a bound pod (its what-if over the whole cluster), as
   the page asks: the dashboard document once (it builds the dashboard's informers and decoded
   objects), then the explanation three times, each after a write so that none is answered from
   the last one: seconds of each and how far RSS rose during the dashboard and the explanations.

With --explain-only, steps 2 and 4-6 are left out (the MORE pods are created without a poller).
With --memory-only, only steps 1-3 are made.

Prints one JSON line per run on standard output, progress on standard error.

  scripts/bench-serve-lists.py [--runs 3] [--nodes 5000] [--pods 40000] [--more 10000] \\
      [--explain-only | --memory-only] after=build/bin/arbiter [before=/tmp/before/bin/arbiter]
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse


def log(msg):
    print(f"bench-serve-lists: {msg}", file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Client:
    """One keep-alive connection."""

    def __init__(self, port, timeout=600):
        self.port = port
        self.timeout = timeout
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def request(self, method, path, body=None):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(3):
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                return resp.status, raw
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
                if attempt == 2:
                    raise
        raise RuntimeError("unreachable")

    def json(self, method, path, body=None):
        status, raw = self.request(method, path, body)
        return status, (json.loads(raw) if raw else None)


def rss(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) // 1024  # MiB
    return out


def heap(c):
    """The server's heap in MiB from /metrics: what it holds, and what its allocator keeps for reuse."""
    status, raw = c.request("GET", "/metrics")
    out = {}
    if status == 200:
        for line in raw.decode().splitlines():
            for name, key in (("arbiter_heap_in_use_bytes", "heapInUseMiB"), ("arbiter_heap_held_free_bytes", "heapHeldFreeMiB")):
                if line.startswith(name + "{"):
                    out[key] = int(float(line.split()[-1]) / (1 << 20))
    return out


def node(i):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {"kubernetes.io/hostname": f"node-{i}"}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


def pod(name):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "labels": {"app": "bench", "tier": "web", "pod-template-hash": "5d8f9c7b6d"},
                         "annotations": {"bench.arbiter.dev/padding": "x" * 600}},
            "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                                   "limits": {"cpu": "100m", "memory": "500Mi"}}}]}}


def create_all(port, collection, objects, threads=16):
    """Creates `objects` over `threads` keep-alive connections; returns the time of the last answer."""
    chunks = [objects[i::threads] for i in range(threads)]
    errors = []

    def work(chunk):
        c = Client(port)
        for o in chunk:
            status, raw = c.request("POST", collection, o)
            if status != 201:
                errors.append(f"{status} {raw[:200]!r}")

    ts = [threading.Thread(target=work, args=(ch,)) for ch in chunks]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} creates failed, first: {errors[0]}")
    return time.monotonic()


def unbound(c):
    status, body = c.json("GET", "/api/v1/namespaces/default/pods?fieldSelector=" + urllib.parse.quote("spec.nodeName="))
    if status != 200:
        raise RuntimeError(f"unbound pods list: {status}")
    return len(body["items"])


def wait_bound(c, what, timeout=900):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        n = unbound(c)
        if n == 0:
            return
        time.sleep(1)
    raise RuntimeError(f"{what}: pods still unbound after {timeout} s")


def one_run(label, binary, args, run):
    d = tempfile.mkdtemp(prefix="bench-serve-lists-")
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", d],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(d, "serve.log"), "w"))
    try:
        c = Client(port)
        for _ in range(200):
            try:
                if c.request("GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        out = {"binary": label, "run": run, "nodes": args.nodes, "pods": args.pods + args.more}
        log(f"{label} run {run}: {args.nodes} nodes")
        create_all(port, "/api/v1/nodes", [node(i) for i in range(args.nodes)])
        log(f"{label} run {run}: {args.pods} pods")
        create_all(port, "/api/v1/namespaces/default/pods", [pod(f"p-{i}") for i in range(args.pods)])
        wait_bound(c, "initial pods")

        if args.explain_only:
            create_all(port, "/api/v1/namespaces/default/pods", [pod(f"q-{i}") for i in range(args.more)])
            wait_bound(c, "more pods")
            time.sleep(2)
            out.update({"rssMiB": rss(server.pid)["VmRSS"], "peakRssMiB": rss(server.pid)["VmHWM"]})
            out["explain"] = explain(c, server.pid, label, run)
            out["peakRssMiB"] = rss(server.pid)["VmHWM"]
            return out

        # 2. MORE pods while a client polls the unbound ones every 0.1 s.
        log(f"{label} run {run}: {args.more} more pods, a client polling unbound pods")
        state = {"last_create": None, "bound_at": None, "polls": 0, "stop": False}

        def poller():
            pc = Client(port)
            while not state["stop"]:
                began = time.monotonic()
                n = unbound(pc)
                state["polls"] += 1
                if state["last_create"] is not None and began > state["last_create"] and n == 0:
                    state["bound_at"] = time.monotonic()
                    return
                time.sleep(max(0.0, 0.1 - (time.monotonic() - began)))

        pt = threading.Thread(target=poller)
        pt.start()
        state["last_create"] = create_all(port, "/api/v1/namespaces/default/pods",
                                          [pod(f"q-{i}") for i in range(args.more)])
        pt.join(timeout=900)
        state["stop"] = True
        out["lagSeconds"] = round(state["bound_at"] - state["last_create"], 2) if state["bound_at"] else None
        out["polls"] = state["polls"]

        # 3. Memory with every pod bound.
        time.sleep(2)
        out.update({"rssMiB": rss(server.pid)["VmRSS"], "peakRssMiB": rss(server.pid)["VmHWM"]})
        out.update(heap(c))
        # ... and once it has settled: ten seconds with no writes from the benchmark.
        time.sleep(10)
        out["settledRssMiB"] = rss(server.pid)["VmRSS"]
        out.update({"settled" + k[0].upper() + k[1:]: v for k, v in heap(c).items()})
        if args.memory_only:
            return out

        # 4. Paging.
        log(f"{label} run {run}: paging with limit=500")
        began = time.monotonic()
        pages, items, token, biggest = 0, 0, "", 0
        while True:
            path = "/api/v1/pods?limit=500" + ("&continue=" + urllib.parse.quote(token) if token else "")
            status, raw = c.request("GET", path)
            if status != 200:
                raise RuntimeError(f"page {pages + 1}: {status} {raw[:200]!r}")
            body = json.loads(raw)
            pages += 1
            items += len(body["items"])
            biggest = max(biggest, len(raw))
            token = body["metadata"].get("continue", "")
            if not token:
                break
        out["paging"] = {"pages": pages, "items": items, "seconds": round(time.monotonic() - began, 2),
                         "largestPageBytes": biggest}

        # 5. The field-selected list that matches nothing.
        times = []
        for _ in range(5):
            began = time.monotonic()
            if unbound(c) != 0:
                raise RuntimeError("pods unbound after the lag phase")
            times.append(time.monotonic() - began)
        out["emptySelectedListMs"] = round(statistics.median(times) * 1000, 1)

        # 6. 8 concurrent full lists (curl processes), single-pod GETs meanwhile from a process of
        #    their own (no client lock shared with the lists), RSS sampled.
        log(f"{label} run {run}: 8 concurrent full lists")
        before = rss(server.pid)["VmRSS"]
        done = threading.Event()
        peak = [before]

        def sampler():
            while not done.is_set():
                peak.append(rss(server.pid)["VmRSS"])
                time.sleep(0.1)

        getter = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--single-gets", str(port)],
                                  stdout=subprocess.PIPE, text=True)
        sampling = threading.Thread(target=sampler)
        sampling.start()
        time.sleep(0.5)
        began = time.monotonic()
        outs = [os.path.join(d, f"list-{i}.json") for i in range(8)]
        listers = [subprocess.Popen(["curl", "-s", "-o", f, "-w", "%{http_code} %{time_total}",
                                     f"http://127.0.0.1:{port}/api/v1/pods"], stdout=subprocess.PIPE, text=True)
                   for f in outs]
        results = [p.communicate()[0].split() for p in listers]
        lists_took = time.monotonic() - began
        time.sleep(0.5)
        done.set()
        sampling.join()
        getter.send_signal(signal.SIGTERM)
        gets = json.loads(getter.communicate()[0])
        completed = 0
        for f, (code, _) in zip(outs, results):
            with open(f) as fh:
                if code == "200" and len(json.load(fh)["items"]) == args.pods + args.more:
                    completed += 1
            os.remove(f)
        out["concurrentLists"] = {"completed": completed, "seconds": round(lists_took, 2),
                                  "slowestListSeconds": round(max(float(t) for _, t in results), 2),
                                  "rssGrowthMiB": max(peak) - before,
                                  "singleGets": len(gets), "slowestGetMs": round(max(gets) * 1000, 1),
                                  "medianGetMs": round(statistics.median(gets) * 1000, 1)}
        out["explain"] = explain(c, server.pid, label, run)
        out["peakRssMiB"] = rss(server.pid)["VmHWM"]
        return out
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(d, ignore_errors=True)


def explain(c, pid, label, run):
    """Step 7: the explanation of the bound pod p-7, three times, a write before each."""
    log(f"{label} run {run}: explaining a bound pod")
    before = rss(pid)["VmRSS"]
    done = threading.Event()
    peak = [before]

    def sampler():
        while not done.is_set():
            peak.append(rss(pid)["VmRSS"])
            time.sleep(0.05)

    sampling = threading.Thread(target=sampler, daemon=True)
    sampling.start()
    began = time.monotonic()
    status, raw = c.request("GET", "/apis/arbiter.dev/v1alpha1/dashboard")
    dashboard_seconds = round(time.monotonic() - began, 3)
    if status != 200:
        done.set()
        raise RuntimeError(f"dashboard: {status} {raw[:300]!r}")
    time.sleep(0.2)
    dashboard_growth = max(peak) - before
    seconds = []
    for i in range(3):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"explain-{i}"}, "data": {"k": "v"}}
        status, raw = c.request("POST", "/api/v1/namespaces/default/configmaps", cm)
        if status != 201:
            raise RuntimeError(f"configmap: {status} {raw[:200]!r}")
        began = time.monotonic()
        status, raw = c.request("GET", "/apis/arbiter.dev/v1alpha1/namespaces/default/explanations/p-7")
        seconds.append(round(time.monotonic() - began, 3))
        if status != 200:
            raise RuntimeError(f"explanation: {status} {raw[:300]!r}")
        doc = json.loads(raw)
        if not doc.get("whatIf") or doc["cycles"][0]["result"] != "Scheduled":
            done.set()
            raise RuntimeError(f"explanation of a bound pod without its what-if: {raw[:300]!r}")
    done.set()
    sampling.join()
    return {"dashboardSeconds": dashboard_seconds, "dashboardRssGrowthMiB": dashboard_growth,
            "seconds": seconds, "rssGrowthMiB": max(peak) - before}


def single_gets(port):
    """GETs one pod every 20 ms until SIGTERM; prints the latencies (seconds) as JSON."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    c = Client(port)
    times = []
    while not stop:
        began = time.monotonic()
        status, _ = c.request("GET", "/api/v1/namespaces/default/pods/p-7")
        times.append(time.monotonic() - began)
        if status != 200:
            raise RuntimeError(f"single GET: {status}")
        time.sleep(0.02)
    print(json.dumps(times))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--single-gets":
        single_gets(int(sys.argv[2]))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=40000)
    p.add_argument("--more", type=int, default=10000)
    p.add_argument("--explain-only", action="store_true", help="only steps 1, 3 and 7")
    p.add_argument("--memory-only", action="store_true", help="only steps 1 to 3")
    p.add_argument("binaries", nargs="+", help="label=path of an arbiter binary")
    args = p.parse_args()
    binaries = []
    for b in args.binaries:
        label, _, path = b.partition("=")
        if not path:
            label, path = os.path.basename(b), b
        if not os.access(path, os.X_OK):
            p.error(f"{path}: not an executable")
        binaries.append((label, os.path.realpath(path)))
    for run in range(1, args.runs + 1):
        for label, path in binaries:  # interleaved, so that both see the machine alike
            print(json.dumps(one_run(label, path, args, run)), flush=True)


if __name__ == "__main__":
    main()
