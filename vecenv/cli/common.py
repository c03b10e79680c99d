"""What the commands share: the one-line error, the progress bar, tables, ``--env`` names."""

import shutil
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
