"""Two builds of vecenv timed in the same run, in worker processes, their rounds alternating.

Each build runs in its own worker process (``ab_worker.py`` with ``PYTHONPATH`` on the build's
tree and its own ``VECENV_CACHE_DIR`` when given: numba's cache entries are keyed by the source
file's path and content, so the two trees never share one anyway). The parent asks them for rounds
in turn, A B, B A, A B, ...: while one times a round the other waits on its pipe, so they never
compete for a core, and the pairs of rounds see the same spells of load (``vecenv.perf.paired``).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = Path(__file__).with_name("ab_worker.py")


class WorkerError(RuntimeError):
    """A worker failed: its message, and what it printed last."""


class Worker:
    def __init__(self, name, tree, cache_dir=None):
        self.name, self.tree = name, Path(tree)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(self.tree)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        if cache_dir is not None:
            env["VECENV_CACHE_DIR"] = str(cache_dir)
        # A file, not a pipe: a build that prints a lot to stderr must not block on a full pipe.
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER)],
            cwd=self.tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            bufsize=1,
        )

    def ask(self, **request):
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            self.proc.wait()
            self.log.seek(0)
            tail = self.log.read()[-2000:].strip()
            self.close()
            raise WorkerError(f"the {self.name} worker exited: {tail or 'no message'}")
        answer = json.loads(line)
        if "error" in answer:
            raise WorkerError(f"the {self.name} build: {answer['error']}")
        return answer

    def start_case(self, **case):
        """Make the case's engine and run its warm-up rounds; checks the build is this tree's."""
        found = Path(self.ask(op="case", **case)["vecenv"]).resolve()
        if self.tree.resolve() not in found.parents:
            raise WorkerError(f"the {self.name} worker imported vecenv from {found}, not its tree")

    def round(self):
        return float(self.ask(op="round")["seconds"])

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"op": "quit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def alternate(a, b, rounds):
    """``rounds`` paired rounds of workers ``a`` and ``b`` (orders A B, B A, ... so that neither
    always goes first); ``(a's seconds, b's seconds)``."""
    times = ([], [])
    for r in range(rounds):
        order = ((0, a), (1, b)) if r % 2 == 0 else ((1, b), (0, a))
        for side, worker in order:
            times[side].append(worker.round())
    return times
