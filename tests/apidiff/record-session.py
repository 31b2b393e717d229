#!/usr/bin/python3
"""Records the corpus's client sessions: kubectl and the Python client, doing what the end-to-end
tests do with them (tests/e2e/serve_e2e_test.py), against `arbiter serve` through apidiff's
recording proxy. Writes tests/apidiff/corpus/40-recorded-kubectl.yaml and
41-recorded-python.yaml, which `apidiff.py run` replays against both servers.

    tests/apidiff/record-session.py ARBITER_BINARY [--kubectl PATH] [--out-dir DIR]

Discovery and OpenAPI requests are left out of the recording (the hand-written `discovery` case
covers discovery; the OpenAPI documents are compared by tests/api/schema_test.cc). The session
runs in namespace `rec`, which the recording turns into each case's own namespace.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "rec"

MANIFEST = """
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - {name: c, image: nginx:1.25, resources: {requests: {cpu: 100m, memory: 64Mi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  replicas: 0
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      containers:
      - {name: c, image: nginx:1.25}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
"""

CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: fast}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"record-session: {what} exited ({proc.returncode})")
            time.sleep(0.05)
    sys.exit(f"record-session: {what} did not listen on {port}")


def record(out, name, about, target, session):
    """Runs session(kubeconfig, url) through a recording proxy in front of target."""
    port = free_port()
    proxy = subprocess.Popen([sys.executable, os.path.join(HERE, "apidiff.py"), "record", "--target", target,
                              "--listen", str(port), "--out", out, "--name", name, "--about", about,
                              "--namespace", NS, "--skip-discovery"])
    wait_port(port, proxy, "the recording proxy")
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: rec, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: rec, user: {{}}}}]
contexts: [{{name: rec, context: {{cluster: rec, user: rec, namespace: {NS}}}}}]
current-context: rec
""")
        try:
            session(kubeconfig, f"http://127.0.0.1:{port}")
        finally:
            proxy.send_signal(signal.SIGINT)
            proxy.wait(timeout=30)


def kubectl_session(kubectl):
    def run(kubeconfig, _url):
        env = {**os.environ, "KUBECONFIG": kubeconfig, "KUBECACHEDIR": tempfile.mkdtemp()}

        def k(*args, stdin=None):
            r = subprocess.run([kubectl, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
            print(f"  kubectl {' '.join(args)}: {r.returncode}", file=sys.stderr)

        k("apply", "-f", "-", stdin=MANIFEST)
        k("get", "pods", "-o", "wide")
        k("get", "pod", "web", "-o", "json")
        k("get", "pod", "web", "-o", "yaml")
        k("describe", "pod", "web")
        k("get", "events")
        k("label", "pod", "web", "tier=front")
        k("annotate", "pod", "web", "note=checked")
        k("patch", "pod", "web", "--type=json", "-p", '[{"op":"add","path":"/metadata/labels/x","value":"y"}]')
        k("patch", "deployment", "d", "-p", '{"spec":{"revisionHistoryLimit":3}}')
        k("scale", "deployment", "d", "--replicas=0")
        k("apply", "-f", "-", stdin=MANIFEST.replace("minAvailable: 1", "minAvailable: 2"))
        k("get", "pdb", "web", "-o", "json")
        k("create", "configmap", "cm", "--from-literal=a=1")
        k("apply", "--server-side", "-f", "-", stdin=CONFIGMAP)
        k("get", "configmaps")
        k("create", "quota", "q", "--hard=pods=3")
        k("get", "quota", "q", "-o", "json")
        k("auth", "can-i", "create", "pods")
        k("create", "--validate=false", "-f", "-", stdin='{"apiVersion":"v1","kind":"Pod","metadata":{"name":"noimage"},'
                                                         '"spec":{"containers":[{"name":"c"}]}}')
        k("apply", "-f", "-", stdin=MANIFEST.replace("image: nginx:1.25, resources", "imagee: x, resources"))
        k("get", "pods", "--selector", "app=web")
        k("get", "events", "--field-selector", "involvedObject.name=web", "-o", "json")
        k("delete", "pod", "web", "--grace-period=0", "--force")
        k("get", "pod", "web")
        k("delete", "deployment", "d")
        k("delete", "configmap", "cm", "settings")
    return run


def python_session(kubeconfig, _url):
    from kubernetes import client, config, watch
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    pod = client.V1Pod(metadata=client.V1ObjectMeta(name="py", labels={"app": "py"}),
                       spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")]))

    def attempt(f, *a, **kw):
        try:
            return f(*a, **kw)
        except Exception as e:  # the recording wants the request, whatever the answer
            print(f"  python: {f.__name__}: {type(e).__name__}", file=sys.stderr)
            return None

    attempt(core.create_namespaced_pod, NS, pod)
    attempt(core.read_namespaced_pod, "py", NS)
    listed = attempt(core.list_namespaced_pod, NS, label_selector="app=py")
    attempt(core.patch_namespaced_pod, "py", NS, {"metadata": {"labels": {"patched": "yes"}}})
    cm = attempt(core.create_namespaced_config_map, NS,
                 client.V1ConfigMap(metadata=client.V1ObjectMeta(name="pycm"), data={"a": "1"}))
    if cm is not None:
        cm.data = {"a": "2"}
        attempt(core.replace_namespaced_config_map, "pycm", NS, cm)
    attempt(core.read_namespaced_config_map, "missing", NS)
    if listed is not None:
        w = watch.Watch()
        for _ in w.stream(core.list_namespaced_pod, NS, resource_version=listed.metadata.resource_version,
                          timeout_seconds=1):
            pass
    attempt(core.list_namespaced_event, NS)
    attempt(client.SchedulingV1Api().list_priority_class)
    attempt(client.PolicyV1Api().list_namespaced_pod_disruption_budget, NS)
    attempt(core.delete_namespaced_config_map, "pycm", NS)
    attempt(core.delete_namespaced_pod, "py", NS, grace_period_seconds=0)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("arbiter")
    p.add_argument("--kubectl", default="kubectl")
    p.add_argument("--out-dir", default=os.path.join(HERE, "corpus"))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as data:
        port = free_port()
        serve = subprocess.Popen([args.arbiter, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data,
                                  "--no-scheduler", "--seed", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port, serve, "arbiter serve")
            target = f"http://127.0.0.1:{port}"
            subprocess.run([args.kubectl, "--server", target, "create", "namespace", NS], check=True,
                           capture_output=True, env={**os.environ, "KUBECONFIG": "/dev/null"})
            record(os.path.join(args.out_dir, "40-recorded-kubectl.yaml"), "recorded-kubectl",
                   "kubectl's requests in a session like the end-to-end tests' (apply, get, describe, label, "
                   "annotate, patch, scale, server-side apply, create, delete), recorded", target,
                   kubectl_session(args.kubectl))
            record(os.path.join(args.out_dir, "41-recorded-python.yaml"), "recorded-python",
                   "the Python client's requests in a session like the end-to-end tests' (create, read, list, "
                   "patch, replace, watch, delete), recorded", target, python_session)
        finally:
            serve.terminate()
            serve.wait(timeout=30)


if __name__ == "__main__":
    main()
