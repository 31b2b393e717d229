#!/usr/bin/python3
"""arbiter serve against kube-apiserver, response by response.

    apidiff.py run --server NAME=URL --server NAME=URL --token T [--user-token U] [--ca FILE]
                   [--corpus DIR] [--known FILE] [--report FILE] [--case GLOB]
    apidiff.py record --target URL [--ca FILE] --listen PORT --out FILE.yaml [--name PREFIX]

`run` replays every case of the corpus (tests/apidiff/corpus/*.yaml) against both servers, each
case in a namespace of its own made for it on both, and compares the answers: status code,
content type, a Status's reason, code, details and causes, the body's shape (every key path and
its JSON type, array items merged) and the values of its leaves, except those that differ by
nature (uids, resourceVersions, times, generated names, allocated IPs and ports). Messages are
compared too and reported, but never fail the run: they are prose. Every difference has a key,

    CASE#STEP CLASS PATH

and the known-differences file lists the keys that are accepted (`*` matches any run of
characters), each with its reason after ` # `; a difference it does not list fails the run (exit 1), as does a listed one
that no longer occurs (the list must not rot), unless its key is marked `? ` (it depends on a
controller's timing). The report (markdown) lists every difference.

`record` is a proxy in front of a server that writes the requests clients send through it as a
corpus case, for replay by `run`: the namespace becomes {ns}, a body's resourceVersion and uid
become {rv:PATH} and {uid:PATH} (the last ones the server answered for that object in the
replay), and a watch's resourceVersion is dropped.

A case (YAML) is a name, an `about` line and steps. A step is
    {method, path, body?, contentType?, accept?, as?: admin|user|anonymous,
     watch?: {events: N, seconds: S}, compare?: true|false, ignore?: [PATH...]}
with {ns}, {last:DOTTED.PATH} (a value of the previous answer on the same server),
{step:N:DOTTED.PATH} (of the answer to step N), and {rv:PATH} and {uid:PATH} (the last ones either
server answered for the object at PATH) substituted in path and body.
"""
import argparse
import base64
import fnmatch
import glob
import http.client
import http.server
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse

import yaml

# Leaves whose values differ between any two servers (or two runs of one): compared by shape only.
VOLATILE_KEYS = {
    "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "time", "lastTransitionTime",
    "lastHeartbeatTime", "lastProbeTime", "lastUpdateTime", "startTime", "renewTime", "acquireTime",
    "continue", "clusterIP", "clusterIPs", "nodePort", "token", "holderIdentity", "selfLink",
    "expirationTimestamp", "firstTimestamp", "lastTimestamp", "eventTime", "cells", "message",
}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
NAMESPACE_WAIT_SECONDS = 30


# ---------------------------------------------------------------------------------------------
# Talking to a server


class Server:
    def __init__(self, name, url, ca, tokens):
        self.name = name
        self.url = urllib.parse.urlsplit(url)
        self.ca = ca
        self.tokens = tokens  # as -> token (None: anonymous)

    def connect(self, timeout):
        host, port = self.url.hostname, self.url.port
        if self.url.scheme == "https":
            ctx = ssl.create_default_context(cafile=self.ca) if self.ca else ssl._create_unverified_context()
            if self.ca:
                ctx.check_hostname = False  # a loopback server's certificate names 127.0.0.1 or localhost
            return http.client.HTTPSConnection(host, port or 443, timeout=timeout, context=ctx)
        return http.client.HTTPConnection(host, port or 80, timeout=timeout)

    def request(self, method, path, body=None, content_type=None, accept=None, as_="admin", watch=None):
        """Returns (status, content type, body bytes, watch events or None)."""
        headers = {"User-Agent": "arbiter-apidiff"}
        token = self.tokens.get(as_)
        if token:
            headers["Authorization"] = "Bearer " + token
        if accept:
            headers["Accept"] = accept
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
            headers["Content-Type"] = content_type or "application/json"
        conn = self.connect(timeout=(watch or {}).get("seconds", 30) if watch else 30)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            ctype = resp.getheader("Content-Type", "")
            if watch and resp.status == 200:
                return resp.status, ctype, b"", read_events(resp, watch)
            return resp.status, ctype, resp.read(), None
        finally:
            conn.close()


def read_events(resp, watch):
    """Up to watch.events events, or what arrives in watch.seconds."""
    want, deadline = watch.get("events", 1000), time.monotonic() + watch.get("seconds", 2)
    events = []
    while len(events) < want and time.monotonic() < deadline:
        resp.fp.raw._sock.settimeout(max(0.05, deadline - time.monotonic())) if hasattr(resp.fp, "raw") else None
        try:
            line = resp.readline()
        except (TimeoutError, OSError):
            break
        if not line:
            break
        line = line.strip()
        if line:
            events.append(json.loads(line))
    return events


# ---------------------------------------------------------------------------------------------
# Substitution


def dotted(obj, path):
    for part in path.split("."):
        if isinstance(obj, list):
            obj = obj[int(part)] if part.isdigit() and int(part) < len(obj) else None
        elif isinstance(obj, dict):
            obj = obj.get(part)
        else:
            return None
    return obj


class Context:
    """One case on one server: the namespace, the last answer, resourceVersions by object."""

    def __init__(self, ns):
        self.ns = ns
        self.last = None
        self.answers = []
        self.rvs = {}
        self.uids = {}

    def text(self, s):
        s = s.replace("{ns}", self.ns)

        def sub(m):
            kind, arg = m.group(1), m.group(2)
            if kind in ("last", "step"):
                source = self.last
                if kind == "step":  # {step:N:DOTTED}: the answer to step N (from 1)
                    n, _, arg = arg.partition(":")
                    source = self.answers[int(n) - 1] if n.isdigit() and 0 < int(n) <= len(self.answers) else None
                v = dotted(source, arg)
                return "" if v is None else (v if isinstance(v, str) else json.dumps(v))
            return (self.rvs if kind == "rv" else self.uids).get(arg.replace("{ns}", self.ns), "")

        return re.sub(r"\{(last|step|rv|uid):([^}]+)\}", sub, s)

    def value(self, v):
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        return v

    def remember(self, method, path, body):
        """Keeps the resourceVersion of the object an answer carries, by its path."""
        self.last = body
        self.answers.append(body)
        if not isinstance(body, dict):
            return
        meta = body.get("metadata") or {}
        rv, name = meta.get("resourceVersion"), meta.get("name")
        if not rv or not name or body.get("kind", "").endswith("List") or body.get("kind") == "Status":
            return
        base = path.split("?")[0].rstrip("/")
        if method == "POST" and not base.endswith("/" + name):
            base += "/" + name
        for sub in ("/status", "/scale", "/binding", "/eviction"):
            if base.endswith(sub):
                base = base[: -len(sub)]
        self.rvs[base] = rv
        if meta.get("uid"):
            self.uids[base] = meta["uid"]


# ---------------------------------------------------------------------------------------------
# Summaries and differences


def media(ctype):
    parts = [p.strip() for p in ctype.split(";")]
    keep = [p for p in parts[1:] if p.startswith("as=")]
    return ";".join([parts[0]] + keep)


def norm(path):
    return re.sub(r"\[\d+\]", "[]", path) or "."


def walk(obj, path, shape, values, generated):
    if path.endswith(".fieldsV1"):  # what managedFields say: compared only where a step asks
        shape.add((norm(path), "object"))
        values[path] = json.dumps(obj, sort_keys=True)
        return
    if isinstance(obj, dict):
        shape.add((norm(path), "object"))
        for k, v in obj.items():
            p = f"{path}.{k}" if path else k
            if k in VOLATILE_KEYS or (k == "name" and path.endswith("metadata") and generated):
                shape.add((norm(p), kind_of(v)))
                continue
            walk(v, p, shape, values, generated)
    elif isinstance(obj, list):
        shape.add((norm(path), "array"))
        if obj and all(not isinstance(v, (dict, list)) for v in obj):  # scalars: one value, in order
            for v in obj:
                shape.add((norm(path) + "[]", kind_of(v)))
            values[path] = obj
            return
        for i, v in enumerate(obj):
            walk(v, f"{path}[{item_key(obj, i)}]", shape, values, generated)
    else:
        shape.add((norm(path), kind_of(obj)))
        if not (isinstance(obj, str) and UUID.fullmatch(obj)):  # a uid under another name (a Job's labels)
            values[path] = obj


def item_key(items, i):
    """An array item's place: its name (or type, or reason) when every item has a distinct one, so
    that one server's extra item does not shift the rest; else its index."""
    if all(isinstance(x, dict) and "manager" in x and "fieldsType" in x for x in items):  # managedFields
        keys = [f"{x.get('manager')}/{x.get('operation')}/{x.get('subresource', '')}" for x in items]
        if len(set(keys)) == len(keys):
            return f"manager={keys[i]}"
    for key in ("name", "type", "reason"):
        keys = [x.get(key) if isinstance(x, dict) else None for x in items]
        if all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys):
            return f"{key}={keys[i]}"
    return str(i)


def kind_of(v):
    return {dict: "object", list: "array", str: "string", bool: "bool", type(None): "null"}.get(type(v), "number")


def summarize(status, ctype, raw, events, request_body):
    s = {"status": status, "contentType": media(ctype), "shape": set(), "values": {}, "messages": {}}
    generated = isinstance(request_body, dict) and bool((request_body.get("metadata") or {}).get("generateName"))
    bodies = []
    if events is not None:
        s["values"]["events"] = ",".join(e.get("type", "?") for e in events)
        bodies = [("event", e) for e in events]
    elif raw and "json" in s["contentType"]:
        try:
            bodies = [("", json.loads(raw))]
        except ValueError:
            s["values"]["body"] = "not JSON"
    elif raw and "yaml" not in s["contentType"] and "protobuf" not in s["contentType"]:
        s["values"]["body"] = raw.decode(errors="replace")[:200]
    for prefix, body in bodies:
        values = {}
        walk(body, prefix, s["shape"], values, generated)
        if prefix:  # events: shapes merged, values of each event kept apart
            values = {}
        s["values"].update(values)
        collect_messages(body, prefix, s["messages"])
    if len(bodies) == 1 and isinstance(bodies[0][1], dict) and bodies[0][1].get("kind") == "Status":
        st = bodies[0][1]
        s["reason"] = st.get("reason", "")
        causes = (st.get("details") or {}).get("causes") or []
        s["causes"] = sorted(f"{c.get('reason', '')} {c.get('field', '')}" for c in causes)
    return s


def collect_messages(obj, path, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else k
            if k == "message" and isinstance(v, str):
                out[p] = v
            else:
                collect_messages(v, p, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            collect_messages(v, f"{path}[{i}]", out)


def differences(a, b, ignore):
    """[(class, path, detail)] of summary a (first server) against b (second)."""
    out = []
    if a["status"] != b["status"]:
        out.append(("status", "", f"{a['status']} vs {b['status']}"))
    if a["contentType"] != b["contentType"]:
        out.append(("contentType", "", f"{a['contentType']} vs {b['contentType']}"))
    if a.get("reason") != b.get("reason"):
        out.append(("reason", "", f"{a.get('reason')} vs {b.get('reason')}"))
    if a.get("causes") != b.get("causes"):
        out.append(("causes", "", f"{a.get('causes')} vs {b.get('causes')}"))

    def ignored(p):
        return any(p == i or p.startswith(i + ".") or p.startswith(i + "[") for i in ignore)

    sa, sb = dict(a["shape"] and ((p, t) for p, t in a["shape"])), dict((p, t) for p, t in b["shape"])
    # A path that holds several types (an array of mixed items) keeps them all: compare as sets.
    shape_a = {p for p, _ in a["shape"]}
    shape_b = {p for p, _ in b["shape"]}
    if "reason" not in a and "reason" not in b or a.get("reason") == b.get("reason"):
        for only, side in ((shape_a - shape_b, "first"), (shape_b - shape_a, "second")):
            for p in sorted(only):  # the topmost path of a missing subtree stands for it
                if not ignored(p) and not any(p.startswith(q + ".") or p.startswith(q + "[") for q in only if q != p):
                    out.append(("shape", p, f"only the {side} has it"))
        for p in sorted(shape_a & shape_b):
            ta = sorted(t for q, t in a["shape"] if q == p)
            tb = sorted(t for q, t in b["shape"] if q == p)
            if ta != tb and not ignored(p):
                out.append(("type", p, f"{'/'.join(ta)} vs {'/'.join(tb)}"))
        for p in sorted(set(a["values"]) & set(b["values"])):
            if a["values"][p] != b["values"][p] and not ignored(p):
                out.append(("value", norm(p), f"{short(a['values'][p])} vs {short(b['values'][p])}"))
    del sa, sb
    for p in sorted(set(a["messages"]) | set(b["messages"])):
        ma, mb = a["messages"].get(p), b["messages"].get(p)
        if ma != mb and ma is not None and mb is not None:
            out.append(("message", norm(p), f"{short(ma, 300)!s} vs {short(mb, 300)!s}"))
    return out


def short(v, n=120):
    s = v if isinstance(v, str) else json.dumps(v)
    return s if len(s) <= n else s[: n - 1] + "…"


# ---------------------------------------------------------------------------------------------
# run


def load_corpus(directory, pattern):
    cases = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        try:
            with open(path) as f:
                docs = yaml.safe_load(f) or []
        except yaml.YAMLError as e:
            sys.exit(f"apidiff: {path}: not YAML: {e}")
        if not isinstance(docs, list):
            sys.exit(f"apidiff: {path}: want a list of cases")
        for i, case in enumerate(docs):
            where = f"{path}: case {i + 1}"
            if not isinstance(case, dict):
                sys.exit(f"{where}: want a mapping")
            unknown = set(case) - {"name", "about", "steps"}
            if unknown:
                sys.exit(f"{where}: unknown field {sorted(unknown)[0]!r}")
            if not case.get("name") or not isinstance(case.get("steps"), list) or not case["steps"]:
                sys.exit(f"{where}: want a name and steps")
            for j, step in enumerate(case["steps"]):
                if not isinstance(step, dict):
                    sys.exit(f"{where} ({case['name']}): step {j + 1}: want a mapping")
                unknown = set(step) - {"method", "path", "body", "contentType", "accept", "as", "watch", "compare", "ignore"}
                if unknown:
                    sys.exit(f"{where} ({case['name']}): step {j + 1}: unknown field {sorted(unknown)[0]!r}")
                if not step.get("method") or not str(step.get("path", "")).startswith("/"):
                    sys.exit(f"{where} ({case['name']}): step {j + 1}: want a method and a path starting with /")
                if step.get("as", "admin") not in ("admin", "user", "anonymous"):
                    sys.exit(f"{where} ({case['name']}): step {j + 1}: as: admin, user or anonymous, not {step['as']!r}")
            if fnmatch.fnmatch(case["name"], pattern):
                cases.append(case)
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"apidiff: case names must be unique: {sorted(dup)[0]} is given twice")
    return cases


def prepare_namespace(server, ns):
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    status, _, raw, _ = server.request("POST", "/api/v1/namespaces", body)
    if status != 201:
        raise RuntimeError(f"{server.name}: creating namespace {ns}: {status} {raw[:300]!r}")
    if server.request("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] != 200:
        return  # a server without a ServiceAccount controller (a difference the cases show)
    deadline = time.monotonic() + NAMESPACE_WAIT_SECONDS
    while time.monotonic() < deadline:  # admission wants the default ServiceAccount before a pod
        if server.request("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{server.name}: namespace {ns} has no default ServiceAccount after {NAMESPACE_WAIT_SECONDS} s")


def run_case(server, case, ns):
    ctx = Context(ns)
    prepare_namespace(server, ns)
    summaries = []
    for step in case["steps"]:
        path = ctx.text(step["path"])
        body = ctx.value(step.get("body"))
        if isinstance(body, (dict, list)) and "yaml" in (step.get("contentType") or ""):
            body = yaml.safe_dump(body)
        status, ctype, raw, events = server.request(step["method"], path, body, step.get("contentType"),
                                                    step.get("accept"), step.get("as", "admin"), step.get("watch"))
        parsed = None
        if raw and "json" in ctype:
            try:
                parsed = json.loads(raw)
            except ValueError:
                pass
        ctx.remember(step["method"], path, parsed)
        summaries.append(summarize(status, ctype, raw, events, body))
    server.request("DELETE", f"/api/v1/namespaces/{ns}")
    return summaries


def load_known(path):
    known = []
    if not path:
        return known
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            key, sep, reason = text.partition(" # ")  # keys hold '#' (CASE#STEP): the reason follows " # "
            if not sep or not reason.strip():
                sys.exit(f"apidiff: {path}:{n}: a known difference needs its reason after \" # \"")
            # `*` is the only wildcard (paths hold brackets): any run of characters. A key marked
            # "? " may occur or not (a controller's timing): it is never reported as stale.
            key = key.strip()
            optional = key.startswith("? ")
            key = key[2:].strip() if optional else key
            regex = re.compile(".*".join(re.escape(part) for part in key.split("*")))
            known.append({"glob": key, "regex": regex, "reason": reason.strip(), "line": n, "used": 0,
                          "optional": optional})
    return known


def cmd_run(args):
    if len(args.server) != 2:
        sys.exit("apidiff run: give --server NAME=URL twice (the first is the one checked)")
    tokens = {"admin": args.token, "user": args.user_token, "anonymous": None}
    servers = []
    for spec in args.server:
        name, _, url = spec.partition("=")
        if not url:
            sys.exit(f"apidiff run: --server {spec}: want NAME=URL")
        servers.append(Server(name, url, args.ca, tokens))
    cases = load_corpus(args.corpus, args.case)
    if not cases:
        sys.exit(f"apidiff run: no case in {args.corpus} matches {args.case}")
    known = load_known(args.known)
    run_id = args.run_id or format(int(time.time()) % 46656, "x")
    found = []  # (key, detail, known entry or None)
    start = time.monotonic()
    for i, case in enumerate(cases, 1):
        ns = f"ad-{run_id}-{i}"
        a = run_case(servers[0], case, ns)
        b = run_case(servers[1], case, ns)
        n_before = len(found)
        for j, (sa, sb) in enumerate(zip(a, b), 1):
            if case["steps"][j - 1].get("compare", True) is False:
                continue
            for cls, path, detail in differences(sa, sb, case["steps"][j - 1].get("ignore", [])):
                key = f"{case['name']}#{j} {cls} {path}".rstrip()
                entry = next((k for k in known if k["regex"].fullmatch(key)), None)
                if entry:
                    entry["used"] += 1
                found.append((key, detail, entry, case, j))
        if sys.stderr.isatty() or args.verbose:
            print(f"apidiff: [{i}/{len(cases)}] {case['name']}: {len(found) - n_before} differences "
                  f"({time.monotonic() - start:.0f} s)", file=sys.stderr)
    new = [f for f in found if f[2] is None and not f[0].split(" ")[1] == "message"]
    stale = [k for k in known if k["used"] == 0 and not k["optional"]]
    report = render_report(servers, cases, found, known, new, stale)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    counts = {}
    for key, *_ in found:
        cls = key.split(" ")[1]
        counts[cls] = counts.get(cls, 0) + 1
    steps = sum(len(c["steps"]) for c in cases)
    print(f"apidiff: {len(cases)} cases, {steps} requests on each server, {time.monotonic() - start:.0f} s; "
          f"differences: {', '.join(f'{v} {k}' for k, v in sorted(counts.items())) or 'none'}; "
          f"{len(new)} not in the known list, {len(stale)} known ones that no longer occur")
    for key, detail, _, _, _ in new:
        print(f"  new: {key}: {detail}")
    for k in stale:
        print(f"  no longer occurs: {args.known}:{k['line']}: {k['glob']}")
    return 1 if new or stale else 0


def render_report(servers, cases, found, known, new, stale):
    a, b = servers[0].name, servers[1].name
    lines = [f"# {a} against {b}, response by response", "",
             f"Generated by `tests/apidiff/apidiff.py run`: {len(cases)} cases, "
             f"{sum(len(c['steps']) for c in cases)} requests replayed on each server. "
             f"A difference reads \"{a}'s answer vs {b}'s\". Messages are listed but accepted.", ""]
    by_case = {}
    for item in found:
        by_case.setdefault(item[3]["name"], []).append(item)
    for case in cases:
        items = by_case.get(case["name"], [])
        lines.append(f"## {case['name']}")
        lines.append("")
        lines.append(case.get("about", "").strip())
        lines.append("")
        if not items:
            lines.append("No difference.")
            lines.append("")
            continue
        for key, detail, entry, _, j in items:
            step = case["steps"][j - 1]
            state = "known: " + entry["reason"] if entry else ("message" if " message " in key else "**new**")
            detail = detail.replace("|", "\\|")
            lines.append(f"* `{key}` ({step['method']} {step['path']}): {detail} — {state}")
        lines.append("")
    if stale:
        lines.append("## Known differences that no longer occur")
        lines.append("")
        lines += [f"* `{k['glob']}`" for k in stale]
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# record


def is_discovery(path):
    """/api, /api/v1, /apis, /apis/G, /apis/G/V, /openapi/..., /version: what clients read first."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if not parts or parts[0] in ("openapi", "version"):
        return True
    if parts[0] == "api":
        return len(parts) <= 2
    return parts[0] == "apis" and len(parts) <= 3


def cmd_record(args):
    target = Server("target", args.target, args.ca, {})
    lock = threading.Lock()
    steps = []
    ns_pattern = re.compile(r"/namespaces/([a-z0-9-]+)(/|$|\?)")
    seen_ns = {}

    def namespace_of(path):
        m = ns_pattern.search(path)
        return m.group(1) if m else None

    def templated(path):
        def sub(m):
            ns = m.group(1)
            return "/namespaces/{ns}" + m.group(2) if ns == args.namespace else m.group(0)
        path = ns_pattern.sub(sub, path)
        parts = urllib.parse.urlsplit(path)
        query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
                 if not (k == "resourceVersion" and "watch=" in parts.query)]
        return parts.path + ("?" + urllib.parse.urlencode(query, safe="=,:/") if query else "")

    def templated_body(path, body):
        if isinstance(body, dict):
            meta = body.get("metadata") or {}
            if meta.get("namespace") == args.namespace:
                meta["namespace"] = "{ns}"
            for key, tag in (("resourceVersion", "rv"), ("uid", "uid")):
                if key in meta:
                    meta[key] = "{" + tag + ":" + path.split("?")[0] + "}"
        return body

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            ctype, accept = self.headers.get("Content-Type"), self.headers.get("Accept")
            conn = target.connect(timeout=300)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            conn.request(self.command, self.path, body=data, headers=headers)
            resp = conn.getresponse()
            watch = "watch=true" in self.path or "watch=1" in self.path
            keep = not (args.skip_discovery and is_discovery(self.path))
            body = None
            if data:
                try:
                    body = json.loads(data) if "yaml" not in (ctype or "") else yaml.safe_load(data)
                except ValueError:
                    body = data.decode(errors="replace")
            step = {"method": self.command, "path": templated(self.path)}
            if body is not None:
                step["body"] = templated_body(step["path"], body)
                if ctype and not ctype.startswith("application/json"):
                    step["contentType"] = ctype.split(";")[0]
            if accept and accept not in ("application/json", "*/*"):
                step["accept"] = accept
            if watch:
                step["watch"] = {"seconds": 1}
            if keep:
                with lock:
                    steps.append(step)
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            if watch:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while True:
                        line = resp.readline()
                        if not line:
                            break
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass
            else:
                payload = resp.read()
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            conn.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", args.listen), Handler)
    print(f"apidiff record: http://127.0.0.1:{httpd.server_port} -> {args.target}; Ctrl-C writes {args.out}",
          file=sys.stderr, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        # Requests of the recording's own bookkeeping (discovery, OpenAPI) are kept: clients send them.
        case = {"name": args.name, "about": args.about, "steps": steps}
        with open(args.out, "w") as f:
            yaml.safe_dump([case], f, sort_keys=False, width=120)
        print(f"apidiff record: {len(steps)} requests written to {args.out}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="replay the corpus against two servers and compare")
    run.add_argument("--server", action="append", default=[], help="NAME=URL; twice, the checked server first")
    run.add_argument("--token", required=True, help="an administrator's bearer token, valid on both")
    run.add_argument("--user-token", help="a bearer token of a user with no role, valid on both")
    run.add_argument("--ca", help="CA of the HTTPS server(s)")
    run.add_argument("--corpus", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
    run.add_argument("--known", help="the known-differences file")
    run.add_argument("--report", help="write the markdown report here")
    run.add_argument("--case", default="*", help="only the cases whose name matches this glob")
    run.add_argument("--run-id", help="namespaces are ad-RUNID-N (default: from the time)")
    run.add_argument("--verbose", action="store_true", help="progress on standard error")
    rec = sub.add_parser("record", help="a recording proxy")
    rec.add_argument("--target", required=True)
    rec.add_argument("--ca")
    rec.add_argument("--listen", type=int, default=0)
    rec.add_argument("--out", required=True)
    rec.add_argument("--name", default="recorded")
    rec.add_argument("--about", default="requests recorded from a client session")
    rec.add_argument("--namespace", default="default", help="the namespace that becomes {ns}")
    rec.add_argument("--skip-discovery", action="store_true", help="leave discovery and OpenAPI requests out")
    args = parser.parse_args()
    if args.command == "run":
        sys.exit(cmd_run(args))
    cmd_record(args)


if __name__ == "__main__":
    main()
