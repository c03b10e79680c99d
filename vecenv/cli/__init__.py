"""The ``vecenv`` command line: list the games, play episodes with an agent, benchmark.

    vecenv list
    vecenv train random --env CartPole-v1 --episodes 10 [--seed S] [--render] [--render-to F]
    vecenv bench --env CartPole-v1 --num-envs 1,64,4096 --threads 1,2 [--steps K | --seconds S]
        [--save FILE] [--compare FILE --fail-over 10%] | --history DIR --plot FILE.png
    vecenv play connectx --agents negamax random --matches 10000 [--replay FILE.html] [--ray ADDR]
    vecenv tournament connectx --agents negamax random A.pt --matches-per-pair M [--ray ADDR]
    vecenv export kaggle FILE.pt --out submission.py [--simulations N]
    vecenv arena serve | env add | agent add | agents | play   (see vecenv.cli.arena)
    vecenv new NAME [--dir DIR] [--agents 1|2]       (see vecenv.cli.game)
    vecenv check NAME_OR_PATH [--only CHECK ...]

``--env`` takes one of our games (a Gymnasium id such as ``CartPole-v1`` or a folder name such as
``cartpole``) or ``gym.<Id>`` for Gymnasium's own environment, which runs through the same code for
comparison. Errors in what was asked for print one line and exit with status 2.
"""

import argparse
import contextlib
import os
import sys
import warnings

from vecenv.extras import MissingExtra

from . import arena, bench, export, game, listing, play, tournament, train, warm
from .common import PROG, CliError

# The commands, one module each, in the order ``--help`` lists them.
COMMANDS = (listing, train, bench, play, tournament, export, arena, game, warm)


class Parser(argparse.ArgumentParser):
    """argparse's parser, its usage errors said in one line (the usage itself is ``--help``'s),
    as every other error of the command line is."""

    def error(self, message):
        message = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {message} (usage: {self.prog} --help)\n")


def build_parser():
    parser = Parser(prog=PROG, description="Vectorized RL environments on numba kernels.")
    from vecenv import __version__

    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv=None):
    """Run the command line with ``argv`` (default: sys.argv[1:]); return the exit status: 0,
    1 where a check or a run failed (or vecenv itself did), 2 for what was asked (a usage
    error, a bad value, a file that is not what it should be), 130 on Ctrl-C. Every error is
    one line on stderr; ``VECENV_TRACEBACK=1`` shows an unexpected one's traceback instead."""
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        return _main(argv)


def _main(argv):
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version and usage errors
        return e.code if isinstance(e.code, int) else 2
    out = sys.stdout
    try:
        return args.func(args, out)
    except (CliError, MissingExtra) as e:
        out.flush()
        print(f"{PROG} {args.command}: error: {one_line(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (piped into head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as e:  # a failure no command foresaw: still one line, no traceback
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        out.flush()
        print(
            f"{PROG} {args.command}: error: {type(e).__name__}: {one_line(e)} "
            f"({TRACEBACK_VARIABLE}=1 shows where)",
            file=sys.stderr,
        )
        return 1


TRACEBACK_VARIABLE = "VECENV_TRACEBACK"
MESSAGE_LIMIT = 2000  # characters of an error's line (a message quoting a huge value is cut)


def one_line(error):
    """An error's message as one line of at most ``MESSAGE_LIMIT`` characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 3] + "..."


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (a game folder left out, ...) as one line each, without the source line."""
    stream = sys.stderr if file is None else file
    with contextlib.suppress(OSError):
        stream.write(f"{PROG}: warning: {one_line(message)}\n")
