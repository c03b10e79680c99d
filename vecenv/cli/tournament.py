"""``vecenv tournament``: a round robin of several agents of a two-agent game, with ratings."""

from .common import CliError, Progress
from .play import parse_config


def cmd_tournament(args, out):
    from vecenv import registry, tournament

    try:
        game = registry.resolve(args.game)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.matches_per_pair < 1:
        raise CliError(
            f"--matches-per-pair must be a positive integer, got {args.matches_per_pair}"
        )
    if args.html and not args.html.endswith(".html"):
        raise CliError(f"--html writes FILE.html, got {args.html!r}")
    k = len(args.agents)
    progress = Progress(k * (k - 1) // 2, "pairs")
    try:
        result = tournament.round_robin(
            game,
            args.agents,
            args.matches_per_pair,
            seed=args.seed,
            cluster=args.ray,
            num_threads=args.threads,
            progress=lambda done, total: progress.update(done),
            **parse_config(args.config),
        )
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(result, file=out)
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(result.html())
        print(f"cross-table -> {args.html}", file=out)
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "tournament",
        help="a round robin of several agents, with ratings and a cross-table",
        description="Every pair of AGENTS plays M matches (seats alternating); prints the "
        "cross-table of scores and OpenSkill ratings. An agent is a built-in name, a saved "
        "policy (FILE.pt) or a Python policy (module:function).",
    )
    p.add_argument("game", help="a two-agent game: connectx, tictactoe, rps, othello")
    p.add_argument("--agents", nargs="+", required=True, metavar="AGENT", help="two or more")
    p.add_argument(
        "--matches-per-pair", type=int, default=100, help="matches of each pair (default 100)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--threads", type=int, default=1, help="threads (default 1)")
    p.add_argument(
        "--config", nargs="*", metavar="KEY=VALUE", help="the game's configuration, e.g. rows=5"
    )
    p.add_argument("--html", metavar="FILE", help="write the cross-table as an HTML page")
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="spread the matches over the Ray cluster at ADDRESS ('auto': the local one)",
    )
    p.set_defaults(func=cmd_tournament)
    return p
