"""``vecenv warm``: compile games ahead of time into vecenv's cache (``vecenv.warm``)."""

import sys

from .common import PROG, CliError, Progress, positive_int


def add_parser(sub):
    p = sub.add_parser(
        "warm",
        help="compile games ahead of time, so that later processes load them",
        description="Compile the games named (default: every game) into vecenv's cache, several "
        "at once, so that the processes that follow load each game's compiled code instead of "
        "each compiling it. Prints one line per game, its seconds and whether it compiled.",
    )
    p.add_argument("games", nargs="*", metavar="GAME", help="games by name (default: all)")
    p.add_argument(
        "--parts",
        default="engine,gym,agents",
        help="what to compile, comma-separated: engine, gym, agents, search, threads, or all "
        "(default: engine,gym,agents)",
    )
    p.add_argument(
        "--jobs", type=positive_int, help="processes compiling at once (default: the CPUs)"
    )
    p.set_defaults(func=cmd_warm)


def cmd_warm(args, out):
    from vecenv import registry, warm

    try:
        parts = warm.parts_of(args.parts)
        games = [registry.resolve(g) for g in args.games] or None
    except (ValueError, KeyError) as e:
        raise CliError(str(e).strip("'\"")) from None
    total = len(games) if games is not None else len(registry.games())
    bar = Progress(total, "warm")
    bar.update(0, force=True)

    def progress(done, total, warmed):
        bar.clear()
        verdict = "ok" if warmed.error is None else f"FAILED: {warmed.error.splitlines()[0]}"
        print(f"{warmed.game:<24} {warmed.seconds:6.1f} s  {verdict}", file=out, flush=True)
        bar.update(done, warmed.game, force=True)

    results = warm.warm(games, parts, args.jobs, progress)
    bar.clear()
    failed = [w.game for w in results if w.error is not None]
    print(f"{len(results) - len(failed)} of {len(results)} games warmed", file=out, flush=True)
    if failed:  # a failed run's one line on stderr, as every command's
        print(f"{PROG} warm: error: failed to warm: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0
