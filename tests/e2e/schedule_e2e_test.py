#!/usr/bin/python3
"""End-to-end tests of `arbiter schedule`: the scheduler run against a Kubernetes API server, here
`arbiter serve --no-scheduler` (the API, the simulated nodes and the controllers, no scheduler),
with the stock kubectl creating the workload.

Covered: the preemption story (victims patched with DisruptionTarget then deleted, the
preemptor nominated then bound), checked against the calls kube-scheduler makes for it
(docs/kube-scheduler-calls.md) and against `arbiter serve`'s own decisions on the same input; a
PodGroup gang; profiles by schedulerName; leader failover between two schedulers; an API server
restart mid-run (watches resume or relist, no pod bound twice); health and metrics.

With ARBITER_E2E_API=upstream, the same tests run against the real kube-apiserver v1.37.2 (with
etcd, kube-controller-manager and `arbiter nodes` as the kubelets: scripts/upstream-cluster.sh,
which needs Go), and the requests Arbiter sends are checked to be the same as against serve.

Run: schedule_e2e_test.py ARBITER_BINARY
"""
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_e2e_test  # noqa: E402  (the Server harness)
from serve_e2e_test import Server, ServeTestCase, free_port  # noqa: E402

UPSTREAM = os.environ.get("ARBITER_E2E_API", "serve") == "upstream"
if os.environ.get("ARBITER_E2E_API", "serve") not in ("serve", "upstream"):
    sys.exit("ARBITER_E2E_API: serve or upstream, not " + os.environ["ARBITER_E2E_API"])
CLUSTER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "upstream-cluster.sh")


class UpstreamServer:
    """The real kube-apiserver of scripts/upstream-cluster.sh (etcd, kube-controller-manager and
    `arbiter nodes` beside it), in the test's directory, with Server's face: start, stop, kill and
    restart, the URL, the log's end."""

    def __init__(self, data_dir, scheduler="none"):
        self.data_dir = data_dir
        self.dir = os.path.join(data_dir, "upstream")
        self.scheduler = scheduler

    def _script(self, *args):
        r = subprocess.run([CLUSTER_SCRIPT, *args, "--dir", self.dir], capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"upstream-cluster.sh {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
        return r.stdout

    def start(self):
        self._script("up", "--arbiter", serve_e2e_test.ARBITER, "--scheduler", self.scheduler)
        env = dict(line.split("=", 1) for line in self._script("env").splitlines() if "=" in line)
        self.port = int(env["API_PORT"])
        self.token = env["ADMIN_TOKEN"]
        self.url = f"https://127.0.0.1:{self.port}"
        # Where the tests look for the administrator's kubeconfig, as serve writes it.
        with open(os.path.join(self.dir, "kubeconfig")) as f, open(os.path.join(self.data_dir, "kubeconfig"), "w") as g:
            g.write(f.read())
        return self

    def stop_component(self, component):
        self._script("stop", component)

    def restart(self, component="kube-apiserver"):
        """Kills the component (SIGKILL) and starts it again on the same port, data kept."""
        self._script("restart", component, "--kill")

    def log_tail(self, lines=30):
        out = ""
        for name in ("kube-apiserver", "arbiter-nodes", "kube-controller-manager"):
            path = os.path.join(self.dir, f"{name}.log")
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out += f"\n--- {name}:\n" + "".join(f.readlines()[-lines:])
        return out

    def stop(self):
        self._script("down")


# serve's test cluster (one 4-CPU node, classes low and high) and a class between them.
CLUSTER = serve_e2e_test.CLUSTER + """
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: mid}
value: 200
"""


def pod_yaml(name, cls, cpu, scheduler=None, grace=2, group=None):
    extra = f"\n  schedulerName: {scheduler}" if scheduler else ""
    if group:
        extra += f"\n  schedulingGroup: {{podGroupName: {group}}}"
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  priorityClassName: {cls}
  terminationGracePeriodSeconds: {grace}{extra}
  containers: [{{name: main, image: registry.k8s.io/pause:3.10, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


class Scheduler:
    """An `arbiter schedule` process against a server's kubeconfig."""

    def __init__(self, kubeconfig, workdir, name, extra=(), lease=("3", "2", "0.5")):
        self.port = free_port()
        self.request_log = os.path.join(workdir, f"{name}.requests")
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            [serve_e2e_test.ARBITER, "schedule", "--kubeconfig", kubeconfig, "--bind-address", "127.0.0.1",
             "--secure-port", str(self.port), "--cert-dir", os.path.join(workdir, f"{name}-certs"),
             "--request-log", self.request_log, "--request-log-bodies", "--identity", name, "--seed", "1",
             "--leader-elect-lease-duration", lease[0], "--leader-elect-renew-deadline", lease[1],
             "--leader-elect-retry-period", lease[2]] + list(extra),
            stdout=self.log, stderr=self.log)

    def get(self, path):
        ctx = ssl._create_unverified_context()
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}{path}", timeout=2, context=ctx) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except (urllib.error.URLError, ConnectionError, OSError):
            return 0, ""

    def leading(self):
        code, text = self.get("/metrics")
        return code == 200 and 'leader_election_master_status{name="arbiter-scheduler"} 1' in text

    def requests(self):
        # A scheduler that has sent nothing yet (a standby) has not created its log.
        if not os.path.exists(self.request_log):
            return []
        with open(self.request_log) as f:
            return [line.rstrip("\n").split("\t", 1)[0] for line in f]

    def writes_with_bodies(self):
        """The writes to pods, each with its body (JSON), made comparable across servers: uids,
        resourceVersions and times replaced by placeholders."""
        def scrub(v, key=""):
            if isinstance(v, dict):
                return {k: scrub(x, k) for k, x in v.items()}
            if isinstance(v, list):
                return [scrub(x) for x in v]
            if key in ("uid", "resourceVersion") or key.endswith("Time") or key.endswith("Timestamp"):
                return f"<{key}>"
            return v
        out = []
        with open(self.request_log) as f:
            for line in f:
                head, _, body = line.rstrip("\n").partition("\t")
                if head in writes([head]):
                    out.append((head, scrub(json.loads(body)) if body.startswith("{") else body))
        return out

    def log_tail(self, lines=30):
        with open(self.log_path) as f:
            return "".join(f.readlines()[-lines:])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        try:
            serve_e2e_test.stop_process(self.proc)
        finally:
            self.log.close()


def writes(requests):
    """The requests that change pods (what the scheduler decided), in order."""
    return [r for r in requests if r.split(" ")[0] in ("POST", "PATCH", "PUT", "DELETE") and "/pods/" in r]


class ScheduleTestCase(ServeTestCase):
    scheduler_flags = ()
    serve_flags = ["--no-scheduler"]

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.server = (UpstreamServer(self.tmp.name) if UPSTREAM else Server(self.tmp.name, extra=self.serve_flags)).start()
        self.kubeconfig = os.path.join(self.tmp.name, "kubeconfig")
        self.schedulers = []

    def restart_api_server(self):
        """The API server killed and started again on its port, its store kept."""
        if UPSTREAM:
            self.server.restart("kube-apiserver")
            return
        self.server.kill()
        time.sleep(1)
        self.server = Server(self.tmp.name, port=self.server.port, extra=self.serve_flags).start()

    def bind_by_hand(self, pod, node):
        """A Binding posted as a client would (kubectl's own credentials)."""
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
                   "target": {"kind": "Node", "name": node}}
        return self.kubectl("create", "--raw", f"/api/v1/namespaces/default/pods/{pod}/binding", "-f", "-",
                            stdin=json.dumps(binding))

    lease = ("3", "2", "0.5")  # seconds: duration, renew deadline, retry period (short, for failover)

    def start_scheduler(self, name="arbiter-1", extra=None):
        s = Scheduler(self.kubeconfig, self.tmp.name, name, self.scheduler_flags if extra is None else extra,
                      lease=self.lease)
        self.schedulers.append(s)
        self.wait_for(f"{name} to lead", s.leading, timeout=20)
        return s

    def tearDown(self):
        for s in self.schedulers:
            s.stop()
        self.server.stop()
        self.tmp.cleanup()

    def failure_context(self):
        logs = "".join(f"\n--- {s.log_path}:\n{s.log_tail()}" for s in self.schedulers)
        return f"\n--- server:\n{self.server.log_tail()}{logs}"

    def pods(self):
        return {p["metadata"]["name"]: p for p in json.loads(self.kubectl("get", "pods", "-o", "json").stdout)["items"]}

    def node_of(self, name):
        p = self.pods().get(name)
        return p and p["spec"].get("nodeName")

    def events(self, reason):
        items = json.loads(self.kubectl("get", "events", "-o", "json").stdout)["items"]
        return [e for e in items if e["reason"] == reason]


def preemption_story(case):
    """Two pods fill the node; a third of higher priority preempts the lower of them. Returns the
    placements and the victims."""
    case.apply(CLUSTER)
    case.apply(pod_yaml("low-1", "low", "2"))
    case.wait_for("low-1 bound", lambda: case.node_of("low-1"))
    case.apply(pod_yaml("mid-1", "mid", "2"))
    case.wait_for("mid-1 bound", lambda: case.node_of("mid-1"))
    case.apply(pod_yaml("high-1", "high", "2"))
    # The victim carries DisruptionTarget while it terminates.
    victim = case.wait_for("a victim", lambda: next(
        (p for p in case.pods().values() if p["metadata"].get("deletionTimestamp")), None))
    conditions = {c["type"]: c for c in victim["status"].get("conditions", [])}
    case.assertEqual(conditions["DisruptionTarget"]["reason"], "PreemptionByScheduler")
    case.wait_for("high-1 bound", lambda: case.node_of("high-1"), timeout=30)
    pods = case.pods()
    return {n: p["spec"].get("nodeName") for n, p in pods.items()}, victim["metadata"]["name"]


class PreemptionTest(ScheduleTestCase):
    def test_the_preemption_story_makes_kube_schedulers_calls_and_serves_decisions(self):
        s = self.start_scheduler()
        placed, victim = preemption_story(self)
        self.assertEqual(victim, "low-1")
        self.assertEqual(placed, {"mid-1": "node-1", "high-1": "node-1"})
        # The calls kube-scheduler makes for this story (docs/kube-scheduler-calls.md).
        base = "/api/v1/namespaces/default/pods/"
        self.assertEqual(writes(s.requests()), [
            f"POST {base}low-1/binding",
            f"POST {base}mid-1/binding",
            f"PATCH {base}low-1/status",    # the victim's DisruptionTarget condition
            f"DELETE {base}low-1",          # then its deletion (its own grace period)
            f"PATCH {base}high-1/status",   # the preemptor: nominatedNodeName, PodScheduled False
            f"POST {base}high-1/binding",
        ])
        requests = s.requests()
        # Reads are lists and watches (resumable, with bookmarks), never one object at a time.
        for r in requests:
            method, target = r.split(" ", 1)
            if method == "GET" and "/leases/" not in target and target not in ("/version", "/apis/events.k8s.io/v1"):
                self.assertTrue("limit=500" in target or ("watch=true" in target and "allowWatchBookmarks=true" in target),
                                r)
        # Events: Scheduled for each bound pod, FailedScheduling and Preempted.
        reasons = {(e["reason"], e["involvedObject"]["name"]) for e in self.events("Scheduled") +
                   self.events("Preempted") + self.events("FailedScheduling")}
        self.assertTrue({("Scheduled", "low-1"), ("Scheduled", "mid-1"), ("Scheduled", "high-1"),
                         ("Preempted", "low-1"), ("FailedScheduling", "high-1")} <= reasons, reasons)
        # Through events.k8s.io/v1, which the server serves: read back in that version too.
        self.assertIn("POST /apis/events.k8s.io/v1/namespaces/default/events", requests)
        v1 = json.loads(self.kubectl("get", "events.v1.events.k8s.io", "-o", "json").stdout)["items"]
        preempted = [e for e in v1 if e["reason"] == "Preempted"]
        self.assertEqual(len(preempted), 1, v1)
        self.assertEqual((preempted[0]["action"], preempted[0]["regarding"]["name"], preempted[0]["reportingController"]),
                         ("Preempting", "low-1", "default-scheduler"))
        self.assertTrue(preempted[0]["note"].startswith("Preempted by pod "), preempted[0])
        if UPSTREAM:
            # The same story against `arbiter serve --no-scheduler`: the same requests, with the
            # same bodies (uids, versions and times aside).
            with tempfile.TemporaryDirectory() as d:
                own = Server(d, extra=["--no-scheduler"]).start()
                try:
                    other = ScheduleTestCase("setUp")
                    other.kubeconfig = os.path.join(d, "kubeconfig")
                    other.server = own
                    other.schedulers = []
                    s2 = Scheduler(other.kubeconfig, d, "arbiter-on-serve", ())
                    try:
                        self.wait_for("the scheduler on serve to lead", s2.leading, timeout=20)
                        self.assertEqual(preemption_story(other), (placed, victim))
                        self.assertEqual(s2.writes_with_bodies(), s.writes_with_bodies())
                    finally:
                        s2.stop()
                finally:
                    own.stop()
        # The same story on serve's own scheduler decides the same.
        with tempfile.TemporaryDirectory() as d:
            own = Server(d).start()
            try:
                other = ScheduleTestCase("setUp")
                other.kubeconfig = os.path.join(d, "kubeconfig")
                other.server = own
                other.schedulers = []
                self.assertEqual(preemption_story(other), (placed, victim))
            finally:
                own.stop()

    def test_health_and_metrics_are_served_on_the_secure_port(self):
        s = self.start_scheduler()
        self.assertEqual(s.get("/healthz")[0], 200)
        # Ready once the first scheduling pass has run (kube-scheduler's sched-handler-sync).
        self.wait_for("/readyz", lambda: s.get("/readyz")[0] == 200)
        code, text = s.get("/readyz?verbose")
        self.assertEqual(code, 200)
        self.assertIn("[+]sched-handler-sync ok", text)
        self.apply(CLUSTER)
        self.apply(pod_yaml("p", "low", "1"))
        self.wait_for("p bound", lambda: self.node_of("p"))
        code, text = s.get("/metrics")
        self.assertIn('scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1', text)
        self.assertEqual(s.get("/api/v1/pods")[0], 404)  # the API is the server's, not the scheduler's


class ProtobufTest(ScheduleTestCase):
    """The scheduler asking for protobuf, as kube-scheduler does by default: the server answers
    its lists, gets and watches in protobuf, and takes its bindings in protobuf."""
    scheduler_flags = ("--kube-api-content-type", "application/vnd.kubernetes.protobuf")

    def test_the_preemption_story_in_protobuf(self):
        self.start_scheduler()
        placed, victim = preemption_story(self)
        self.assertEqual((placed, victim), ({"mid-1": "node-1", "high-1": "node-1"}, "low-1"))


class GangTest(ScheduleTestCase):
    def test_a_pod_group_is_scheduled_all_or_nothing(self):
        self.start_scheduler()
        self.apply(CLUSTER)
        self.apply("""
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: trainer, namespace: default}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
  priorityClassName: low
""")
        # Two of three members: the gang waits (its quorum is three).
        for i in range(2):
            self.apply(pod_yaml(f"trainer-{i}", "low", "1", group="trainer"))
        time.sleep(3)
        self.assertFalse(any(self.node_of(f"trainer-{i}") for i in range(2)))
        self.apply(pod_yaml("trainer-2", "low", "1", group="trainer"))
        self.wait_for("the whole gang bound", lambda: all(self.node_of(f"trainer-{i}") for i in range(3)))
        self.wait_for("PodGroupInitiallyScheduled True", lambda: any(
            c["type"] == "PodGroupInitiallyScheduled" and c["status"] == "True"
            for c in json.loads(self.kubectl("get", "podgroups.scheduling.k8s.io", "trainer", "-o", "json").stdout)
            .get("status", {}).get("conditions", [])))


class ProfileTest(ScheduleTestCase):
    scheduler_flags = ("--scheduler-name", "arbiter")

    def test_pods_of_other_schedulers_take_room_but_are_never_scheduled(self):
        self.start_scheduler()
        self.apply(CLUSTER)
        # A pod of the default scheduler (absent here) waits; one bound by hand takes room.
        self.apply(pod_yaml("theirs", "low", "1"))
        self.apply(pod_yaml("bound-by-hand", "low", "3", scheduler="other"))
        self.bind_by_hand("bound-by-hand", "node-1")
        self.apply(pod_yaml("ours", "low", "1", scheduler="arbiter"))
        self.apply(pod_yaml("ours-too-big", "low", "2", scheduler="arbiter"))
        self.wait_for("ours bound", lambda: self.node_of("ours"))
        self.wait_for("ours-too-big unschedulable", lambda: any(
            e["involvedObject"]["name"] == "ours-too-big" for e in self.events("FailedScheduling")))
        self.assertIsNone(self.node_of("ours-too-big"))
        self.assertIsNone(self.node_of("theirs"))
        self.assertFalse(any(e["involvedObject"]["name"] == "theirs" for e in self.events("FailedScheduling")))
        # Events name the profile's scheduler.
        scheduled = [e for e in self.events("Scheduled") if e["involvedObject"]["name"] == "ours"]
        self.assertEqual(scheduled[0]["reportingComponent"], "arbiter")


class FailoverTest(ScheduleTestCase):
    def test_a_standby_takes_over_when_the_leader_dies_and_nothing_is_bound_twice(self):
        first = self.start_scheduler("arbiter-1")
        second = Scheduler(self.kubeconfig, self.tmp.name, "arbiter-2", ())
        self.schedulers.append(second)
        time.sleep(1.5)
        self.assertFalse(second.leading())
        self.assertEqual(writes(second.requests()), [])
        self.apply(CLUSTER)
        self.apply("".join(pod_yaml(f"a-{i}", "low", "100m") + "---" for i in range(10)))
        self.wait_for("a-* bound", lambda: all(self.node_of(f"a-{i}") for i in range(10)))
        first.kill()
        self.apply("".join(pod_yaml(f"b-{i}", "low", "100m") + "---" for i in range(10)))
        self.wait_for("the standby to lead", second.leading, timeout=20)
        self.wait_for("b-* bound", lambda: all(self.node_of(f"b-{i}") for i in range(10)), timeout=30)
        bindings = [r for r in writes(first.requests() + second.requests()) if r.endswith("/binding")]
        self.assertEqual(len(bindings), 20, bindings)
        self.assertEqual(len(set(bindings)), 20)
        lease = json.loads(self.kubectl("get", "lease", "-n", "kube-system", "arbiter-scheduler", "-o", "json").stdout)
        self.assertEqual(lease["spec"]["holderIdentity"], "arbiter-2")


class ApiRestartTest(ScheduleTestCase):
    # kube-scheduler's timings: the leader rides out a restart shorter than its renew deadline
    # (a longer outage ends its leadership, and the process, as kube-scheduler's). kube-apiserver
    # takes longer than that to start again on this machine: a longer lease, for both schedulers.
    lease = ("60", "40", "2") if UPSTREAM else ("15", "10", "2")

    def test_an_api_server_restart_mid_run_is_survived_and_no_pod_is_bound_twice(self):
        s = self.start_scheduler()
        self.apply(CLUSTER)
        self.apply("".join(pod_yaml(f"a-{i}", "low", "100m") + "---" for i in range(15)))
        self.wait_for("a-* bound", lambda: all(self.node_of(f"a-{i}") for i in range(15)))
        before = len(s.requests())
        self.restart_api_server()
        self.apply("".join(pod_yaml(f"b-{i}", "low", "100m") + "---" for i in range(15)))
        self.wait_for("b-* bound", lambda: all(self.node_of(f"b-{i}") for i in range(15)), timeout=60)
        bindings = [r for r in writes(s.requests()) if r.endswith("/binding")]
        self.assertEqual(len(bindings), len(set(bindings)), bindings)
        self.assertEqual(len(bindings), 30)
        # The watches resumed or relisted after the restart (the restarted store's history
        # starts empty: 410 Gone, then a list).
        # The pods' watch came back after the restart: resumed from its resourceVersion, or (when
        # the restarted store no longer holds that history: 410) listed again and watched anew.
        after = [r for r in s.requests()[before:] if r.startswith("GET /api/v1/pods?")]
        self.assertTrue(after, "the pods were neither watched nor listed after the restart")
        scheduled = {}
        for e in self.events("Scheduled"):
            scheduled.setdefault(e["involvedObject"]["name"], 0)
            scheduled[e["involvedObject"]["name"]] += e.get("count", 1)
        self.assertTrue(all(n == 1 for n in scheduled.values()), scheduled)


@unittest.skipUnless(UPSTREAM, "kube-scheduler runs only beside the real kube-apiserver (ARBITER_E2E_API=upstream)")
class TwoSchedulersTest(ScheduleTestCase):
    """The real kube-scheduler and `arbiter schedule` in one cluster, each scheduling the pods that
    name it, each counting the other's pods; then Arbiter alone, as the default scheduler."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.server = UpstreamServer(self.tmp.name, scheduler="kube").start()
        self.kubeconfig = os.path.join(self.tmp.name, "kubeconfig")
        self.schedulers = []

    def scheduled_by(self, pod):
        return [e["reportingComponent"] or e["source"].get("component") for e in self.events("Scheduled")
                if e["involvedObject"]["name"] == pod]

    def test_kube_scheduler_and_arbiter_side_by_side_then_arbiter_alone(self):
        arbiter = self.start_scheduler("arbiter-1", ("--scheduler-name", "arbiter"))
        self.apply(CLUSTER)
        self.apply(pod_yaml("kube-1", "low", "1") + "---" + pod_yaml("arbiter-1", "low", "1", scheduler="arbiter"))
        self.wait_for("both bound", lambda: self.node_of("kube-1") and self.node_of("arbiter-1"), timeout=30)
        self.assertEqual(self.scheduled_by("kube-1"), ["default-scheduler"])
        self.assertEqual(self.scheduled_by("arbiter-1"), ["arbiter"])
        self.assertIn("POST /api/v1/namespaces/default/pods/arbiter-1/binding", arbiter.requests())
        self.assertNotIn("POST /api/v1/namespaces/default/pods/kube-1/binding", arbiter.requests())
        # Arbiter counts kube-scheduler's pod: 2 of the node's 4 CPUs are taken.
        self.apply(pod_yaml("arbiter-big", "low", "3", scheduler="arbiter"))
        self.wait_for("arbiter-big unschedulable", lambda: any(
            e["involvedObject"]["name"] == "arbiter-big" for e in self.events("FailedScheduling")), timeout=30)
        self.assertIsNone(self.node_of("arbiter-big"))
        # And kube-scheduler counts Arbiter's: a 3-CPU pod of its own does not fit either.
        self.apply(pod_yaml("kube-big", "low", "3"))
        self.wait_for("kube-big unschedulable", lambda: any(
            e["involvedObject"]["name"] == "kube-big" for e in self.events("FailedScheduling")), timeout=30)
        self.assertIsNone(self.node_of("kube-big"))
        # Arbiter alone: kube-scheduler stops; Arbiter takes the default profile and the pending
        # default-scheduler pods, and preempts for a higher-priority one.
        self.server.stop_component("kube-scheduler")
        arbiter.stop()
        self.schedulers.remove(arbiter)
        alone = self.start_scheduler("arbiter-2", ())
        self.apply(pod_yaml("kube-2", "high", "3"))
        self.wait_for("kube-2 bound by Arbiter", lambda: self.node_of("kube-2"), timeout=40)
        self.assertIn("POST /api/v1/namespaces/default/pods/kube-2/binding", alone.requests())
        self.assertEqual(self.scheduled_by("kube-2"), ["default-scheduler"])
        preempted = {e["involvedObject"]["name"] for e in self.events("Preempted")}
        self.assertEqual(len(preempted & {"kube-1", "arbiter-1"}), 1, preempted)


DEPLOY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "arbiter-scheduler.yaml")


class PermissionsTest(ScheduleTestCase):
    """The deploy manifest's service account, under RBAC, may do everything the scheduler does."""

    def setUp(self):
        if UPSTREAM:
            # The real server's own RBAC and service account tokens.
            super().setUp()
            return
        self.tmp = tempfile.TemporaryDirectory()
        tokens = os.path.join(self.tmp.name, "tokens.csv")
        with open(tokens, "w") as f:
            f.write('admin-token,admin,1,"system:masters"\n'
                    'sa-token,system:serviceaccount:kube-system:arbiter-scheduler,2,'
                    '"system:serviceaccounts,system:serviceaccounts:kube-system,system:authenticated"\n')
        # kubectl sends a bearer token over HTTPS only.
        cert, key = os.path.join(self.tmp.name, "tls.crt"), os.path.join(self.tmp.name, "tls.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        self.serve_flags = ["--no-scheduler", "--token-auth-file", tokens, "--tls-cert-file", cert,
                            "--tls-private-key-file", key]
        self.server = Server(self.tmp.name, scheme="https", extra=self.serve_flags).start()
        self.kubeconfig = os.path.join(self.tmp.name, "kubeconfig")  # the administrator's
        self.schedulers = []

    def test_the_service_account_of_the_deploy_manifest_may_do_all_the_scheduler_does(self):
        # The manifest's permissions (its image-bound Deployment and ConfigMap are not needed).
        with open(DEPLOY) as f:
            docs = f.read().split("\n---\n")
        rbac = [d for d in docs if re.search(r"(?m)^kind: (ServiceAccount|ClusterRole|ClusterRoleBinding)$", d)]
        self.assertEqual(len(rbac), 5)
        self.apply("\n---\n".join(rbac))
        sa_kubeconfig = os.path.join(self.tmp.name, "sa-kubeconfig")
        with open(self.kubeconfig) as f:
            text = f.read()
        if UPSTREAM:
            # A token kube-apiserver issues for the service account (TokenRequest).
            token = self.kubectl("create", "token", "arbiter-scheduler", "-n", "kube-system").stdout.strip()
            text = text.replace(self.server.token, token)
        else:
            text = text.replace("admin-token", "sa-token")
        with open(sa_kubeconfig, "w") as f:
            f.write(text)
        s = Scheduler(sa_kubeconfig, self.tmp.name, "arbiter-sa", ())
        self.schedulers.append(s)
        self.wait_for("the service account's scheduler to lead", s.leading, timeout=20)
        placed, victim = preemption_story(self)
        self.assertEqual((placed, victim), ({"mid-1": "node-1", "high-1": "node-1"}, "low-1"))
        self.assertIn("POST /api/v1/namespaces/default/pods/high-1/binding", s.requests())
        with open(s.log_path) as f:
            log = f.read()
        self.assertNotIn("refused", log)
        self.assertNotIn("HTTP 403", log)
        if not UPSTREAM:
            self.assertNotIn('code=403', self.server.log_tail(200))


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        serve_e2e_test.ARBITER = sys.argv.pop(1)
    unittest.main(verbosity=2)
