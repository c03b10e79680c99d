"""``vecenv new`` and ``vecenv check``: write a game folder to start from, hold a game to the
contract (``vecenv.testing``)."""

import math
import os

from .common import CliError


def add_parser(sub):
    new = sub.add_parser(
        "new",
        help="write a working game folder to start from",
        description="Write NAME/ (spec, rules, render, a test; two agents: a random agent and a "
        "legal mask) in DIR. Run its test with pytest; make it a game with vecenv.register.",
    )
    new.add_argument("name", help="the game's name: lower-case letters, digits and _")
    new.add_argument("--dir", default=".", help="where the folder goes (default: here)")
    new.add_argument("--agents", type=int, choices=(1, 2), default=1, help="1 (default) or 2")
    new.set_defaults(func=cmd_new)

    check = sub.add_parser(
        "check",
        help="hold a game to vecenv's contract",
        description="Run the game contract (vecenv.testing) on a game, given by name or as the "
        "path of its folder; prints a table and exits 1 if a check fails.",
    )
    check.add_argument("game", help="a game's name, or the path of a game folder")
    check.add_argument(
        "--only", nargs="+", metavar="CHECK", help="run only these checks (see the table)"
    )
    check.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="a check with no result after this long fails (an endless loop?); default 300. "
        "The checks run in a child process, so a crash fails a check too",
    )
    check.set_defaults(func=cmd_check)


def cmd_new(args, out):
    from vecenv import scaffold

    try:
        folder = scaffold.write_game(args.name, args.dir, args.agents)
    except (ValueError, FileExistsError) as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:  # a folder that cannot be made there (no parent, no permission)
        where = os.path.join(args.dir, args.name)
        raise CliError(f"cannot write {where}: {exc.strerror or exc}") from None
    print(f"wrote {folder}{os.sep}", file=out)
    for path in sorted(folder.iterdir()):
        print(f"  {path.name}", file=out)
    # A path with a separator, so that vecenv check takes it for the folder it is.
    shown = folder if os.sep in str(folder) else os.path.join(os.curdir, folder)
    print(f"next: pytest {folder}   and   vecenv check {shown}", file=out)
    return 0


def cmd_check(args, out):
    from vecenv import guarded_check, testing

    timeout = guarded_check.DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    if not 0 < timeout < math.inf:
        raise CliError(f"--timeout must be a positive number of seconds, got {timeout:g}")
    unknown = [c for c in args.only or () if c not in testing.CHECKS]
    if unknown:
        raise CliError(f"no check {unknown[0]!r}; checks: {', '.join(testing.CHECKS)}")
    try:  # nothing of a game folder runs here: the checks' child process registers it
        game, _ = guarded_check.game_name(args.game)
    except ValueError as exc:  # an unknown name, or a folder that is no game (GameError)
        raise CliError(str(exc)) from None
    results = guarded_check.run_checks(args.game, args.only, timeout)
    print(testing.table(game, results), file=out)
    return 1 if any(r.status == "fail" for r in results) else 0
