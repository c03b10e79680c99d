"""Processes a test session starts and leaves to run on their own (the CUDA tests' workers): each
registers its process group in the session's scratch folder, and the session's controlling process
(the one process without pytest-xdist) stops what is still running when the session ends: not
the worker that started them, which may end while another worker still reads their results."""

import contextlib
import os
import signal
import tempfile
import time
from pathlib import Path

SESSION = "VECENV_TESTS_SESSION"


def new_session():
    """Called by a session's own process (not a pytest-xdist worker, which inherits it): a name of
    this session, never a parent session's (a test may run pytest again inside)."""
    os.environ[SESSION] = f"{os.getpid()}-{time.time_ns()}"


def session_folder(name):
    """``name`` in the session's scratch folder, with the session's name on it."""
    scratch = os.environ.get("VECENV_TESTS_SCRATCH") or tempfile.gettempdir()
    return Path(scratch) / f"{name}-{os.environ.get(SESSION) or os.getpid()}"


def _folder():
    return session_folder("left-running")


def register(pids):
    """Record process groups (each a process started with ``start_new_session=True``)."""
    folder = _folder()
    folder.mkdir(parents=True, exist_ok=True)
    for pid in pids:
        (folder / str(pid)).touch()


def stop(pids):
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def stop_registered():
    folder = _folder()
    if folder.is_dir():
        stop(int(path.name) for path in folder.iterdir())
