"""``vecenv arena``: serve an arena, administer it, and play on one as an agent.

```text
vecenv arena serve [--db arena.sqlite] [--host 127.0.0.1] [--port 8000]
vecenv arena env add connectx --opponent negamax      (or --game G, --class module:Class)
vecenv arena env list
vecenv arena agent add NAME [--env E] [--url URL] [--out agent.json]
vecenv arena agents [--env E]
vecenv arena play --config agent.json --agent random [--runs 100]
```
"""

import json

from vecenv import extras

from .common import CliError, Progress, positive_int, print_table

DEFAULT_URL = "http://127.0.0.1:8000"


def _arena(args):
    extras.require("arena", "the arena")
    from vecenv.arena import Arena

    return Arena(args.db)


def _json(text, what):
    try:
        return json.loads(text)
    except ValueError as e:
        raise CliError(f"{what} must be JSON: {e}") from None


def cmd_serve(args, out):
    arena = _arena(args)
    from vecenv.arena.app import serve

    def ready(port):
        print(f"vecenv arena on http://{args.host}:{port} (database {args.db})", file=out)
        out.flush()

    limits = {"connection_limit": args.connection_limit, "channel_timeout": args.channel_timeout}
    limits = {name: value for name, value in limits.items() if value is not None}
    serve(arena, args.host, args.port, threads=args.threads, ready=ready, **limits)
    return 0


def cmd_env_add(args, out):
    if args.game and args.env_class:
        raise CliError("give --game or --class, not both")
    config = _json(args.config, "--config") if args.config else None
    if args.opponent is not None or args.seat is not None:
        if not isinstance(config, dict | None):
            raise CliError("--opponent and --seat need --config to be an object")
        config = dict(config or {})
        if args.opponent is not None:
            config["opponent"] = args.opponent
        if args.seat is not None:
            config["seat"] = args.seat if args.seat == "alternate" else int(args.seat)
    try:
        env = _arena(args).add_environment(
            args.identifier,
            game=args.game,
            env_class=args.env_class,
            config=config,
            name=args.name,
        )
    except (ValueError, TypeError) as e:
        raise CliError(str(e)) from None
    print(f"added {env['identifier']}: {env['env_class']} {json.dumps(env['config'])}", file=out)
    return 0


def cmd_env_list(args, out):
    rows = [
        [e["identifier"], e["display_name"], e["env_class"], json.dumps(e["config"])]
        for e in _arena(args).environments()
    ]
    print_table(rows, ["env", "name", "class", "config"], out)
    return 0


def cmd_agent_add(args, out):
    arena = _arena(args)
    env = args.env
    if env is None:
        envs = [e["identifier"] for e in arena.environments()]
        if len(envs) != 1:
            raise CliError(f"give --env (environments: {', '.join(envs) or 'none'})")
        env = envs[0]
    try:
        config = arena.add_agent(env, args.name, url=args.url)
    except ValueError as e:
        raise CliError(str(e)) from None
    text = json.dumps(config, indent=2)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print(f"agent {args.name} of {env}: config written to {args.out}", file=out)
    else:
        print(text, file=out)
    return 0


def cmd_agents(args, out):
    try:
        agents = _arena(args).agents(args.env)
    except ValueError as e:
        raise CliError(str(e)) from None
    # Until an agent is fully evaluated its rating is still INITIAL_RATING, which says nothing
    # of it: "-" then; the mean of its recent outcomes is what it has earned so far. Four
    # significant digits keep small outcomes (0.0004) and large returns (487.2) readable.
    rows = [
        [
            a["env"],
            a["agent"],
            f"{a['rating']:.4g}" if a["fully_evaluated"] else "-",
            f"{a['current_rating']:.4g}",
            a["runs"],
            "yes" if a["fully_evaluated"] else "no",
        ]
        for a in agents
    ]
    headers = ["env", "agent", "rating", "mean", "runs", "evaluated"]
    print_table(rows, headers, out, right=(2, 3, 4))
    return 0


def cmd_play(args, out):
    from vecenv import registry
    from vecenv.arena import client

    if args.runs < 1:
        raise CliError(f"--runs must be a positive integer, got {args.runs}")
    try:
        config = client.load_config(args.config)
    except (OSError, ValueError) as e:
        raise CliError(str(e)) from None
    game = args.game
    if game is None:
        try:
            game = registry.resolve(config["env"])
        except ValueError:
            game = None
    try:
        policy = client.make_policy(args.agent, game, seed=args.seed)
    except (ValueError, ImportError) as e:
        raise CliError(str(e)) from None
    progress = Progress(args.runs, "runs")
    errors = []

    def on_message(message):
        if message.get("type") == "error":
            errors.append(message)

    try:
        outcomes = client.play(
            config,
            policy,
            args.runs,
            parallel_runs=not args.sequential,
            progress=lambda done, total: progress.update(done),
            on_message=on_message,
        )
    except client.ClientError as e:
        raise CliError(f"the arena refused: {e}") from None
    finally:
        progress.clear()
    values = [v for v in outcomes.values() if isinstance(v, int | float)]
    mean = sum(values) / len(values) if values else float("nan")
    print(
        f"{config['agent']} on {config['env']}: {len(outcomes)} runs finished, "
        f"mean outcome {mean:.3f}, {len(errors)} actions refused",
        file=out,
    )
    for message in errors[:5]:
        print(f"  refused in run {message.get('run')}: {message.get('content')}", file=out)
    return 0


def add_parser(sub):
    arena = sub.add_parser(
        "arena",
        help="an AISysProj arena: serve it, add environments and agents, play on it",
        description="An arena where agents play runs over HTTP (AISysProj's protocol v1) and are "
        "rated on a leaderboard. Its database is a SQLite file (--db, default arena.sqlite) or "
        "any SQLAlchemy URL.",
    )
    commands = arena.add_subparsers(dest="arena_command", metavar="COMMAND", required=True)

    def with_db(parser):
        parser.add_argument(
            "--db", default="arena.sqlite", help="SQLite file or SQLAlchemy URL (arena.sqlite)"
        )
        return parser

    serve = with_db(commands.add_parser("serve", help="serve the arena over HTTP"))
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (8000; 0 picks a free one)")
    serve.add_argument("--threads", type=int, default=8, help="request threads (8)")
    serve.add_argument(
        "--connection-limit",
        type=positive_int,
        help="open connections at most; past it new ones wait (1000)",
    )
    serve.add_argument(
        "--channel-timeout",
        type=positive_int,
        help="seconds an idle connection stays open (30)",
    )
    serve.set_defaults(func=cmd_serve)

    env = commands.add_parser("env", help="add or list environments")
    env_commands = env.add_subparsers(dest="env_command", metavar="COMMAND", required=True)
    add = with_db(env_commands.add_parser("add", help="add an environment"))
    add.add_argument("identifier", help="its identifier (and its game unless --game/--class)")
    add.add_argument("--game", help="one of vecenv's games (default: the identifier)")
    add.add_argument("--class", dest="env_class", help="any environment class, module:Class")
    add.add_argument("--opponent", help="the built-in opponent of a two-agent game")
    add.add_argument("--seat", choices=["0", "1", "alternate"], help="the agent's seat")
    add.add_argument("--config", help="the environment's config_json (JSON)")
    add.add_argument("--name", help="the name pages show (default: the identifier)")
    add.set_defaults(func=cmd_env_add)
    listing = with_db(env_commands.add_parser("list", help="list the environments"))
    listing.set_defaults(func=cmd_env_list)

    agent = commands.add_parser("agent", help="add agents")
    agent_commands = agent.add_subparsers(dest="agent_command", metavar="COMMAND", required=True)
    agent_add = with_db(agent_commands.add_parser("add", help="add an agent; prints its config"))
    agent_add.add_argument("name", help="the agent's name")
    agent_add.add_argument("--env", help="its environment (default: the only one)")
    agent_add.add_argument("--url", default=DEFAULT_URL, help=f"the arena's URL ({DEFAULT_URL})")
    agent_add.add_argument("--out", help="write the config to this file instead of printing it")
    agent_add.set_defaults(func=cmd_agent_add)

    agents = with_db(commands.add_parser("agents", help="list the agents and their ratings"))
    agents.add_argument("--env", help="only this environment's")
    agents.set_defaults(func=cmd_agents)

    play = commands.add_parser("play", help="play runs as an agent")
    play.add_argument("--config", required=True, help="the agent's config (agent.json)")
    play.add_argument(
        "--agent",
        default="random",
        help="random, a built-in agent of the game (mcts or mcts:N, the search, included), "
        "file.py (its get_action), module:function, or policy.pt (saved by vecenv train ppo)",
    )
    play.add_argument("--game", help="the game of a built-in agent (default: the env's name)")
    play.add_argument("--runs", type=int, default=100, help="runs to finish (100)")
    play.add_argument("--sequential", action="store_true", help="one run at a time")
    play.add_argument("--seed", type=int, help="seed of the random agent")
    play.set_defaults(func=cmd_play)
    return arena
