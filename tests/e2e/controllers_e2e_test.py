#!/usr/bin/python3
"""End-to-end tests of the controllers of `arbiter serve` (Deployments, ReplicaSets, the garbage
collector, namespace deletion, simulated work), driven by the stock kubectl.

Run: controllers_e2e_test.py ARBITER_BINARY
"""
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_e2e_test  # noqa: E402  (the Server and ServeTestCase harness)
from serve_e2e_test import ServeTestCase  # noqa: E402

NODES = """
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {kubernetes.io/hostname: node-1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {kubernetes.io/hostname: node-2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
"""


def deployment_yaml(name, replicas, image, ns="default", grace=1):
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {ns}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      terminationGracePeriodSeconds: {grace}
      containers:
      - name: main
        image: {image}
        resources: {{requests: {{cpu: 100m}}}}
"""


class DeploymentTest(ServeTestCase):
    def pods(self, selector, ns="default"):
        out = self.kubectl("get", "pods", "-n", ns, "-l", selector, "-o", "json").stdout
        return json.loads(out)["items"]

    def running(self, selector, ns="default"):
        return [p for p in self.pods(selector, ns)
                if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")]

    def test_create_scale_set_image_rollout_history_undo_and_restart(self):
        self.apply(NODES)
        self.kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=5")
        out = self.kubectl("rollout", "status", "deployment/web", "--timeout=60s").stdout
        self.assertIn('deployment "web" successfully rolled out', out)
        self.assertRegex(self.kubectl("get", "deployment", "web").stdout, r"web\s+5/5\s+5\s+5")
        self.assertEqual(len(self.running("app=web")), 5)
        # kubectl get all lists the Deployment, its ReplicaSet and the pods.
        everything = self.kubectl("get", "all").stdout
        self.assertIn("deployment.apps/web", everything)
        self.assertIn("replicaset.apps/web-", everything)

        self.kubectl("scale", "deployment", "web", "--replicas=8")
        self.wait_for("8 running", lambda: len(self.running("app=web")) == 8, timeout=30)

        self.kubectl("set", "image", "deployment/web", "nginx=nginx:1.26")
        self.kubectl("rollout", "status", "deployment/web", "--timeout=60s")
        images = {p["spec"]["containers"][0]["image"] for p in self.running("app=web")}
        self.assertEqual(images, {"nginx:1.26"})
        history = self.kubectl("rollout", "history", "deployment/web").stdout
        self.assertRegex(history, r"(?m)^1\s")
        self.assertRegex(history, r"(?m)^2\s")

        self.kubectl("rollout", "undo", "deployment/web")
        self.kubectl("rollout", "status", "deployment/web", "--timeout=60s")
        self.wait_for("the old image back", lambda: {p["spec"]["containers"][0]["image"]
                                                     for p in self.running("app=web")} == {"nginx:1.25"}, timeout=30)
        deployment = json.loads(self.kubectl("get", "deployment", "web", "-o", "json").stdout)
        self.assertEqual(deployment["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "3")

        self.kubectl("rollout", "restart", "deployment/web")
        self.kubectl("rollout", "status", "deployment/web", "--timeout=60s")
        sets = json.loads(self.kubectl("get", "rs", "-l", "app=web", "-o", "json").stdout)["items"]
        self.assertEqual(len(sets), 3)
        events = self.kubectl("get", "events", "--field-selector", "reason=ScalingReplicaSet").stdout
        self.assertIn("Scaled up replica set web-", events)

    def test_delete_with_each_propagation_policy(self):
        self.apply(NODES)
        for name in ("bg", "fg", "orphan"):
            self.apply(deployment_yaml(name, 2, "app:1"))
        for name in ("bg", "fg", "orphan"):
            self.wait_for(f"{name} running", lambda n=name: len(self.running("app=" + n)) == 2, timeout=30)
        self.kubectl("delete", "deployment", "bg", "--cascade=background")
        self.wait_for("bg's pods gone", lambda: not self.pods("app=bg"), timeout=30)
        self.kubectl("delete", "deployment", "fg", "--cascade=foreground")  # waits for the dependents
        self.assertEqual(self.pods("app=fg"), [])
        self.kubectl("delete", "deployment", "orphan", "--cascade=orphan")
        sets = json.loads(self.kubectl("get", "rs", "-l", "app=orphan", "-o", "json").stdout)["items"]
        self.assertEqual(len(sets), 1)
        self.assertNotIn("ownerReferences", sets[0]["metadata"])
        self.assertEqual(len(self.running("app=orphan")), 2)

    def test_deleting_a_namespace_removes_its_workloads(self):
        self.apply(NODES)
        self.kubectl("create", "namespace", "team-q")
        self.apply(deployment_yaml("batch", 3, "app:1", ns="team-q"))
        self.kubectl("create", "configmap", "settings", "--from-literal=a=b", "-n", "team-q")
        self.wait_for("3 running", lambda: len(self.running("app=batch", "team-q")) == 3, timeout=30)
        self.kubectl("delete", "namespace", "team-q", "--timeout=60s")
        r = self.kubectl("get", "namespace", "team-q", check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("NotFound", r.stderr)

    def test_a_pod_with_a_run_duration_completes(self):
        self.apply(NODES)
        self.apply("""
apiVersion: v1
kind: Pod
metadata:
  name: task
  annotations: {arbiter.dev/run-duration: 1s}
spec:
  restartPolicy: Never
  containers: [{name: main, image: busybox}]
""")
        self.wait_for("task completed", lambda: (self.pod("task") or {}).get("status", {}).get("phase") == "Succeeded",
                      timeout=30)
        self.assertRegex(self.kubectl("get", "pod", "task").stdout, r"task\s+0/1\s+Completed")


# The two PriorityClasses (low 100, high 1000) of the serve tests' cluster.
PRIORITIES = "---".join(d for d in serve_e2e_test.CLUSTER.split("---") if "PriorityClass" in d)


def job_yaml(name, completions, parallelism, run, cpu="100m", cls=None, backoff=6, ignore_disruptions=False):
    policy = """
  podFailurePolicy:
    rules:
    - action: Ignore
      onPodConditions: [{type: DisruptionTarget}]""" if ignore_disruptions else ""
    priority = f"\n      priorityClassName: {cls}" if cls else ""
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: {completions}
  parallelism: {parallelism}
  backoffLimit: {backoff}{policy}
  template:
    metadata:
      annotations: {{arbiter.dev/run-duration: {run}}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 1{priority}
      containers:
      - name: work
        image: worker:1
        resources: {{requests: {{cpu: "{cpu}"}}}}
"""


class JobTest(ServeTestCase):
    def job(self, name):
        return json.loads(self.kubectl("get", "job", name, "-o", "json").stdout)

    def test_a_job_runs_to_completion(self):
        self.apply(NODES)
        self.apply(job_yaml("crunch", 3, 2, "1s"))
        self.kubectl("wait", "--for=condition=complete", "job/crunch", "--timeout=60s")
        self.assertRegex(self.kubectl("get", "job", "crunch").stdout, r"crunch\s+Complete\s+3/3")
        self.assertEqual(self.job("crunch")["status"]["succeeded"], 3)

    def test_a_preempted_pod_is_not_counted_against_the_backoff_limit(self):
        self.apply(NODES.replace('cpu: "8"', 'cpu: "1"'))
        self.apply(PRIORITIES)
        self.apply(job_yaml("batch", 2, 2, "300s", cpu="1", cls="low", backoff=0, ignore_disruptions=True))
        self.wait_for("two job pods running", lambda: self.job("batch")["status"].get("ready") == 2, timeout=30)
        self.apply("""
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec:
  priorityClassName: high
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
""")
        self.wait_for("urgent running", lambda: (self.pod("urgent") or {}).get("status", {}).get("phase") == "Running",
                      timeout=30)
        self.wait_for("a replacement", lambda: len(json.loads(self.kubectl(
            "get", "pods", "-l", "job-name=batch", "-o", "json").stdout)["items"]) >= 2 and
            self.job("batch")["status"].get("active", 0) >= 1, timeout=30)
        job = self.job("batch")
        self.assertNotIn("Failed", [c["type"] for c in job["status"].get("conditions", []) if c["status"] == "True"])
        self.assertNotIn("failed", job["status"])


class HousekeepingTest(ServeTestCase):
    def test_a_no_execute_taint_evicts_the_pods_that_do_not_tolerate_it(self):
        self.apply(NODES)
        self.apply("""
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  nodeName: node-1
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: x}]
---
apiVersion: v1
kind: Pod
metadata: {name: tolerant}
spec:
  nodeName: node-1
  tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]
  containers: [{name: c, image: x}]
""")
        self.wait_for("both running", lambda: all((self.pod(n) or {}).get("status", {}).get("phase") == "Running"
                                                  for n in ("plain", "tolerant")), timeout=30)
        self.kubectl("taint", "node", "node-1", "maintenance=now:NoExecute")
        self.wait_for("plain evicted", lambda: self.pod("plain") is None, timeout=30)
        self.assertIsNotNone(self.pod("tolerant"))
        events = self.kubectl("get", "events", "--field-selector", "reason=TaintManagerEviction").stdout
        self.assertIn("Marking for deletion Pod default/plain", events)

    def test_pod_disruption_budget_status_follows_the_deployment(self):
        self.apply(NODES)
        self.apply(deployment_yaml("web", 3, "app:1"))
        self.apply("""
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
""")
        self.wait_for("the budget allows one", lambda: re.search(r"web\s+N/A\s+1\s+1",
                                                                 self.kubectl("get", "pdb", "web").stdout), timeout=30)
        status = json.loads(self.kubectl("get", "pdb", "web", "-o", "json").stdout)["status"]
        self.assertEqual((status["expectedPods"], status["desiredHealthy"], status["currentHealthy"]), (3, 2, 3))


class StatefulSetAndCronJobTest(ServeTestCase):
    def test_a_stateful_set_scales_in_order_and_a_cron_job_runs_on_schedule(self):
        self.apply(NODES)
        self.apply("""
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: main, image: db:1, resources: {requests: {cpu: 100m}}}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        metadata:
          annotations: {arbiter.dev/run-duration: 1s}
        spec:
          restartPolicy: Never
          containers: [{name: main, image: tick:1}]
""")
        self.wait_for("db ready", lambda: re.search(r"db\s+3/3", self.kubectl("get", "sts", "db").stdout), timeout=30)
        names = sorted(p["metadata"]["name"] for p in json.loads(
            self.kubectl("get", "pods", "-l", "app=db", "-o", "json").stdout)["items"])
        self.assertEqual(names, ["db-0", "db-1", "db-2"])
        self.kubectl("scale", "statefulset", "db", "--replicas=1")
        self.wait_for("db scaled to 1", lambda: [p["metadata"]["name"] for p in json.loads(
            self.kubectl("get", "pods", "-l", "app=db", "-o", "json").stdout)["items"]] == ["db-0"], timeout=30)
        self.assertRegex(self.kubectl("get", "cronjob", "tick").stdout, r"tick\s+\* \* \* \* \*")
        # The first run starts at the next whole minute.
        self.wait_for("a completed run", lambda: re.search(r"tick-\d+\s+Complete\s+1/1",
                                                           self.kubectl("get", "jobs").stdout), timeout=75)


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        serve_e2e_test.ARBITER = sys.argv.pop(1)
    unittest.main(verbosity=2)
