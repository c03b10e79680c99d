"""``vecenv play``: batched matches between two agents of a two-agent game, with a summary."""

from .common import CliError, Progress


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


def cmd_play(args, out):
    from vecenv import registry, selfplay

    try:
        game = registry.resolve(args.game)
    except ValueError as e:
        raise CliError(str(e)) from None
    if args.matches < 1:
        raise CliError(f"--matches must be a positive integer, got {args.matches}")
    if args.replay and not args.replay.endswith((".html", ".json")):
        raise CliError(f"--replay writes FILE.html or FILE.json, got {args.replay!r}")
    progress = Progress(args.matches, "matches")
    try:
        result = selfplay.play(
            game,
            tuple(args.agents),
            args.matches,
            seed=args.seed,
            num_threads=args.threads,
            keep_actions=bool(args.replay),
            progress=lambda done, total: progress.update(done),
            cluster=args.ray,
            **parse_config(args.config),
        )
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(result.summary, file=out)
    if args.replay:
        if not 0 <= args.replay_match < args.matches:
            raise CliError(
                f"--replay-match must be in [0, {args.matches}), got {args.replay_match}"
            )
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
        help="play batched matches between two agents of a two-agent game",
        description="Play MATCHES matches of agent A against agent B inside the engine (seats "
        "alternate); prints A's wins, draws and losses with 95%% confidence intervals.",
    )
    play.add_argument("game", help="a two-agent game: connectx, tictactoe, rps")
    play.add_argument(
        "--agents", nargs=2, required=True, metavar=("A", "B"), help="two built-in agents"
    )
    play.add_argument("--matches", type=int, default=1000, help="matches (default 1000)")
    play.add_argument("--seed", type=int, default=0, help="seed of the matches (default 0)")
    play.add_argument("--threads", type=int, default=1, help="threads (default 1)")
    play.add_argument(
        "--config", nargs="*", metavar="KEY=VALUE", help="the game's configuration, e.g. rows=5"
    )
    play.add_argument("--replay", metavar="FILE", help="write one match's replay (.html or .json)")
    play.add_argument(
        "--replay-match", type=int, default=0, help="which match --replay writes (default 0)"
    )
    play.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="spread the matches over the Ray cluster at ADDRESS ('auto': the local one)",
    )
    play.set_defaults(func=cmd_play)
    return play
