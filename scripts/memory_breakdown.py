#!/usr/bin/env python3
"""Splits a jemalloc heap profile of `arbiter serve` (as `jeprof --collapsed --inuse_space` prints
it: one allocation stack per line, frames separated by ';', then the bytes in use) into the
server's components, and prints a table. Each stack counts once: for a whole-stack rule if one
matches, else for the rule of the frame nearest the allocation that matches one.

Usage: memory_breakdown.py COLLAPSED_FILE [--pods N] [--nodes N]
"""
import sys

# Whole-stack rules: (component, any of these substrings anywhere in the stack).
STACK_RULES = [
    ("object bodies' text (JSON, made once per version, when the store writes it)",
     ["Body::shared_text", "Body::text"]),
    ("Events (their JSON bodies, kept for the event TTL)", ["EventRecorder"]),
    ("SQLite (page cache and statements)", ["sqlite3"]),
]
# Frame rules, tried on each frame from the allocation outwards: (component, substrings).
RULES = [
    ("decoded objects (model::Pod / Node, the decode cache)", ["DecodeCache", "ObjectDecoder", "DecodeJson"]),
    ("scheduler cache (PodInfo, NodeInfo, snapshot, queue)", ["arbiter::state::", "arbiter::sched::"]),
    ("informer indexes (keys and pointers)", ["Informer::"]),
    ("watch history bookkeeping", ["WatchHub"]),
    ("HTTP sessions and watch streams", ["HttpServer", "boost::beast", "boost::asio"]),
    ("object bodies (JSON trees, one per stored version, shared by the watch history and the informers)",
     ["nlohmann", "basic_json", "StampRevision"]),
]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path = args[0]
    counts = {}
    total = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            try:
                b = int(n)
            except ValueError:
                continue
            total += b
            name = None
            for component, needles in STACK_RULES:
                if any(s in stack for s in needles):
                    name = component
                    break
            frames = stack.split(";")
            for frame in reversed(frames):
                if name is not None:
                    break
                for component, needles in RULES:
                    if any(s in frame for s in needles):
                        name = component
                        break
            name = name or "other"
            counts[name] = counts.get(name, 0) + b
    opts = dict(zip(args[1::2], args[2::2]))
    pods = int(opts.get("--pods", 0))
    print("| component | MiB | share |" + (" bytes per pod |" if pods else ""))
    print("|---|---|---|" + ("---|" if pods else ""))
    for name, b in sorted(counts.items(), key=lambda kv: -kv[1]):
        row = "| %s | %.1f | %.0f%% |" % (name, b / 2**20, 100.0 * b / total)
        if pods:
            row += " %d |" % (b // pods)
        print(row)
    print("| **heap in use** | **%.1f** | 100%% |" % (total / 2**20) + (" %d |" % (total // pods) if pods else ""))


if __name__ == "__main__":
    main()
