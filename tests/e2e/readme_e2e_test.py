#!/usr/bin/python3
"""The README's stories, run as a new user runs them: every `$ ` command of its `console` blocks,
verbatim and in order, in a shell whose working directory looks like a checkout (examples/ and
build/bin/arbiter) with a fresh `arbiter serve` whose data directory is ./arbiter-data; then
every example applied to a server of its own.

Each command must exit 0 within its time (a `kubectl get -w`, which the README ends with ^C, is
stopped after a few seconds); lines the README prints that do not change from run to run
(`node/node-1 created`, `deployment "batch" successfully rolled out`, `yes`) must be printed;
`arbiter plan`'s table, which is deterministic, must be printed exactly.

Run: readme_e2e_test.py ARBITER_BINARY
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_e2e_test  # noqa: E402  (the Server harness)
from serve_e2e_test import Server  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KUBECTL = serve_e2e_test.KUBECTL

# A line of a command's output that is the same in every run: kubectl's "KIND/NAME verb" lines,
# a rollout's end, a yes or no.
STABLE = re.compile(r'^([a-z.]+/[a-z0-9.-]+ (created|deleted|unchanged|configured)|'
                    r'pod "[a-z0-9-]+" deleted|deployment "[a-z0-9-]+" successfully rolled out|yes|no)$')


def readme_commands():
    """The README's console blocks: a list of (line number, command, expected output lines)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        lines = f.read().split("\n")
    out, in_console, indent = [], False, ""
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            # A block may be indented under a list item; its lines carry the same indent.
            in_console = line.strip() == "```console"
            indent = line[:len(line) - len(line.lstrip())]
            continue
        if not in_console:
            continue
        line = line[len(indent):] if line.startswith(indent) else line
        if line.startswith("$ "):
            out.append((number, line[2:], []))
        elif out and line != "^C":
            out[-1][2].append(line)
    return out


class ReadmeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.work = self.tmp.name
        # A checkout as the README's reader has it: examples/ and build/bin/arbiter.
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(self.work, "examples"))
        os.makedirs(os.path.join(self.work, "build", "bin"))
        os.symlink(os.path.abspath(serve_e2e_test.ARBITER), os.path.join(self.work, "build", "bin", "arbiter"))
        data = os.path.join(self.work, "arbiter-data")
        os.makedirs(data, mode=0o700)
        self.server = Server(data).start()

    def tearDown(self):
        self.server.stop()
        self.tmp.cleanup()

    def run_in_shell(self, script, timeout):
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        if KUBECTL != "kubectl":  # the README says kubectl: make that name the chosen one
            bin_dir = os.path.join(self.work, "kubectl-bin")
            os.makedirs(bin_dir, exist_ok=True)
            if not os.path.exists(os.path.join(bin_dir, "kubectl")):
                os.symlink(KUBECTL, os.path.join(bin_dir, "kubectl"))
            env["PATH"] = bin_dir + ":" + env["PATH"]
        return subprocess.run(["bash", "-c", script], cwd=self.work, env=env, capture_output=True, text=True,
                              timeout=timeout)

    def test_every_readme_command_runs_in_order_on_a_fresh_server(self):
        commands = readme_commands()
        self.assertGreater(len(commands), 10, "the README's console blocks were not found")
        exports = ""
        for number, command, expected in commands:
            with self.subTest(line=number, command=command):
                if command.startswith("export "):
                    exports += command + "\n"
                    continue
                watch = re.search(r"\s-w(\s|$)", command) is not None
                # A watch runs until ^C: a few seconds, and its end by timeout (124) is its success.
                script = exports + re.sub(r"(kubectl [^&|;]*\s-w)(?=\s|$)", r"timeout 8 \1", command)
                r = self.run_in_shell(script, timeout=120)
                ok = r.returncode == 0 or (watch and r.returncode == 124)
                self.assertTrue(ok, f"README line {number}: `{command}` exited {r.returncode}:\n{r.stdout}\n{r.stderr}\n"
                                    f"server log:\n{self.server.log_tail()}")
                printed = [line.strip() for line in r.stdout.split("\n")]
                for line in expected:
                    if STABLE.match(line.strip()):
                        self.assertIn(line.strip(), printed, f"README line {number}: `{command}` did not print {line!r}:\n"
                                                             f"{r.stdout}")
                if command.startswith("build/bin/arbiter plan"):
                    self.assertEqual(r.stdout.rstrip("\n").split("\n"), expected,
                                     f"README line {number}: the plan differs from the README's")


class ExamplesTest(unittest.TestCase):
    def test_every_example_applies_to_a_fresh_server(self):
        files = sorted(glob.glob(os.path.join(ROOT, "examples", "*", "*.yaml")))
        self.assertGreater(len(files), 5)
        for directory in sorted({os.path.dirname(f) for f in files}):
            with self.subTest(example=os.path.basename(directory)), tempfile.TemporaryDirectory() as tmp:
                server = Server(tmp).start()
                try:
                    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
                        r = subprocess.run([KUBECTL, "apply", "-f", path], capture_output=True, text=True, timeout=60,
                                           env={**os.environ, "KUBECONFIG": os.path.join(tmp, "kubeconfig")})
                        self.assertEqual(r.returncode, 0, f"kubectl apply -f {path}: {r.stderr}")
                finally:
                    server.stop()


if __name__ == "__main__":
    if len(sys.argv) > 1:
        serve_e2e_test.ARBITER = os.path.abspath(sys.argv.pop(1))
    unittest.main()
