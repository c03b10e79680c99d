"""``vecenv play``: batched matches between the agents of a game of several agents (two, or one
a seat), with a summary."""

from .common import (
    CliError,
    Progress,
    check_output_file,
    connect_ray,
    count,
    positive_int,
    seed,
    several_agent_games,
)


def parse_config(items):
    """``key=value`` pairs; values are ints or floats where they parse so."""
    config = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--config takes key=value, got {item!r}")
        for kind in (int, float):
            try:
                config[key] = kind(value)
                break
            except ValueError:
                continue
        else:
            config[key] = value
    return config


def checked_configuration(game, items):
    """``parse_config(items)``, checked against ``game``'s spec now (CliError naming the key),
    before any agent is made or match played."""
    from vecenv import registry

    configuration = parse_config(items)
    try:
        registry.get_spec(game).resolve_configuration(configuration)
    except ValueError as e:
        raise CliError(str(e)) from None
    return configuration


def cmd_play(args, out):
    from vecenv import registry, selfplay, tournament

    try:
        game = registry.resolve(args.game)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.replay and not args.replay.endswith((".html", ".json")):
        raise CliError(f"--replay writes FILE.html or FILE.json, got {args.replay!r}")
    if args.replay:
        if args.replay_match >= args.matches:
            raise CliError(
                f"--replay-match must be in [0, {args.matches}), got {args.replay_match}"
            )
        check_output_file(args.replay, "--replay")
    configuration = checked_configuration(game, args.config)
    seats = registry.get_spec(game).num_agents
    if seats < 2:
        raise CliError(f"{game} is a one-agent game: play takes a game of several agents")
    if len(args.agents) != seats:
        raise CliError(
            f"{game} has {seats} seats: --agents takes {seats} agents, got {len(args.agents)}"
        )
    if args.ray:
        connect_ray(args.ray)
    progress = Progress(args.matches, "matches")
    try:
        agents = tuple(tournament.agent(a, game) for a in args.agents)
        result = selfplay.play(
            game,
            agents,
            args.matches,
            seed=args.seed,
            num_threads=args.threads,
            keep_actions=bool(args.replay),
            progress=lambda done, total: progress.update(done),
            cluster=bool(args.ray),
            **configuration,
        )
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(result.summary, file=out)
    if args.replay:
        env = result.replay(args.replay_match)
        page = env.render(mode="html") if args.replay.endswith(".html") else env.render(mode="json")
        with open(args.replay, "w", encoding="utf-8") as f:
            f.write(page)
        a_seat = int(result.seats[args.replay_match])
        print(
            f"match {args.replay_match} ({args.agents[0]} in seat {a_seat}) -> {args.replay}",
            file=out,
        )
    return 0


def add_parser(sub):
    play = sub.add_parser(
        "play",
        help="play batched matches between the agents of a game of several agents",
        description="Play MATCHES matches of agent A against agent B (and C, ... in a game of "
        "more agents: one a seat) inside the engine (seats rotate); prints A's wins, draws and "
        "losses with 95% confidence intervals.",
    )
    play.add_argument("game", help=f"a game of several agents: {', '.join(several_agent_games())}")
    play.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="AGENT",
        help="one agent a seat (two in a two-agent game): built-in names (mcts, or mcts:N for "
        "N simulations a move, the search, is every two-agent game's of perfect information), "
        "checkpoints (FILE.pt of vecenv train ppo or alphazero; FILE.pt:N an AlphaZero network "
        "with N simulations a move) or module:function",
    )
    play.add_argument("--matches", type=positive_int, default=1000, help="matches (default 1000)")
    play.add_argument("--seed", type=seed, default=0, help="seed of the matches (default 0)")
    play.add_argument("--threads", type=positive_int, default=1, help="threads (default 1)")
    play.add_argument(
        "--config", nargs="*", metavar="KEY=VALUE", help="the game's configuration, e.g. rows=5"
    )
    play.add_argument("--replay", metavar="FILE", help="write one match's replay (.html or .json)")
    play.add_argument(
        "--replay-match", type=count, default=0, help="which match --replay writes (default 0)"
    )
    play.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="spread the matches over the Ray cluster at ADDRESS (host:port, ray://host:port; "
        "'auto': the one running on this machine, or a new local one)",
    )
    play.set_defaults(func=cmd_play)
    return play
