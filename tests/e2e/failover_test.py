#!/usr/bin/python3
"""Failover of `arbiter serve` on etcd: a 3-member etcd cluster and 2 replicas on loopback.

1,000 pods are submitted through both replicas while the leader is killed with SIGKILL and,
separately, one etcd member is stopped. The other replica must take over within 20 s; afterwards
every acknowledged pod exists, no pod was ever bound twice (checked on etcd's own history of
the pods' keys), and every pod ends bound or reported unschedulable.
Run: failover_test.py ARBITER_BINARY
"""
import base64
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

ARBITER = os.environ.get("ARBITER_BINARY", "build/bin/arbiter")
ETCD = "/usr/bin/etcd"


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def post_json(url, body, timeout=5):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read() or b"{}")


class EtcdCluster:
    def __init__(self, tmp, members=3):
        ports = free_ports(2 * members)
        self.clients = [f"http://127.0.0.1:{ports[2 * i]}" for i in range(members)]
        self.peers = [f"http://127.0.0.1:{ports[2 * i + 1]}" for i in range(members)]
        initial = ",".join(f"m{i}={self.peers[i]}" for i in range(members))
        self.procs = []
        for i in range(members):
            log = open(os.path.join(tmp, f"etcd-{i}.log"), "w")
            self.procs.append(subprocess.Popen([
                ETCD, "--name", f"m{i}", "--data-dir", os.path.join(tmp, f"etcd-{i}"),
                "--listen-client-urls", self.clients[i], "--advertise-client-urls", self.clients[i],
                "--listen-peer-urls", self.peers[i], "--initial-advertise-peer-urls", self.peers[i],
                "--initial-cluster", initial, "--initial-cluster-state", "new",
                "--initial-cluster-token", "arbiter-failover-test"], stdout=log, stderr=log))
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if all(json.loads(get(c + "/health")[1]).get("health") == "true" for c in self.clients):
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise RuntimeError("the etcd cluster did not become healthy")

    def stop_member(self, i):
        self.procs[i].send_signal(signal.SIGTERM)
        self.procs[i].wait(timeout=20)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class Replica:
    def __init__(self, tmp, name, etcd):
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(tmp, f"{name}.log"), "w")
        self.proc = subprocess.Popen([ARBITER, "serve", "--listen", f"127.0.0.1:{self.port}", "--store", "etcd",
                                      "--etcd-servers", ",".join(etcd.clients), "--etcd-prefix", "/arbiter",
                                      "--identity", name, "--data-dir", os.path.join(tmp, f"{name}-data")],
                                     stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"replica {name} exited with {self.proc.returncode}; see {self.log.name}")
            # Its own "Serving" line, so that /livez is known to come from this process.
            with open(self.log.name) as f:
                serving = '"Serving"' in f.read()
            try:
                if serving and get(self.url + "/livez")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"replica {name} did not come up")

    def leader(self):
        try:
            text = get(self.url + "/metrics", timeout=2)[1].decode()
        except OSError:
            return False
        return 'leader_election_master_status{name="arbiter-scheduler"} 1' in text

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def node(i):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"},
            "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}}}


def pod(i):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
            "spec": {"terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "10m"}}}]}}


def wait_for(what, predicate, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = predicate()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class FailoverTest(unittest.TestCase):
    def test_the_other_replica_takes_over_and_nothing_is_lost_or_bound_twice(self):
        with tempfile.TemporaryDirectory() as tmp:
            etcd = EtcdCluster(tmp)
            replicas = []
            try:
                replicas = [Replica(tmp, "replica-a", etcd), Replica(tmp, "replica-b", etcd)]
                leader = wait_for("a leader", lambda: next((r for r in replicas if r.leader()), None), 30)
                other = replicas[1] if leader is replicas[0] else replicas[0]
                # 9 nodes of 1 CPU hold 900 pods of 10m; 100 stay pending, reported unschedulable.
                for i in range(9):
                    self.assertEqual(post_json(other.url + "/api/v1/nodes", node(i))[0], 201)
                acked = set()
                unacknowledged = set()  # created through a replica that died before answering
                lock = threading.Lock()

                def submit(start, step):
                    for i in range(start, 1000, step):
                        for _ in range(200):
                            target = replicas[(i + _) % 2]
                            try:
                                status, _body = post_json(target.url + "/api/v1/namespaces/default/pods", pod(i))
                                if status == 201:
                                    with lock:
                                        acked.add(f"p{i}")
                                break
                            except urllib.error.HTTPError as e:
                                if e.code == 409:  # created through a replica that died before answering
                                    with lock:
                                        unacknowledged.add(f"p{i}")
                                    break
                                time.sleep(0.05)
                            except OSError:
                                time.sleep(0.05)  # that replica is down or etcd is failing over: retry
                        time.sleep(0.01)

                threads = [threading.Thread(target=submit, args=(k, 2)) for k in range(2)]
                for t in threads:
                    t.start()
                wait_for("300 acknowledged pods", lambda: len(acked) >= 300, 60)
                killed_at = time.time()
                leader.proc.send_signal(signal.SIGKILL)
                leader.proc.wait()
                wait_for("the other replica to lead", other.leader, 20)
                takeover = time.time() - killed_at
                wait_for("600 acknowledged pods", lambda: len(acked) >= 600, 60)
                etcd.stop_member(2)
                for t in threads:
                    t.join(timeout=120)
                self.assertEqual(len(acked) + len(unacknowledged), 1000, "every pod was submitted")
                self.assertLessEqual(takeover, 20.0)

                def pods():
                    return {p["metadata"]["name"]: p for p in json.loads(
                        get(other.url + "/api/v1/namespaces/default/pods", timeout=10)[1])["items"]}

                def settled():
                    current = pods()
                    ok = all(p["spec"].get("nodeName") or any(
                        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                        for c in p["status"].get("conditions", [])) for p in current.values())
                    return current if ok else None

                current = wait_for("every pod bound or reported unschedulable", settled, 90)
                self.assertTrue(acked <= set(current), sorted(acked - set(current))[:10])
                self.assertEqual(len(current), 1000)
                bound = [p for p in current.values() if p["spec"].get("nodeName")]
                self.assertEqual(len(bound), 900)

                # etcd's history of every pod key: a pod's nodeName, once set, never changes.
                live = etcd.clients[0]
                key = base64.b64encode(b"/arbiter/pods/").decode()
                range_end = base64.b64encode(b"/arbiter/pods0").decode()
                status, head = post_json(live + "/v3/kv/range", {"key": key, "range_end": range_end, "keys_only": True})
                end_revision = max(int(kv.get("mod_revision", 0)) for kv in head.get("kvs", []))
                req = urllib.request.Request(live + "/v3/watch", method="POST", data=json.dumps(
                    {"create_request": {"key": key, "range_end": range_end, "start_revision": 1}}).encode(),
                    headers={"Content-Type": "application/json"})
                nodes_of = {}
                # The watch replays every revision of the pods' keys, then waits: read until all
                # revisions up to the range's are in, or until it has been quiet for 5 s.
                with urllib.request.urlopen(req, timeout=5) as stream:
                    last = 0
                    while last < end_revision:
                        try:
                            line = stream.readline()
                        except (TimeoutError, socket.timeout):
                            break
                        if not line:
                            break
                        result = json.loads(line).get("result", {})
                        for ev in result.get("events", []):
                            kv = ev["kv"]
                            last = max(last, int(kv.get("mod_revision", 0)))
                            if ev.get("type") == "DELETE":
                                continue
                            name = base64.b64decode(kv["key"]).decode().rsplit("/", 1)[1]
                            body = json.loads(base64.b64decode(kv["value"]))
                            n = body.get("spec", {}).get("nodeName", "")
                            seen = nodes_of.setdefault(name, [])
                            if n and (not seen or seen[-1] != n):
                                seen.append(n)
                            elif not n and seen:
                                seen.append("")
                twice = {n: s for n, s in nodes_of.items() if len(s) > 1}
                self.assertEqual(twice, {}, "pods bound more than once")
                self.assertEqual(sum(1 for s in nodes_of.values() if s), 900)
                print(f"takeover after {takeover:.1f} s; {len(acked)} pods acknowledged "
                      f"({len(unacknowledged)} created without an answer), {len(bound)} bound",
                      file=sys.stderr)
            finally:
                for r in replicas:
                    r.close()
                etcd.close()


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        ARBITER = sys.argv.pop(1)
    unittest.main(verbosity=2)
