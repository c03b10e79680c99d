"""``vecenv train alphazero``: AlphaZero self-play with the batched search (``vecenv.alphazero``).

    vecenv train alphazero --env connectx --minutes 30 [--num-games 128] [--simulations 32]

The run directory (``runs/alphazero-GAME-SEED`` by default) gets ``model.pt``, ``best.pt`` (the
network of the best evaluation so far), checkpoints, ``curve.csv``, ``curve.png`` and
``run.json``, also when Ctrl-C ends the run; a line per iteration says the losses, and each
evaluation prints its win rates with 95% intervals.
"""

import os

from .common import (
    CliError,
    count,
    non_negative_float,
    parse_ints,
    positive_float,
    positive_int,
    run_folder,
    seed,
    stop_on_sigterm,
    unit_interval,
)
from .play import parse_config
from .ppo import DEFAULT_RUNS, _need_torch, _wrote, keep_checkpoints_option, stopped_status


def cmd_alphazero(args, out):
    _need_torch("AlphaZero")
    from vecenv import alphazero, registry
    from vecenv.seats import check_agent

    try:
        game = registry.resolve(args.env)
    except ValueError as e:
        raise CliError(str(e)) from None
    spec = registry.get_spec(game)
    if spec.num_agents != 2:
        raise CliError(f"{game} is not a two-agent game: AlphaZero plays those")
    configuration = parse_config(args.config)
    try:
        spec.resolve_configuration(configuration)  # refused before the run directory is made
    except ValueError as e:
        raise CliError(str(e)) from None
    values = {
        "num_games": args.num_games,
        "simulations": args.simulations,
        "selection": args.selection,
        "iterations": args.iterations,
        "seconds": args.minutes * 60.0,
        "learning_rate": args.learning_rate,
        "batch_size": args.batch_size,
        "updates": args.updates,
        "buffer_size": args.buffer_size,
        "temperature_moves": args.temperature_moves,
        "value_mix": args.value_mix,
        "eval_every": args.eval_every,
        "eval_matches": args.eval_matches,
        "eval_simulations": args.eval_simulations,
        "checkpoint_every": args.checkpoint_every,
        "seed": args.seed,
        "torch_threads": args.torch_threads,
        "network": args.network,
        "blocks": args.blocks,
        "filters": args.filters,
    }
    if args.symmetries is not None:
        values["symmetries"] = args.symmetries == "on"
    if args.features is not None:
        values["cross_features"] = args.features == "cross"
    if args.hidden is not None:
        values["hidden"] = tuple(parse_ints(args.hidden, "--hidden"))
    if args.opponents is not None:
        values["opponents"] = tuple(o.strip() for o in args.opponents.split(",") if o.strip())
    values = {k: v for k, v in values.items() if v is not None}
    try:
        config = alphazero.AlphaZeroConfig(**values)
        # Opponents named here must be the game's: the defaults the game lacks are skipped,
        # but a name given by hand and never played would be a silent typo.
        for opponent in values.get("opponents", ()):
            check_agent(game, opponent)
    except ValueError as e:
        raise CliError(str(e)) from None
    default_dir = os.path.join(DEFAULT_RUNS, f"alphazero-{game}-{config.seed}")
    run_dir = run_folder(args.run_dir, default_dir, args.force)
    print(
        f"AlphaZero on {game}: {config.num_games} games at once, {config.simulations} "
        f"simulations a move ({config.selection}), seed {config.seed}",
        file=out,
        flush=True,
    )

    def on_iteration(run, row):
        print(
            f"  iteration {row['iteration']:>4}  {row['seconds']:>7.0f} s  "
            f"{run.positions:>9,} positions  policy loss {row['policy_loss']:.3f}  "
            f"value loss {row['value_loss']:.3f}",
            file=out,
            flush=True,
        )
        for k, summary in run.evaluations:
            if k == row["iteration"]:
                low, high = summary.win_rate[1:]
                print(
                    f"    vs {summary.agents[1]}: {summary.wins}/{summary.matches} wins "
                    f"{summary.win_rate[0]:.1%} [{low:.1%}, {high:.1%}], {summary.draws} draws",
                    file=out,
                    flush=True,
                )
        if run.best is not None and run.best[0] == row["iteration"]:
            print(f"    the best so far (score {run.best[1]:.3f}): best.pt", file=out, flush=True)

    try:
        with stop_on_sigterm() as stopped:
            run = alphazero.train(
                game,
                config,
                run_dir,
                on_iteration=on_iteration,
                keep_checkpoints=args.keep_checkpoints,
                **configuration,
            )
    except ValueError as e:
        raise CliError(str(e)) from None
    if run.interrupted:
        how = "stopped (SIGTERM)" if stopped else "interrupted"
        print(f"{how} after {len(run.rows)} iterations; saving what was learned", file=out)
    print(
        f"{len(run.rows)} iterations, {run.games:,} games, {run.positions:,} positions "
        f"in {run.seconds:.1f} s",
        file=out,
    )
    best = ("best.pt",) if run.best is not None else ()
    _wrote(run_dir, ("model.pt", *best, "curve.csv", "run.json", "curve.png"), run.plotted, out)
    return stopped_status(run.interrupted, stopped)


def add_parser(kinds):
    p = kinds.add_parser(
        "alphazero",
        help="train a network for a two-agent game by self-play with search (the train extra)",
        description="AlphaZero: self-play over a batch of games with the batched search and the "
        "network as its evaluator, a replay buffer, evaluations against built-in agents; "
        "writes the run directory.",
    )
    p.add_argument("--env", required=True, help="a two-agent game: connectx, tictactoe, ...")
    p.add_argument("--minutes", type=non_negative_float, default=0.0, help="wall time (0: none)")
    p.add_argument("--iterations", type=count, default=None, help="iterations (0: none)")
    p.add_argument("--num-games", type=positive_int, help="games played at once (128)")
    p.add_argument("--simulations", type=positive_int, help="simulations a move (32)")
    p.add_argument("--selection", choices=("gumbel", "puct"), help="root selection (gumbel)")
    p.add_argument(
        "--network",
        choices=("mlp", "resnet"),
        help="an MLP over the features, or a residual CNN over the game's board (mlp)",
    )
    p.add_argument("--hidden", help="the MLP's hidden layer sizes (256,256)")
    p.add_argument("--blocks", type=positive_int, help="the residual network's blocks (2)")
    p.add_argument("--filters", type=positive_int, help="the residual network's channels (32)")
    p.add_argument(
        "--symmetries",
        choices=("on", "off"),
        help="learn each sampled position through a symmetry of the board drawn for it, where "
        "the game declares them (on)",
    )
    p.add_argument("--learning-rate", type=positive_float, help="Adam's step size (1e-3)")
    p.add_argument("--batch-size", type=positive_int, help="minibatch size (256)")
    p.add_argument("--updates", type=count, help="minibatches per iteration (100)")
    p.add_argument("--buffer-size", type=positive_int, help="positions kept (100000)")
    p.add_argument(
        "--temperature-moves",
        type=count,
        help="plies that explore before the games play the search's best move (8)",
    )
    p.add_argument(
        "--value-mix",
        type=unit_interval,
        help="weight of the search's root value in the value target, the outcome's the rest (0.5)",
    )
    p.add_argument(
        "--features",
        choices=("cross", "plain"),
        help="the board also as seen by the seat's mark (cross, the default) or not (plain)",
    )
    p.add_argument("--eval-every", type=count, help="iterations between evaluations (10; 0: none)")
    p.add_argument("--eval-matches", type=positive_int, help="matches per opponent (100)")
    p.add_argument("--eval-simulations", type=positive_int, help="the player's simulations (64)")
    p.add_argument("--opponents", help="comma-separated (random,negamax,mcts:200)")
    p.add_argument("--checkpoint-every", type=count, help="iterations between checkpoints")
    keep_checkpoints_option(p)
    p.add_argument("--seed", type=seed, default=1, help="seed of the run (1)")
    p.add_argument("--torch-threads", type=positive_int, help="PyTorch's threads (1)")
    p.add_argument(
        "--run-dir",
        help=f"where the run goes ({DEFAULT_RUNS}/alphazero-GAME-SEED, or -run2, ... where a "
        "previous run is)",
    )
    p.add_argument("--force", action="store_true", help="write over a previous run in --run-dir")
    p.add_argument(
        "--config", nargs="*", metavar="KEY=VALUE", help="the game's configuration, e.g. rows=5"
    )
    p.set_defaults(func=cmd_alphazero)
