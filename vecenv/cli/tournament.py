"""``vecenv tournament``: a round robin of several agents of a game of several agents, with
ratings."""

from .common import (
    CliError,
    Progress,
    check_output_file,
    connect_ray,
    positive_int,
    seed,
    several_agent_games,
)
from .play import checked_configuration


def cmd_tournament(args, out):
    from vecenv import registry, tournament

    try:
        game = registry.resolve(args.game)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.html and not args.html.endswith(".html"):
        raise CliError(f"--html writes FILE.html, got {args.html!r}")
    if args.html:  # checked now: a bad path must not cost the matches
        check_output_file(args.html, "--html")
    configuration = checked_configuration(game, args.config)
    if args.ray:
        connect_ray(args.ray)
    k = len(args.agents)
    progress = Progress(k * (k - 1) // 2, "pairs")
    try:
        result = tournament.round_robin(
            game,
            args.agents,
            args.matches_per_pair,
            seed=args.seed,
            cluster=bool(args.ray),
            num_threads=args.threads,
            progress=lambda done, total: progress.update(done),
            **configuration,
        )
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(result, file=out)  # first: the results are out whatever happens to the page
    if args.html:
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(result.html())
        except OSError as e:
            raise CliError(f"--html {args.html!r}: {e.strerror or e}") from None
        print(f"cross-table -> {args.html}", file=out)
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "tournament",
        help="a round robin of several agents, with ratings and a cross-table",
        description="Every pair of AGENTS plays M matches (seats alternating); prints the "
        "cross-table of scores and OpenSkill ratings. An agent is a built-in name (mcts or "
        "mcts:N, the search, is every game's), a checkpoint (FILE.pt of vecenv train ppo or "
        "alphazero; FILE.pt:N an AlphaZero network with N simulations a move) or a Python "
        "policy (module:function).",
    )
    p.add_argument("game", help=f"a game of several agents: {', '.join(several_agent_games())}")
    p.add_argument("--agents", nargs="+", required=True, metavar="AGENT", help="two or more")
    p.add_argument(
        "--matches-per-pair",
        type=positive_int,
        default=100,
        help="matches of each pair (default 100)",
    )
    p.add_argument("--seed", type=seed, default=0, help="seed (default 0)")
    p.add_argument("--threads", type=positive_int, default=1, help="threads (default 1)")
    p.add_argument(
        "--config", nargs="*", metavar="KEY=VALUE", help="the game's configuration, e.g. rows=5"
    )
    p.add_argument("--html", metavar="FILE", help="write the cross-table as an HTML page")
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="spread the matches over the Ray cluster at ADDRESS (host:port, ray://host:port; "
        "'auto': the one running on this machine, or a new local one)",
    )
    p.set_defaults(func=cmd_tournament)
    return p
