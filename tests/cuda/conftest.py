"""The CUDA tests' worker processes, started together at first use: the simulator's checks
(``tests.cuda.simulated``, which needs numba.cuda imported in simulator mode) and the PTX
compiles (``tests.cuda.compiled``, the games split between two processes) run side by side, as
many at once as there are cores for, while the test modules wait for the results they read."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import vecenv

ROOT = Path(__file__).resolve().parents[2]
COMPILE_WORKERS = 2  # NVVM's compiles take most of the time: the games split between processes
TIMEOUT = 900


class Worker:
    def __init__(self, module, args, simulator):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        if simulator:
            env["NUMBA_ENABLE_CUDASIM"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._rows = None

    def rows(self):
        """The JSON lines it printed, once it has finished (it must succeed)."""
        if self._rows is None:
            out, err = self.proc.communicate(timeout=TIMEOUT)
            assert self.proc.returncode == 0, err[-4000:]
            self._rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return self._rows


@pytest.fixture(scope="session")
def cuda_workers():
    games = vecenv.list_envs()
    workers = {
        "simulated": [Worker("tests.cuda.simulated", [], simulator=True)],
        "compiled": [
            Worker("tests.cuda.compiled", games[k::COMPILE_WORKERS], simulator=False)
            for k in range(COMPILE_WORKERS)
        ],
    }
    yield workers
    for group in workers.values():
        for worker in group:
            if worker.proc.poll() is None:
                worker.proc.kill()
                worker.proc.communicate()
