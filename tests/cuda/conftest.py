"""The CUDA tests' worker processes: the simulator's checks (``tests.cuda.simulated``, which needs
numba.cuda imported in simulator mode) and the PTX compiles (``tests.cuda.compiled``), each kind
with the games split between two processes, while the test modules wait for the results they read.

They start as soon as collection finds a test that reads them, at a lower priority than the test
processes, so they use what CPU the tests leave and are mostly done when the first CUDA test asks
for their results. They start once a session: under pytest-xdist every worker collects every
test, and the first to publish its processes' folder in the session's scratch folder wins (the
others stop theirs at once); whichever worker runs the CUDA tests reads that folder. They share
the session's caches, under ``tests.cachelock``'s lock, as the test processes do."""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import vecenv
from tests import processes

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 2  # NVVM's compiles and the simulator's Python: each kind's games over two processes
NICENESS = 5  # below the test processes, yet done well before the suite is: see tests/conftest.py
DONE = '{"done": true}'  # a worker's last line, once every game's row is out
KINDS = {"simulated": ("tests.cuda.simulated", True), "compiled": ("tests.cuda.compiled", False)}


class Worker:
    """One worker process's output file. Whoever starts the process locks the file first and the
    process inherits the lock, held until it exits (the OS drops it then, however it ends): a
    reader's shared lock waits for exactly that."""

    def __init__(self, folder, name):
        self.out = folder / f"{name}.jsonl"
        self.err = folder / f"{name}.err"

    def start(self, module, games, simulator):
        env = dict(os.environ, PYTHONWARNINGS="ignore")
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        if simulator:
            env["NUMBA_ENABLE_CUDASIM"] = "1"
        script = f"import runpy; runpy.run_module({module!r}, run_name='__main__'); print({DONE!r})"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            fcntl.flock(out, fcntl.LOCK_EX)  # before the process exists: no reader sees it unlocked
            return subprocess.Popen(
                [sys.executable, "-c", script, *games],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=err,
                text=True,
                preexec_fn=lambda: os.nice(NICENESS),
                start_new_session=True,  # its own group: stopped whole (tests/processes.py)
            )

    def rows(self):
        """The JSON lines it printed, once it has finished (it must have finished them all)."""
        with open(self.out) as out:
            fcntl.flock(out, fcntl.LOCK_SH)
            lines = out.read().splitlines()
        assert lines and lines[-1] == DONE, self.err.read_text()[-4000:]
        return [json.loads(line) for line in lines[:-1] if line.startswith("{")]


def _named(folder):
    return {kind: [Worker(folder, f"{kind}-{k}") for k in range(PROCESSES)] for kind in KINDS}


def _workers(games=None):
    """The session's workers, started here (on ``games``, else every game) unless another test
    process published theirs first."""
    final = processes.session_folder("cuda-workers")
    if final.exists():
        return _named(final)
    # Started in a folder of this process's own, published whole by one rename: a reader never
    # finds a folder whose processes are not all running with their files locked.
    draft = Path(tempfile.mkdtemp(prefix=final.name + "-", dir=final.parent))
    games = vecenv.list_envs() if games is None else games
    pids = []
    for kind, (module, simulator) in KINDS.items():
        for k, worker in enumerate(_named(draft)[kind]):
            pids.append(worker.start(module, games[k::PROCESSES], simulator).pid)
    try:
        draft.rename(final)
    except OSError:  # another test process published first: theirs serve
        processes.stop(pids)
        shutil.rmtree(draft, ignore_errors=True)
    else:
        processes.register(pids)  # stopped at the session's end if still running
    return _named(final)


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    readers = [i for i in session.items if "cuda_workers" in getattr(i, "fixturenames", ())]
    if readers:
        _workers(_games_read(readers))


def _games_read(readers):
    """The games the selected tests read rows of (``pytest -k connectx`` compiles connectx's
    kernels alone), in the registry's order; every game where one reads them all."""
    games = set()
    for item in readers:
        game = getattr(item, "callspec", None) and item.callspec.params.get("game")
        if game is None:
            return None
        games.add(game)
    return [game for game in vecenv.list_envs() if game in games]


@pytest.fixture(scope="session")
def cuda_workers():
    return _workers()
