"""What the commands share: the one-line error, the progress bar, tables, ``--env`` names."""

import argparse
import contextlib
import math
import os
import shutil
import signal
import sys
import time

PROG = "vecenv"
GYM_PREFIX = "gym."


class CliError(Exception):
    """A problem with what was asked for: printed as one line, exit status 2."""


def resolve_env(name):
    """``(gymnasium id, whose)`` for ``--env``: whose is "vecenv" or "gymnasium"."""
    from vecenv import registry

    if name.startswith(GYM_PREFIX):
        env_id = name[len(GYM_PREFIX) :]
        if not env_id:
            raise CliError(f"missing environment id after {GYM_PREFIX!r}")
        return env_id, "gymnasium"
    try:
        spec = registry.get_spec(name)
    except ValueError as e:
        raise CliError(f"{e} (or {GYM_PREFIX}<Id> for Gymnasium's own)") from None
    gym_id = spec.gym.get("id")
    if not gym_id:
        raise CliError(f"{spec.name} has no Gymnasium id, so no gymnasium.Env to play")
    return f"vecenv/{gym_id}", "vecenv"


def parse_ints(text, what):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CliError(f"{what} must be comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise CliError(f"{what} must be positive integers, got {text!r}")
    return values


# -- numbers on the command line: argparse types, so a bad value is a usage error (exit 2) ---------


def _number(kind, low, high=math.inf, low_included=True, what=None):
    """An argparse type: a finite ``kind`` (int or float) in [low, high] (low excluded unless
    ``low_included``)."""

    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what or kind.__name__}: {text!r}") from None
        inside = (low <= value if low_included else low < value) and value <= high
        if not inside or math.isnan(value) or math.isinf(value):
            left, right = "[" if low_included else "(", ")" if math.isinf(high) else "]"
            raise argparse.ArgumentTypeError(
                f"must be in {left}{low:g}, {high:g}{right}, got {text}"
            )
        return value

    parse.__name__ = what or kind.__name__  # argparse names the type in its messages
    return parse


positive_int = _number(int, 1, what="an integer")
count = _number(int, 0, what="an integer")  # zero allowed: none
seed = _number(int, 0, 2**63 - 1, what="an integer")
positive_float = _number(float, 0, low_included=False, what="a number")
non_negative_float = _number(float, 0, what="a number")
discount = _number(float, 0, 1, low_included=False, what="a number")
finite_float = _number(float, -math.inf, what="a number")
unit_interval = _number(float, 0, 1, what="a number")
port = _number(int, 0, 65535, what="a port")


# -- stopping a run ------------------------------------------------------------------------------

SIGTERM_STATUS = 128 + signal.SIGTERM  # the shell's status of a process a SIGTERM ended


@contextlib.contextmanager
def stop_on_sigterm():
    """SIGTERM (a scheduler's or a container's stop, ``kill``) ends a run as Ctrl-C does: the run
    stops where it is and saves what it learned. Yields a list that holds the signal once one
    came; further SIGTERMs while the run saves are ignored. Outside the main thread (where no
    handler can be set) it does nothing."""
    came = []

    def stop(signum, frame):
        if came:
            return
        came.append(signum)
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread
        yield came
        return
    try:
        yield came
    finally:
        signal.signal(signal.SIGTERM, previous)


# -- output paths: checked before any work, so a run is not lost to a typo in where it goes ------


def check_output_file(path, flag):
    """CliError unless ``path`` can be written as a file: its folder exists and is writable, and
    it is no folder itself."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CliError(f"{flag} {path!r} is a directory, not a file")
    if not os.path.isdir(folder):
        raise CliError(f"{flag} {path!r}: no directory {folder!r} to write it in")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CliError(f"{flag} {path!r} is not writable")


def make_output_dir(path, flag):
    """Create the directory ``path`` (and its parents) now, or CliError saying why not."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CliError(f"{flag} {path!r} cannot be created: {e.strerror or e}") from None
    if not os.access(path, os.W_OK):
        raise CliError(f"{flag} {path!r} is not writable")


def run_folder(given, default, force=False):
    """The folder a training run writes, made now: ``given`` (``--run-dir``), refused where it
    holds a previous run's files unless ``force``; else ``default``, or where that holds a previous
    run, the first of ``default``-run2, -run3, ... that does not. A run never overwrites another
    silently."""
    if given is not None:
        if _holds_files(given) and not force:
            raise CliError(
                f"--run-dir {given!r} holds a previous run: give another folder, or --force to "
                "write over it"
            )
        path = given
    else:
        path, k = default, 2
        while _holds_files(path) and not force:
            path, k = f"{default}-run{k}", k + 1
    make_output_dir(path, "--run-dir")
    return path


def _holds_files(path):
    try:
        return os.path.isdir(path) and any(os.scandir(path))
    except OSError:
        return False  # make_output_dir says why it cannot be used


# -- games and clusters --------------------------------------------------------------------------


def two_agent_games():
    """The registered two-agent games, for the help of the commands that play them."""
    from vecenv import registry

    return sorted(name for name, spec in registry.specs().items() if spec.num_agents == 2)


def several_agent_games():
    """The registered games of two or more agents, for the help of ``play`` and ``tournament``."""
    from vecenv import registry

    return sorted(name for name, spec in registry.specs().items() if spec.num_agents >= 2)


def connect_ray(address):
    """Connect to the Ray cluster that ``--ray`` names, or CliError saying why not: 'auto' is the
    cluster running on this machine, or a new local one where none runs; a host:port that does
    not answer fails within the cluster module's connect timeout."""
    from vecenv.ray import cluster

    try:
        if address == "auto":
            try:
                return cluster.connect("auto")
            except ConnectionError:  # no cluster running here: start one
                return cluster.connect(None)
        return cluster.connect(address)
    except (ConnectionError, ImportError, ValueError, TimeoutError) as e:
        raise CliError(f"--ray {address}: {e}") from None


def print_table(rows, headers, out, right=()):
    """Rows of strings under headers, columns padded; columns in ``right`` right-aligned."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]

    def line(cells):
        padded = [
            str(c).rjust(w) if i in right else str(c).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    print(line(headers), file=out)
    for row in rows:
        print(line(row), file=out)


# -- progress ------------------------------------------------------------------------------------


class Progress:
    """A one-line progress bar on a terminal; silent when the stream is not a terminal."""

    def __init__(self, total, label="", stream=None, enabled=None, interval=0.1, width=24):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.total, self.label, self.interval, self.width = total, label, interval, width
        self._last = 0.0
        self._shown = False

    def update(self, done, note="", force=False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        filled = int(self.width * min(done, self.total) / max(self.total, 1))
        bar = "#" * filled + "-" * (self.width - filled)
        text = f"{self.label} [{bar}] {done}/{self.total} {note}".rstrip()
        columns = shutil.get_terminal_size((80, 24)).columns
        self.stream.write("\r" + text[: max(columns - 1, 10)] + "\x1b[K")
        self.stream.flush()
        self._shown = True

    def clear(self):
        """Erase the bar (before other output goes to the same terminal)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
            self._last = 0.0


def si(x):
    """A rate with three significant digits and a k/M/G suffix."""
    if x is None or not math.isfinite(x):
        return "-"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:.3g}"


def precision_option(parser):
    """``--precision``: the float precision of a floating-point game's rules (the engine's)."""
    parser.add_argument(
        "--precision",
        choices=("float64", "float32"),
        default="float64",
        help="float64 (default: exact to the reference) or float32 (docs/precision.md)",
    )
