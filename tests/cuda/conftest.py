"""The CUDA tests' worker processes: the simulator's checks (``tests.cuda.simulated``, which needs
numba.cuda imported in simulator mode) and the PTX compiles (``tests.cuda.compiled``, the games
split between two processes), while the test modules wait for the results they read.

They start as soon as collection finds a test that reads them, at a lower priority than the test
process: the suite runs one test at a time, so they use the core it leaves idle while the tests
before them run, and are mostly done when the first CUDA test asks for their results. They share
the session's caches, under ``tests.cachelock``'s lock, as the test process does."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import vecenv

ROOT = Path(__file__).resolve().parents[2]
COMPILE_WORKERS = 2  # NVVM's compiles take most of the time: the games split between processes
TIMEOUT = 900
NICENESS = 10  # below the test process, which must not wait for them while they run early


class Worker:
    def __init__(self, module, args, simulator):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        if simulator:
            env["NUMBA_ENABLE_CUDASIM"] = "1"
        # Files, not pipes: nothing reads them until the tests ask, and a full pipe would block.
        self.out = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed by stop)
        self.err = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=ROOT,
            env=env,
            stdout=self.out,
            stderr=self.err,
            text=True,
            preexec_fn=lambda: os.nice(NICENESS),
        )
        self._rows = None

    def rows(self):
        """The JSON lines it printed, once it has finished (it must succeed)."""
        if self._rows is None:
            self.proc.wait(timeout=TIMEOUT)
            self.out.seek(0)
            self.err.seek(0)
            assert self.proc.returncode == 0, self.err.read()[-4000:]
            out = self.out.read()
            self._rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return self._rows

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()


_started = None


def _workers():
    global _started
    if _started is None:
        games = vecenv.list_envs()
        _started = {
            "simulated": [Worker("tests.cuda.simulated", [], simulator=True)],
            "compiled": [
                Worker("tests.cuda.compiled", games[k::COMPILE_WORKERS], simulator=False)
                for k in range(COMPILE_WORKERS)
            ],
        }
    return _started


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    if any("cuda_workers" in getattr(item, "fixturenames", ()) for item in session.items):
        _workers()


@pytest.fixture(scope="session")
def cuda_workers():
    return _workers()


def pytest_unconfigure(config):
    global _started
    if _started is not None:
        for group in _started.values():
            for worker in group:
                worker.stop()
        _started = None
