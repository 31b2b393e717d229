#!/usr/bin/python3
"""The controller benchmark of `arbiter serve`: a Deployment scaled from 0 to REPLICAS on NODES
simulated nodes; the time from the scale until every replica is Running and available (the
Deployment's status says so), and the server's peak RSS. Each run starts a fresh server (SQLite
store, a temporary data directory, a free port). Prints one JSON line per run.

  scripts/bench-controllers.py [--nodes 5000] [--replicas 10000] [--runs 3] [--arbiter build/bin/arbiter]
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method, path, body=None, content_type="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        self.conn.request(method, path, body=data, headers={"Content-Type": content_type})
        r = self.conn.getresponse()
        payload = r.read()
        if r.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {r.status}: {payload[:300]!r}")
        return json.loads(payload or b"{}")


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_once(args, run):
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        log = open(os.path.join(data, "server.log"), "w")
        server = subprocess.Popen([args.arbiter, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data],
                                  stdout=log, stderr=log)
        try:
            deadline = time.time() + 30
            while True:
                try:
                    c = Client(port)
                    c.conn.request("GET", "/readyz")
                    if c.conn.getresponse().read().strip() == b"ok":
                        break
                except (OSError, RuntimeError, http.client.HTTPException):
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            print(f"bench-controllers: run {run}: creating {args.nodes} nodes", file=sys.stderr)
            for i in range(args.nodes):
                c.call("POST", "/api/v1/nodes", {
                    "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
                    "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                               "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"}}})
            path = "/apis/apps/v1/namespaces/default/deployments"
            c.call("POST", path, {
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "c", "image": "web:1",
                                                               "resources": {"requests": {"cpu": "100m"}}}]}}}})
            time.sleep(2)  # the nodes are initialised and the empty ReplicaSet made
            print(f"bench-controllers: run {run}: scaling to {args.replicas}", file=sys.stderr)
            start = time.time()
            c.call("PATCH", path + "/web/scale", {"spec": {"replicas": args.replicas}}, "application/merge-patch+json")
            last = -1
            while True:
                status = c.call("GET", path + "/web").get("status", {})
                available = status.get("availableReplicas", 0)
                if available != last and available % 1000 < 100:
                    print(f"bench-controllers: run {run}: {available} available after {time.time() - start:.1f} s",
                          file=sys.stderr)
                last = available
                if available >= args.replicas:
                    break
                if time.time() - start > args.timeout:
                    raise RuntimeError(f"only {available} of {args.replicas} available after {args.timeout} s")
                time.sleep(0.2)
            seconds = time.time() - start
            running = sum(1 for p in c.call("GET", "/api/v1/namespaces/default/pods")["items"]
                          if p.get("status", {}).get("phase") == "Running")
            return {"nodes": args.nodes, "replicas": args.replicas, "run": run, "secondsUntilAllAvailable": round(seconds, 2),
                    "podsPerSecond": round(args.replicas / seconds, 1), "running": running,
                    "peakRssMiB": round(peak_rss_mib(server.pid), 1)}
        finally:
            server.terminate()
            server.wait(timeout=60)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--replicas", type=int, default=10000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--arbiter", default="build/bin/arbiter")
    args = p.parse_args()
    args.arbiter = os.path.abspath(args.arbiter)
    for run in range(1, args.runs + 1):
        print(json.dumps(run_once(args, run)), flush=True)


if __name__ == "__main__":
    main()
