#!/usr/bin/python3
"""The input edge of `arbiter plan`: how fast it reads a cluster dump as kubectl writes it.

For each size, writes a dump of NODES nodes and 4 pods per node with scripts/make-cluster-dump.py
(JSON indented by 4, and YAML), then times `arbiter plan -f DUMP -o json` (nothing is pending, so
the plan itself is trivial) and CPython reading the same file (`json.load`; `yaml.load_all` with
libyaml's CSafeLoader), RUNS times each, in turn. Prints one JSON line per size and format with
the medians: seconds, MiB/s, peak RSS in MiB, and the ratio to CPython.

  scripts/bench-input.py [--nodes 500,5000] [--runs 3] [--formats json,yaml] [--no-python]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="500,5000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", default="json,yaml")
    ap.add_argument("--no-python", action="store_true", help="skip the CPython baseline")
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
                plan = [arbiter, "plan", "-f", path, "-o", "json", "--max-input-size", str(2 * size + (1 << 20))]
                loader = ("import json; json.load(open(%r))" % path if fmt == "json" else
                          "import yaml; list(yaml.load_all(open(%r), Loader=yaml.CSafeLoader))" % path)
                ours, theirs = [], []
                for r in range(a.runs):
                    print(f"bench-input: {nodes} nodes, {fmt}, run {r + 1} of {a.runs}", file=sys.stderr)
                    ours.append(run(plan))
                    if not a.no_python:
                        theirs.append(run([sys.executable, "-c", loader]))
                line = {"nodes": nodes, "pods": 4 * nodes, "format": fmt, "MiB": round(mib, 1), "runs": a.runs,
                        "seconds": round(statistics.median(w for w, _ in ours), 3),
                        "MiBPerSecond": round(mib / statistics.median(w for w, _ in ours), 1),
                        "peakRssMiB": round(statistics.median(m for _, m in ours), 1)}
                if theirs:
                    line["cpythonSeconds"] = round(statistics.median(w for w, _ in theirs), 3)
                    line["cpythonPeakRssMiB"] = round(statistics.median(m for _, m in theirs), 1)
                    line["ratio"] = round(statistics.median(o[0] / t[0] for o, t in zip(ours, theirs)), 3)
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
