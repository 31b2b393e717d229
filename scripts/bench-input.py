#!/usr/bin/python3
"""The input edge of `arbiter plan`: how fast it reads a cluster dump as kubectl writes it.

For each size, writes a dump of NODES nodes and 4 pods per node with scripts/make-cluster-dump.py
(JSON indented by 4, and YAML), then times `arbiter plan -f DUMP -o json` (nothing is pending, so
the plan itself is trivial) and CPython reading the same file (`json.load`; `yaml.load_all` with
libyaml's CSafeLoader), RUNS times each, in turn. Prints one JSON line per size and format with
the medians: seconds, MiB/s, peak RSS in MiB, and the ratio to CPython.

With --preemptors N it plans the dump with N pending pods as well (priority 100000, each asking
3900m, so that each must preempt a whole node's 4 pods, under the dump's 40 PDBs) and times the
plan in each output format of --outputs: the engine and the writer on real objects.

  scripts/bench-input.py [--nodes 500,5000] [--runs 3] [--formats json,yaml] [--no-python]
                         [--preemptors N [--outputs json,yaml,table]]
                         [--arbiter build/bin/arbiter] [--dir DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(argv):
    """Wall seconds and peak RSS (MiB) of one run of argv, its output thrown away."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-input: {' '.join(argv)} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024.0


def write_preemptors(path, count):
    """A PriorityClass and `count` pods that each need a whole 4-CPU node of the dump."""
    items = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
              "value": 100000}]
    for i in range(count):
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"urgent-{i}", "namespace": "team-0"},
                      "spec": {"priorityClassName": "urgent",
                               "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3900m"}}}]}})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)


def median_line(base, runs, mib):
    line = dict(base)
    line.update({"seconds": round(statistics.median(w for w, _ in runs), 3),
                 "MiBPerSecond": round(mib / statistics.median(w for w, _ in runs), 1),
                 "peakRssMiB": round(statistics.median(m for _, m in runs), 1)})
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="500,5000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", default="json,yaml")
    ap.add_argument("--no-python", action="store_true", help="skip the CPython baseline")
    ap.add_argument("--preemptors", type=int, default=0, help="plan this many preempting pods on the dump")
    ap.add_argument("--outputs", default="json,yaml,table", help="with --preemptors: the output formats timed")
    ap.add_argument("--arbiter", default=os.path.join(HERE, "..", "build", "bin", "arbiter"))
    ap.add_argument("--dir", help="where the dumps are written (default: a temporary directory)")
    a = ap.parse_args()
    arbiter = os.path.abspath(a.arbiter)
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = a.dir or tmp
        for nodes in [int(n) for n in a.nodes.split(",")]:
            for fmt in a.formats.split(","):
                path = os.path.join(out_dir, f"cluster-{nodes}.{fmt}")
                if not os.path.exists(path):
                    print(f"bench-input: writing {path}", file=sys.stderr)
                    subprocess.run([sys.executable, os.path.join(HERE, "make-cluster-dump.py"), str(nodes),
                                    "--format", fmt, "-o", path], check=True)
                size = os.path.getsize(path)
                mib = size / (1 << 20)
                if a.preemptors > 0:
                    pending = os.path.join(out_dir, f"preemptors-{a.preemptors}.json")
                    write_preemptors(pending, a.preemptors)
                    for output in a.outputs.split(","):
                        argv = [arbiter, "plan", "-f", path, "-f", pending, "-o", output,
                                "--max-input-size", str(2 * size + (16 << 20))]
                        runs = []
                        for r in range(a.runs):
                            print(f"bench-input: {nodes} nodes, {fmt}, {a.preemptors} preemptors, -o {output}, "
                                  f"run {r + 1} of {a.runs}", file=sys.stderr)
                            runs.append(run(argv))
                        print(json.dumps(median_line({"nodes": nodes, "pods": 4 * nodes, "format": fmt,
                                                      "preemptors": a.preemptors, "output": output,
                                                      "MiB": round(mib, 1), "runs": a.runs}, runs, mib)), flush=True)
                    continue
                plan = [arbiter, "plan", "-f", path, "-o", "json", "--max-input-size", str(2 * size + (1 << 20))]
                loader = ("import json; json.load(open(%r))" % path if fmt == "json" else
                          "import yaml; list(yaml.load_all(open(%r), Loader=yaml.CSafeLoader))" % path)
                ours, theirs = [], []
                for r in range(a.runs):
                    print(f"bench-input: {nodes} nodes, {fmt}, run {r + 1} of {a.runs}", file=sys.stderr)
                    ours.append(run(plan))
                    if not a.no_python:
                        theirs.append(run([sys.executable, "-c", loader]))
                line = median_line({"nodes": nodes, "pods": 4 * nodes, "format": fmt, "MiB": round(mib, 1),
                                    "runs": a.runs}, ours, mib)
                if theirs:
                    line["cpythonSeconds"] = round(statistics.median(w for w, _ in theirs), 3)
                    line["cpythonPeakRssMiB"] = round(statistics.median(m for _, m in theirs), 1)
                    line["ratio"] = round(statistics.median(o[0] / t[0] for o, t in zip(ours, theirs)), 3)
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
