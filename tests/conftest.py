import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# One driver cache per test session, so tests never depend on what an earlier run compiled; the
# session still shares it between tests (compiling each game once). A cache named by the caller
# (VECENV_CACHE_DIR: .ci/run's, filled by `vecenv warm` just before) is used as it is.
# Stable-Baselines3 writes a folder of logs for every `learn` (in the system's temporary folder
# unless told): the session's scratch folder takes them, and goes when the process that made it
# exits (pytest-xdist's workers inherit the variables, so only the first process makes one).
if "VECENV_TESTS_SCRATCH" not in os.environ:
    _scratch = tempfile.mkdtemp(prefix="vecenv-tests-")
    atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
    os.environ["VECENV_TESTS_SCRATCH"] = _scratch
    os.environ.setdefault("VECENV_CACHE_DIR", os.path.join(_scratch, "cache"))
    os.environ.setdefault("SB3_LOGDIR", os.path.join(_scratch, "sb3"))
# The tests' Ray clusters talk over the loopback address only (tests/raycluster.py); Ray reads this
# when it is imported, so it is set before any test imports it. Their subprocesses inherit it.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

from . import cachelock, isolated, processes  # noqa: E402
from .browser import browser  # noqa: E402, F401  (a fixture for every test module)

# The CUDA tests' workers compile beside this process into the same caches (tests/cuda/conftest.py).
cachelock.install()

# kaggle-environments is installed apart, on its first import (see tests/isolated.py).
isolated.kaggle_on_import()

# In CI (.ci/run sets CI=1) hypothesis draws the same examples every run: a verdict on `main`
# never depends on the draw. Locally it explores afresh each run and remembers its failures.
if os.environ.get("CI"):
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _forget_registered_games():
    """Games a test registers at run time are forgotten after it, so no other test sees them."""
    yield
    import vecenv
    from vecenv import registry

    for name, game in registry.games().items():
        if game.origin == "registered":
            vecenv.unregister(name)


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the session's own process; its workers inherit it
        processes.new_session()


def pytest_collection_modifyitems(session, config, items):
    """The CUDA tests last: the processes they read (tests/cuda/conftest.py) start at collection
    and run beside the rest of the suite, so no test process waits for them at the end."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/cuda/"))


_warmup = None


def pytest_collection_finish(session):
    """Start ``tests.warmup`` on the engines the collected modules declare in ``WARM``, in the
    order the modules run (not under pytest-xdist, whose second worker keeps that core busy)."""
    global _warmup
    if session.config.option.collectonly or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    pairs, seen = [], set()
    for module in dict.fromkeys(getattr(item, "module", None) for item in session.items):
        for game, configuration in getattr(module, "WARM", ()):
            key = json.dumps([game, configuration], sort_keys=True)
            if key not in seen:
                seen.add(key)
                pairs.append([game, configuration])
    if pairs:
        _warmup = subprocess.Popen(
            [sys.executable, "-m", "tests.warmup", json.dumps(pairs)],
            cwd=Path(__file__).resolve().parents[1],
            env=dict(os.environ, PYTHONWARNINGS="ignore"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: os.nice(10),  # below the test process: it uses the idle core
        )


def pytest_unconfigure(config):
    global _warmup
    if not hasattr(config, "workerinput"):  # the session's controlling process
        processes.stop_registered()
    if _warmup is not None:
        if _warmup.poll() is None:
            _warmup.kill()
        _warmup.wait()
        _warmup = None
