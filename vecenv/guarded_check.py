"""``vecenv check`` runs the contract (``vecenv.testing``) in a child process, so that rules which
loop forever or write out of bounds cannot take the command with them: a check with no result
after the time limit fails as "timed out", a child killed by a signal (SIGSEGV) fails the check it
was running; either way the table is printed, the checks left over reported as not run.

The child says on its stdout (one JSON line each) when a check starts and how it ended, and has
``faulthandler`` write where it stands (the Python frames around the compiled call) to a file when
it crashes or the parent signals it (SIGUSR1) on a timeout: that names the engine's function
(``Engine.step``, ``Engine.reset``, ...) the rules went wrong in.
"""

import contextlib
import dataclasses
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import registry, testing

DEFAULT_TIMEOUT = 300.0  # seconds a check may take, compiling the game's loops included
FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')
DUMP_WAIT = 5.0  # seconds for the child to write where it stands once signalled


def game_name(game):
    """``(name, folder)`` of the game ``run_checks`` is given, without running any of its code:
    a game folder (``testing.is_folder``) is only looked at here, its name checked (GameError
    where it is no folder or no game's name); a game's name is resolved (ValueError where
    unknown), its folder None unless it was registered at run time."""
    if testing.is_folder(game):
        folder = Path(game).resolve()
        if not folder.is_dir():
            raise registry.GameError(f"{folder}: no such game folder")
        try:
            name = registry.check_name(folder.name)
        except registry.GameError as exc:
            raise registry.GameError(f"{folder}: {exc}") from None
        other = registry.taken(name)
        if other is not None and other.folder != folder:
            raise registry.GameError(
                f"{folder}: a game named {other.name!r} is already known, from {other.folder} "
                f"({other.origin})"
            )
        return name, str(folder)
    name = registry.resolve(game)
    found = registry.get_game(name)
    return name, str(found.folder) if found.origin == "registered" else None


def run_checks(game, checks=None, timeout=DEFAULT_TIMEOUT):
    """``testing.run_checks`` in a child process, each check given ``timeout`` seconds. A game
    folder is registered in the child, never here: its ``__init__.py``, its specification and
    its rules' module-level code are bounded as its checks are (the start counts toward the
    first check)."""
    name, folder = game_name(game)
    checks = list(checks or testing.CHECKS)
    order = {"game": name, "folder": folder, "checks": checks}
    results = []
    with tempfile.TemporaryDirectory(prefix="vecenv-check-") as tmp:
        order["dump"] = str(Path(tmp) / "where")
        child = subprocess.Popen(
            [sys.executable, "-m", __name__, json.dumps(order)],
            stdout=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        try:
            ending = _follow(child, checks, timeout, results, Path(order["dump"]))
        finally:
            if child.poll() is None:  # a timeout, or Ctrl-C here
                child.kill()
            child.wait()
            child.stdout.close()
    for check in checks[len(results) :]:
        results.append(testing.Result(check, "skip", f"not run: {ending}", 0.0))
    return results


def _follow(child, checks, timeout, results, dump):
    """Collect the child's results into ``results``; return what ended it early, if it did."""
    lines = queue.Queue()

    def read():
        for line in child.stdout:
            lines.put(json.loads(line))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    current, started = checks[0], time.monotonic()  # starting up counts toward the first check
    while True:
        try:
            message = lines.get(timeout=max(0.0, started + timeout - time.monotonic()))
        except queue.Empty:
            where = _where(child, dump)
            detail = f"timed out: no result after {timeout:g} s (an endless loop?){where}"
            results.append(testing.Result(current, "fail", detail, time.monotonic() - started))
            return f"{current!r} timed out"
        if message is None:  # the child ended
            code = child.wait()
            if len(results) == len(checks):
                return None
            how = (
                f"killed by {signal.Signals(-code).name}"
                if code < 0 and -code in signal.valid_signals()
                else f"ended with exit status {code}"
            )
            detail = f"crashed: the check's process was {how}{_where(child, dump)}"
            results.append(testing.Result(current, "fail", detail, time.monotonic() - started))
            return f"the process running {current!r} crashed"
        if "start" in message:
            current, started = message["start"], time.monotonic()
        else:
            results.append(testing.Result(**message["result"]))


def _where(child, dump):
    """ ", in Engine._step (engine.py:392) < Engine.step < check_batch": the engine's frames and the
    check's that faulthandler wrote (a child that timed out is asked to write them first)."""
    if child.poll() is None and hasattr(signal, "SIGUSR1"):
        child.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + DUMP_WAIT
        while time.monotonic() < deadline and not _complete(dump):
            time.sleep(0.05)
    with contextlib.suppress(OSError):
        # Per thread, most recent call first: the thread whose frames reach a check.
        for block in dump.read_text(errors="replace").split("\n\n"):
            frames = [m.groupdict() for m in FRAME.finditer(block)]
            engine = [f for f in frames if Path(f["file"]).name == "engine.py"]
            check = [f for f in frames if f["function"].startswith("check_")]
            if check:
                names = [f"Engine.{f['function']}" for f in engine] + [check[0]["function"]]
                if engine:
                    names[0] += f" ({Path(engine[0]['file']).name}:{engine[0]['line']})"
                return ", in " + " < ".join(names)
    return ""


def _complete(dump):
    with contextlib.suppress(OSError):
        return "check_" in dump.read_text(errors="replace")
    return False


def _child_env():
    """This process's environment, with the vecenv it runs importable first in the child."""
    here = str(Path(__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [here, path])))


def _child(order):
    import faulthandler

    order = json.loads(order)
    # The channel is this process's stdout; what the game or a library prints goes to stderr.
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it ends this process
    dump = open(order["dump"], "w")  # noqa: SIM115 - open for faulthandler until the process ends
    faulthandler.enable(dump, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, dump, all_threads=True)
    if order["folder"]:
        import vecenv

        try:
            vecenv.register(order["folder"])
        except Exception as exc:  # a folder that is no game: its first check fails saying why
            channel.write(json.dumps({"start": order["checks"][0]}) + "\n")
            failed = testing.Result(order["checks"][0], "fail", f"{type(exc).__name__}: {exc}", 0.0)
            channel.write(json.dumps({"result": dataclasses.asdict(failed)}) + "\n")
            channel.close()
            return
    for check in order["checks"]:
        channel.write(json.dumps({"start": check}) + "\n")
        result = testing.run_checks(order["game"], [check])[0]
        channel.write(json.dumps({"result": dataclasses.asdict(result)}) + "\n")
    channel.close()


if __name__ == "__main__":
    _child(sys.argv[1])
