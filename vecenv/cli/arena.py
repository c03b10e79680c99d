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

import argparse
import json
import os

from vecenv import extras

from .common import (
    CliError,
    Progress,
    _number,
    check_output_file,
    port,
    positive_float,
    positive_int,
    print_table,
    seed,
)

DEFAULT_URL = "http://127.0.0.1:8000"
MAX_THREADS = 256
LIMIT_FLAGS = (
    "live_runs",
    "live_bytes",
    "agent_live_runs",
    "agent_live_bytes",
    "auth_failures",
    "auth_window",
)
threads = _number(int, 1, MAX_THREADS, what="an integer")


def size(text):
    """An argparse type: bytes, with an optional K, M, G or T suffix."""
    from vecenv.memory import parse_size

    try:
        return parse_size(text, "a size")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _arena(args, limits=None):
    extras.require("arena", "the arena")
    from vecenv.arena import Arena

    try:
        return Arena(args.db, limits)
    except Exception as e:  # SQLAlchemy's and its drivers' errors: one line, not a traceback
        raise CliError(f"--db {args.db}: {_database_problem(e)}") from None


def _database_problem(error):
    """One line on why the database ``--db`` names cannot be opened."""
    text = str(getattr(error, "orig", None) or error).strip().splitlines()
    text = text[0] if text else type(error).__name__
    if isinstance(error, ImportError) or "No module named" in text:
        return f"its database driver is not installed ({text}); e.g. pip install 'psycopg[binary]'"
    if type(error).__name__ == "NoSuchModuleError":
        return f"no database of that kind ({text}): a SQLite file or an SQLAlchemy URL"
    if type(error).__name__ == "ArgumentError":
        return f"not an SQLAlchemy URL ({text})"
    return f"cannot open the database: {text[:300]}"


def _limits(args):
    from vecenv.arena.limits import Limits

    values = {name: getattr(args, name, None) for name in LIMIT_FLAGS}
    try:
        return Limits(**{k: v for k, v in values.items() if v is not None})
    except ValueError as e:
        raise CliError(str(e)) from None


def _json(text, what):
    try:
        return json.loads(text)
    except ValueError as e:
        raise CliError(f"{what} must be JSON: {e}") from None
    except RecursionError:
        raise CliError(f"{what} is nested too deep") from None


def cmd_serve(args, out):
    arena = _arena(args, _limits(args))
    from vecenv.arena.app import serve

    def ready(port):
        print(f"vecenv arena on http://{args.host}:{port} (database {args.db})", file=out)
        out.flush()

    limits = {"connection_limit": args.connection_limit, "channel_timeout": args.channel_timeout}
    limits = {name: value for name, value in limits.items() if value is not None}
    try:
        serve(arena, args.host, args.port, threads=args.threads, ready=ready, **limits)
    except (OSError, ValueError) as e:  # the address is taken, not this machine's, malformed
        why = getattr(e, "strerror", None) or e
        raise CliError(f"cannot listen on {args.host}:{args.port}: {why}") from None
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
    from vecenv.arena.client import check_url

    try:  # before the agent is added: its password is shown once, where it goes
        check_url(args.url)
    except ValueError as e:
        raise CliError(f"--url: {e}") from None
    if args.out:
        check_output_file(args.out, "--out")
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
        # The config holds the agent's password: readable by its owner only (an existing file
        # is emptied and made so before the password is written into it).
        try:
            fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.fchmod(fd, 0o600)
            with open(fd, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as e:
            raise CliError(f"--out {args.out!r}: {e.strerror or e}") from None
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
            timeout=args.timeout,
            max_answer=args.max_answer,
        )
    except client.ClientError as e:
        raise CliError(f"the arena refused: {e}" if e.status else str(e)) from None
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
        run, content = (client.one_line(message.get(k), 200) for k in ("run", "content"))
        print(f"  refused in run {run}: {content}", file=out)
    return 0


def add_parser(sub):
    from vecenv.arena.client import MAX_ANSWER, TIMEOUT  # the standard library's only

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
    serve.add_argument(
        "--port", type=port, default=8000, help="port in [0, 65535] (8000; 0 picks a free one)"
    )
    serve.add_argument(
        "--threads", type=threads, default=8, help=f"request threads (8; at most {MAX_THREADS})"
    )
    serve.add_argument(
        "--live-runs", type=positive_int, help="live runs kept between requests, in all (1024)"
    )
    serve.add_argument(
        "--live-bytes", type=size, help="their bytes, in all (256M; K, M, G suffixes)"
    )
    serve.add_argument("--agent-live-runs", type=positive_int, help="live runs per agent (64)")
    serve.add_argument("--agent-live-bytes", type=size, help="their bytes, per agent (64M)")
    serve.add_argument(
        "--auth-failures",
        type=positive_int,
        help="failed logins of a client within --auth-window before it is answered 429 (20)",
    )
    serve.add_argument(
        "--auth-window", type=positive_float, help="seconds failed logins are counted over (60)"
    )
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
        "file.py (its get_action), module:function, policy.pt (saved by vecenv train ppo), or "
        "model.pt[:N] (saved by vecenv train alphazero: N simulations a move, 0 the network)",
    )
    play.add_argument("--game", help="the game of a built-in agent (default: the env's name)")
    play.add_argument("--runs", type=positive_int, default=100, help="runs to finish (100)")
    play.add_argument("--sequential", action="store_true", help="one run at a time")
    play.add_argument("--seed", type=seed, help="seed of the random agent")
    play.add_argument(
        "--timeout",
        type=positive_float,
        default=TIMEOUT,
        help="seconds an answer may take in all (60)",
    )
    play.add_argument(
        "--max-answer",
        type=size,
        default=MAX_ANSWER,
        help="the most bytes of an answer (64M; K, M, G suffixes)",
    )
    play.set_defaults(func=cmd_play)
    return arena
