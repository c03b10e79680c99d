"""The ``vecenv`` command line: list the games, play episodes with an agent, benchmark.

    vecenv list
    vecenv train random --env CartPole-v1 --episodes 10 [--seed S] [--render] [--render-to F]
    vecenv bench --env CartPole-v1 --num-envs 1,64,4096 --threads 1,2 [--steps K | --seconds S]
    vecenv play connectx --agents negamax random --matches 10000 [--replay FILE.html]
    vecenv arena serve | env add | agent add | agents | play   (see vecenv.cli_arena)
    vecenv new NAME [--dir DIR] [--agents 1|2]       (see vecenv.cli_game)
    vecenv check NAME_OR_PATH [--only CHECK ...]

``--env`` takes one of our games (a Gymnasium id such as ``CartPole-v1`` or a folder name such as
``cartpole``) or ``gym.<Id>`` for Gymnasium's own environment, which runs through the same code for
comparison. Errors in what was asked for print one line and exit with status 2.
"""

import argparse
import os
import shutil
import sys
import time

PROG = "vecenv"
GYM_PREFIX = "gym."


class CliError(Exception):
    """A problem with what was asked for: printed as one line, exit status 2."""


# -- games ---------------------------------------------------------------------------------------

# Each face and the test telling whether a game's specification offers it; more faces append here.
FACES = (
    ("gym", lambda spec: bool(spec.gym.get("id"))),
    ("csuite", lambda spec: "csuite" in spec.raw),
    ("kaggle", lambda spec: spec.kaggle is not None),
    ("aisys", lambda spec: _aisys_playable(spec)),
)


def _aisys_playable(spec):
    from vecenv.aisys.catalog import playable

    return playable(spec)


def faces(spec):
    """The names of the faces a game is available through."""
    return [name for name, offered in FACES if offered(spec)]


def describe_action(spec):
    action = spec.action
    if action.discrete:
        low, high = int(action.low[0]), int(action.high[0])
        return f"Discrete({high - low + 1})" + (f" from {low}" if low else "")
    return f"Box{action.shape}"


def describe_observation(spec):
    fields = spec.observation
    if len(fields) == 1:
        return str(fields[0].shape)
    return " ".join(f"{f.name}{f.shape}" for f in fields)


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


def cmd_list(args, out):
    from vecenv import list_envs, registry

    rows = []
    for name in list_envs():
        spec = registry.get_spec(name)
        rows.append(
            [
                name,
                spec.gym.get("id", "-"),
                ",".join(faces(spec)) or "-",
                ",".join(str(a) for a in spec.agents),
                describe_action(spec),
                describe_observation(spec),
            ]
        )
    print_table(rows, ["name", "gym id", "faces", "agents", "action", "observation"], out)
    return 0


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


# -- parser and entry point ----------------------------------------------------------------------


def build_parser():
    parser = argparse.ArgumentParser(
        prog=PROG, description="Vectorized RL environments on numba kernels."
    )
    from vecenv import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sub.add_parser("list", help="list the games and their faces")

    train = sub.add_parser(
        "train",
        help="play episodes with an agent through a gymnasium.Env",
        description="Play episodes with an agent; prints each episode's return and length.",
    )
    from .cli_train import AGENTS

    train.add_argument("agent", help=f"the agent: {', '.join(sorted(AGENTS))}")
    train.add_argument(
        "--env", required=True, help="CartPole-v1, cartpole, or gym.<Id> for Gymnasium's own"
    )
    train.add_argument("--episodes", type=int, default=10, help="episodes to play (default 10)")
    train.add_argument("--seed", type=int, default=None, help="seed of the env and the agent")
    train.add_argument("--render", action="store_true", help="show frames in the terminal")
    train.add_argument(
        "--render-to", metavar="FILE", help="FILE.gif (animation) or FILE.png (contact sheet)"
    )

    bench = sub.add_parser(
        "bench",
        help="measure env-steps/s against Gymnasium's vector env",
        description="Env-steps/s of vecenv's vector env and Gymnasium's at the same sizes.",
    )
    bench.add_argument("--env", default="CartPole-v1", help="one of our games (default CartPole)")
    bench.add_argument(
        "--num-envs", default="1,64,4096", help="comma-separated N values (default %(default)s)"
    )
    bench.add_argument("--threads", default="1", help="comma-separated thread counts (default 1)")
    budget = bench.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, help="batched steps per measurement")
    budget.add_argument(
        "--seconds", type=float, help="seconds per measurement (default 0.3 unless --steps)"
    )
    bench.add_argument(
        "--repeats", type=int, default=3, help="runs per figure; the median counts (default 3)"
    )
    bench.add_argument("--seed", type=int, default=0, help="seed of the envs and the actions")
    bench.add_argument("--no-gym", action="store_true", help="skip Gymnasium's vector env")
    bench.add_argument("--plot", metavar="FILE.png", help="save a log-log plot (matplotlib)")

    from .cli_play import add_parser as add_play

    add_play(sub)
    from .cli_arena import add_parser as add_arena

    add_arena(sub)
    from .cli_game import add_parser as add_game

    add_game(sub)
    return parser


def main(argv=None):
    """Run the command line with ``argv`` (default: sys.argv[1:]); return the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else 2
    out = sys.stdout
    try:
        if args.command == "list":
            return cmd_list(args, out)
        if args.command == "train":
            from .cli_train import cmd_train

            return cmd_train(args, out)
        if args.command == "play":
            from .cli_play import cmd_play

            return cmd_play(args, out)
        if args.command in ("arena", "new", "check"):
            return args.func(args, out)
        from .cli_bench import cmd_bench

        return cmd_bench(args, out)
    except CliError as e:
        out.flush()
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (piped into head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
