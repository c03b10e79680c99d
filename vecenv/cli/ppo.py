"""``vecenv train ppo`` (train a policy with PPO) and ``vecenv train eval`` (play a saved one).

    vecenv train ppo --env CartPole-v1 --num-envs 64 --total-steps 200000 [--seed S] [--run-dir D]
    vecenv train ppo --env connectx --selfplay [--total-steps N]
    vecenv train eval --policy runs/CartPole-v1-1/policy.pt [--episodes 10] [--render]

Both need PyTorch (``pip install "vecenv[train]"``). A run writes its directory: ``policy.pt``,
checkpoints, ``curve.csv`` and ``curve.png`` (and for self-play ``league.json`` with the win rates).
"""

import importlib.util
import os

from .common import (
    CliError,
    Progress,
    count,
    discount,
    finite_float,
    make_output_dir,
    non_negative_float,
    positive_float,
    positive_int,
    resolve_env,
    seed,
)
from .episodes import episode_options, play_episodes

DEFAULT_RUNS = "runs"
NO_PLOT = "plotting needs matplotlib (pip install matplotlib); the curve is in the CSV/JSON"


def _need_torch():
    if importlib.util.find_spec("torch") is None:
        raise CliError('PPO needs PyTorch: pip install "vecenv[train]"')


def _hidden(text):
    try:
        sizes = tuple(int(h) for h in text.split(",") if h.strip())
    except ValueError:
        raise CliError(f"--hidden must be comma-separated sizes, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise CliError(f"--hidden must be positive sizes, got {text!r}")
    return sizes


def _config(args):
    from vecenv.ppo import PPOConfig

    values = {
        "num_envs": args.num_envs,
        "num_steps": args.num_steps,
        "total_steps": args.total_steps,
        "seed": args.seed,
        "hidden": _hidden(args.hidden),
        "torch_threads": args.torch_threads,
    }
    for name in ("learning_rate", "ent_coef", "update_epochs", "num_minibatches", "gamma"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    try:
        return PPOConfig(**values)
    except ValueError as e:
        raise CliError(str(e)) from None


def cmd_ppo(args, out):
    _need_torch()
    env_id, whose = resolve_env(args.env)
    config = _config(args)
    from vecenv import registry

    name = env_id.removeprefix("vecenv/")
    run_dir = args.run_dir or os.path.join(DEFAULT_RUNS, f"{name.replace('/', '_')}-{args.seed}")
    if args.selfplay and (whose != "vecenv" or registry.get_spec(name).num_agents != 2):
        raise CliError("--selfplay needs one of vecenv's two-agent games")
    make_output_dir(run_dir, "--run-dir")  # before training: a run is not lost to a bad path
    if args.selfplay:
        return _selfplay(args, out, registry.get_spec(name).name, config, run_dir)
    from vecenv import ppo

    backend = "vecenv" if whose == "vecenv" else "gymnasium"
    progress = Progress(config.total_steps, "steps")

    def on_rollout(run, iteration):
        progress.update(run.steps, f"return {run.mean_return:.1f}")

    print(f"PPO on {name} ({whose}), {config.num_envs} envs, seed {config.seed}", file=out)
    try:
        run, _ = ppo.train(
            name,
            config,
            run_dir,
            threshold=args.threshold,
            backend=backend,
            on_rollout=on_rollout,
            checkpoint_every=args.checkpoint_every,
        )
    except ValueError as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(
        f"{run.steps:,} steps in {run.seconds:.1f} s ({run.steps_per_second:,.0f} steps/s, "
        f"{run.env_fraction:.1%} in the env), mean return {run.mean_return:.2f} "
        f"over the last {len(run.episodes[-config.window :])} episodes",
        file=out,
    )
    if run.reached is not None:
        print(
            f"reached {args.threshold} at {run.reached[0]:,} steps, {run.reached[1]:.1f} s",
            file=out,
        )
    _wrote(run_dir, ("policy.pt", "curve.csv", "run.json", "curve.png"), run.plotted, out)
    return 0


def _selfplay(args, out, game, config, run_dir):
    from vecenv.ppo import league

    progress = Progress(config.total_steps, "steps")

    def on_rollout(trainer, iteration):
        progress.update(trainer.steps, f"league {len(trainer.league)}")

    print(f"PPO self-play on {game}, {config.num_envs} matches, seed {config.seed}", file=out)
    try:
        result = league.train(
            game,
            config,
            run_dir,
            on_rollout=on_rollout,
            evaluation_matches=args.eval_matches,
        )
    except ValueError as e:
        raise CliError(str(e)) from None
    finally:
        progress.clear()
    print(
        f"{result.steps:,} plies in {result.seconds:.1f} s "
        f"({result.steps / max(result.seconds, 1e-9):,.0f} plies/s)",
        file=out,
    )
    for summary in result.evaluations:
        print(summary, file=out)
    files = ("policy.pt", "league checkpoints", "league.json", "curve.png")
    _wrote(run_dir, files, result.plotted, out)
    return 0


def _wrote(run_dir, files, plotted, out):
    """Say what the run wrote; the plot (last) is optional: matplotlib."""
    if plotted:
        print(f"wrote {run_dir}: {', '.join(files)}", file=out)
        return
    print(f"wrote {run_dir}: {', '.join(files[:-1])}", file=out)
    print(f"note: no curve.png: {NO_PLOT}", file=out)


def cmd_eval(args, out):
    _need_torch()
    from vecenv import ppo

    try:
        policy = ppo.load(args.policy, game=args.env)
    except ValueError as e:
        raise CliError(str(e)) from None
    env_id, whose = resolve_env(args.env or policy.env_id)
    return play_episodes(args, out, policy.agent, os.path.basename(args.policy), env_id, whose)


def add_parsers(kinds):
    ppo = kinds.add_parser(
        "ppo",
        help="train a policy with PPO (needs vecenv[train])",
        description="Train a policy with PPO on the engine's VectorEnv; writes the run directory.",
    )
    ppo.add_argument("--env", required=True, help="CartPole-v1, cartpole, connectx, gym.<Id>")
    ppo.add_argument("--num-envs", type=positive_int, default=64, help="environments (default 64)")
    ppo.add_argument(
        "--total-steps", type=positive_int, default=200_000, help="env steps (default 200000)"
    )
    ppo.add_argument(
        "--num-steps", type=positive_int, default=32, help="steps per env per update (32)"
    )
    ppo.add_argument("--seed", type=seed, default=1, help="seed of the env and the trainer (1)")
    ppo.add_argument("--hidden", default="64,64", help="hidden layer sizes (default 64,64)")
    ppo.add_argument(
        "--learning-rate", type=positive_float, help="Adam's step size (default 2.5e-3)"
    )
    ppo.add_argument("--ent-coef", type=non_negative_float, help="entropy bonus (default 0)")
    ppo.add_argument("--update-epochs", type=positive_int, help="epochs per update (default 4)")
    ppo.add_argument(
        "--num-minibatches", type=positive_int, help="minibatches per epoch (default 4)"
    )
    ppo.add_argument("--gamma", type=discount, help="discount in (0, 1] (default 0.99)")
    ppo.add_argument("--torch-threads", type=positive_int, default=1, help="PyTorch's threads (1)")
    ppo.add_argument("--threshold", type=finite_float, help="stop when the mean return reaches it")
    ppo.add_argument(
        "--checkpoint-every", type=count, default=0, help="updates between checkpoints"
    )
    ppo.add_argument("--run-dir", help=f"where the run goes (default {DEFAULT_RUNS}/ENV-SEED)")
    ppo.add_argument(
        "--selfplay", action="store_true", help="two-agent games: train against a league"
    )
    ppo.add_argument(
        "--eval-matches", type=count, default=200, help="self-play: matches per evaluation (200)"
    )
    ppo.set_defaults(func=cmd_ppo)

    evaluate = kinds.add_parser(
        "eval",
        help="play episodes with a saved policy",
        description="Play episodes with a policy saved by vecenv train ppo (greedy actions).",
    )
    evaluate.add_argument("--policy", required=True, help="the saved policy (policy.pt)")
    episode_options(evaluate, env_help="the env (default: the one it was trained on)")
    evaluate.set_defaults(func=cmd_eval)
