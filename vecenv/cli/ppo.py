"""``vecenv train ppo`` (train a policy with PPO) and ``vecenv train eval`` (play a saved one).

    vecenv train ppo --env CartPole-v1 [--seed S] [--stop-at-target] [--num-envs N] [--run-dir D]
    vecenv train ppo --env connectx --selfplay [--total-steps N]
    vecenv train ppo --env CartPole-v1 --device cuda [--stop-at-target]
    vecenv train eval --policy runs/CartPole-v1-1/policy.pt [--episodes 10] [--render]

A game's tuned configuration (its ``ppo.json``, ``vecenv.ppo.zoo``) is the starting point; each
flag overrides one field. Both need PyTorch (the ``train`` extra: ``pip install ".[train]"``). A
run writes its directory, also when Ctrl-C ends it: ``policy.pt``, checkpoints, ``curve.csv``,
``curve.png`` and ``run.json`` (and for self-play ``league.json`` with the win rates).
"""

import argparse
import json
import os

from vecenv import extras

from .common import (
    SIGTERM_STATUS,
    CliError,
    Progress,
    count,
    discount,
    finite_float,
    non_negative_float,
    positive_float,
    positive_int,
    precision_option,
    resolve_env,
    run_folder,
    seed,
    stop_on_sigterm,
    unit_interval,
)
from .episodes import episode_options, play_episodes

DEFAULT_RUNS = "runs"
TUNED = "(default: the game's ppo.json)"
NO_PLOT = "plotting needs matplotlib (pip install matplotlib); the curve is in the CSV/JSON"


def _need_torch(feature="PPO"):
    extras.require("train", feature, ["torch"])


def _hidden(text):
    try:
        sizes = tuple(int(h) for h in text.split(",") if h.strip())
    except ValueError:
        raise CliError(f"--hidden must be comma-separated sizes, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise CliError(f"--hidden must be positive sizes, got {text!r}")
    return sizes


# Flags that set one PPOConfig field each (None: not given, the tuned value stands).
FIELDS = (
    "num_envs",
    "num_steps",
    "total_steps",
    "seed",
    "learning_rate",
    "anneal_lr",
    "ent_coef",
    "anneal_ent",
    "update_epochs",
    "num_minibatches",
    "gamma",
    "gae_lambda",
    "clip_coef",
    "norm_obs",
    "norm_reward",
    "one_hot_obs",
    "explore_bonus",
    "segment",
    "torch_threads",
    "activation",
)


def _tuned(env_id):
    """The game's tuned configuration (``vecenv.ppo.zoo``) where one ships: for a vecenv game,
    and for ``gym.<Id>`` where a vecenv game has that Gymnasium id (the same rules)."""
    from vecenv import registry
    from vecenv.ppo import zoo

    try:
        name = registry.resolve(env_id.removeprefix("vecenv/"))
    except ValueError:
        return None
    try:
        return zoo.tuned(name)
    except ValueError as e:
        raise CliError(str(e)) from None


def _config(args, tuned):
    """The run's PPOConfig: the tuned one (or the defaults), each given flag on top, what depends
    on the batch rescaled to a ``--num-envs`` of its own (``zoo.for_num_envs``); and those
    changes, ``{field: (was, now)}``."""
    from vecenv.ppo import zoo

    values = {name: getattr(args, name) for name in FIELDS}
    if args.hidden is not None:
        values["hidden"] = _hidden(args.hidden)
    if args.env_config is not None:
        values["env_config"] = _env_config(args.env_config)
    try:
        return zoo.adapted({} if tuned is None else tuned.hyperparameters, values)
    except ValueError as e:
        raise CliError(str(e)) from None


def _env_config(text):
    """``--env-config``'s JSON object of the game's fields."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise CliError(f"--env-config: not JSON ({e})") from None
    if not isinstance(value, dict):
        raise CliError(f"--env-config: a JSON object of the game's fields, got {text!r}")
    return value


def cmd_ppo(args, out):
    _need_torch()
    env_id, whose = resolve_env(args.env)
    tuned = _tuned(env_id)
    config, changes = _config(args, tuned)
    from vecenv import registry

    name = env_id.removeprefix("vecenv/")
    default_dir = os.path.join(DEFAULT_RUNS, f"{name.replace('/', '_')}-{config.seed}")
    if args.selfplay and (whose != "vecenv" or registry.get_spec(name).num_agents != 2):
        raise CliError("--selfplay needs one of vecenv's two-agent games")
    if config.env_config:  # checked before the run's folder is made
        if whose != "vecenv":
            raise CliError("--env-config is for vecenv's games (gymnasium's run as registered)")
        try:
            registry.get_spec(name).resolve_configuration(config.env_config)
        except ValueError as e:
            raise CliError(f"--env-config: {e}") from None
    if args.precision != "float64" and whose != "vecenv":
        raise CliError("--precision float32 is for vecenv's games (gymnasium's run as written)")
    target = args.threshold if args.threshold is not None else getattr(tuned, "target", None)
    if args.stop_at_target and target is None:
        raise CliError(f"--stop-at-target: {name} has no tuned target; give --threshold")
    stop_at = target if args.stop_at_target else args.threshold
    if args.device == "cuda":
        _check_device(args, whose)
    # Before training: a run is not lost to a bad path, nor writes over another.
    run_dir = run_folder(args.run_dir, default_dir, args.force)
    if args.device == "cuda":
        return _on_gpu(args, out, name, (config, changes, tuned), run_dir, stop_at, target)
    if args.selfplay:
        return _selfplay(args, out, registry.get_spec(name).name, config, run_dir)
    from vecenv import ppo

    backend = "vecenv" if whose == "vecenv" else "gymnasium"
    _opening(out, f"PPO on {name} ({whose})", config, tuned, changes)
    print(f"measured by the {config.metric_label}", file=out)
    report = ProgressLines(config.total_steps, out)
    try:
        with stop_on_sigterm() as stopped:
            run, _ = ppo.train(
                name,
                config,
                run_dir,
                threshold=stop_at,
                target=target,
                backend=backend,
                on_rollout=report,
                checkpoint_every=args.checkpoint_every,
                precision=args.precision,
                keep_checkpoints=args.keep_checkpoints,
                keep=args.keep,
            )
    except ValueError as e:
        raise CliError(str(e)) from None
    if run.interrupted:
        how = "stopped (SIGTERM)" if stopped else "interrupted"
        print(f"{how} at {run.steps:,} steps; saving what was learned", file=out)
    unit = f"segments of {config.segment:,} steps" if config.segment else "episodes"
    _closing(
        out,
        run,
        f"{run.env_fraction:.1%} in the env), {_metric(config)} {run.mean:{_digits(config)}} "
        f"over the last {run.measured} {unit}",
        target,
        run_dir,
    )
    return stopped_status(run.interrupted, stopped)


def _opening(out, title, config, tuned, changes):
    """A run's first lines: what trains on what, the tuned configuration it starts from, and
    what a ``--num-envs`` of its own rescaled (``zoo.for_num_envs``)."""
    print(f"{title}, {config.num_envs} envs, seed {config.seed}", file=out)
    if tuned is not None:
        print(
            f"configuration: {tuned.game}'s tuned {os.path.basename(tuned.path)}, "
            f"target {tuned.target:g} ({tuned.target_source})",
            file=out,
        )
    if set(changes) - {"num_envs"}:
        print(_rescaled(config, changes, tuned), file=out)


def _rescaled(config, changes, tuned):
    """One line: what ``--num-envs`` changed, and the batch it kept (``tuned``: the configuration
    it was tuned in, None for the defaults)."""
    from vecenv.ppo import zoo

    base = zoo.adapted({} if tuned is None else tuned.hyperparameters, {})[0]
    batch, size = base.batch_size, base.batch_size // base.num_minibatches
    said = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in changes.items() if k != "num_envs")
    kept = f"{config.batch_size:,} steps per update"
    if config.batch_size == batch:
        kept += " as tuned"
    elif "num_steps" in changes and config.num_steps == zoo.MIN_STEPS:
        kept += f" (tuned: {batch:,}; a rollout takes at least {zoo.MIN_STEPS} steps)"
    else:
        kept += f" (tuned: {batch:,})"
    now = config.batch_size // config.num_minibatches
    sized = "as tuned" if now == size else f"(tuned: {size:,})"
    return (
        f"--num-envs {config.num_envs} (tuned at {base.num_envs}): {said}; {kept}, minibatches "
        f"of {now:,} {sized}"
    )


def _closing(out, run, measured, target, run_dir):
    """A run's last lines: its steps, speed and result (``measured`` ends the first line), whether
    it reached the target, and the files written."""
    print(
        f"{run.steps:,} steps in {run.seconds:.1f} s ({run.steps_per_second:,.0f} steps/s, "
        f"{measured}",
        file=out,
    )
    if target is not None:
        if run.reached is not None:
            steps, seconds = run.reached
            print(f"reached {target:g} at {steps:,} steps, {seconds:.1f} s", file=out)
        else:
            print(f"did not reach {target:g}", file=out)
    if run.best is not None:
        mean, steps, seconds = run.best
        digits = _digits(run.config)
        print(
            f"best {_metric(run.config)} {mean:{digits}} at {steps:,} steps, {seconds:.1f} s "
            f"(last {run.mean:{digits}}); policy.pt holds the {run.kept} weights",
            file=out,
        )
    _wrote(run_dir, ("policy.pt", "curve.csv", "run.json", "curve.png"), run.plotted, out)


def stopped_status(interrupted, stopped):
    """A run's exit status: 0, or as the signal that ended it early would (130 Ctrl-C, 143
    SIGTERM), after what it learned was saved."""
    if not interrupted:
        return 0
    return SIGTERM_STATUS if stopped else 130


def _check_device(args, whose):
    """``--device cuda``'s requirements, each a one-line error (exit 2) before anything runs."""
    if whose != "vecenv":
        raise CliError("--device cuda trains vecenv's games (gymnasium's own run on the CPU)")
    if args.selfplay:
        raise CliError("--device cuda trains one-agent games (--selfplay runs on the CPU)")
    if args.checkpoint_every:
        raise CliError("--device cuda writes no intermediate checkpoints (--checkpoint-every)")
    if args.precision != "float64":
        raise CliError("--device cuda runs the rules as written (--precision float64)")
    # numba-cuda (the cuda extra), on a machine with an NVIDIA GPU and its driver.
    extras.require("cuda", "--device cuda", ["numba_cuda"])
    import numba

    from vecenv.cuda import gpu_available

    if not (numba.config.ENABLE_CUDASIM or gpu_available()):
        raise CliError(
            "--device cuda needs a CUDA GPU, and none is usable here (no NVIDIA GPU or driver "
            "found); train on the CPU without --device"
        )


def _on_gpu(args, out, name, configured, run_dir, stop_at, target):
    """The run with the game and the network on the GPU (``vecenv.ppo.device``);
    ``configured``: ``(config, changes, tuned)`` as ``cmd_ppo`` has them."""
    from vecenv.ppo import device

    config, changes, tuned = configured
    _opening(out, f"PPO on {name} (vecenv, GPU)", config, tuned, changes)
    report = ProgressLines(config.total_steps, out)
    try:
        run, _ = device.train(
            name, config, run_dir, threshold=stop_at, target=target, on_rollout=report,
            keep=args.keep,
        )  # fmt: skip
    except ValueError as e:
        raise CliError(str(e)) from None
    if run.interrupted:
        print(f"interrupted at {run.steps:,} steps; saving what was learned", file=out)
    _closing(
        out,
        run,
        f"{run.env_fraction:.1%} in the rollouts), mean return {run.mean:.2f} over the last "
        f"{run.measured} episodes",
        target,
        run_dir,
    )
    return stopped_status(run.interrupted, stopped=False)


def _metric(config):
    return "mean reward per step" if config.segment else "mean return"


def _digits(config):
    """A reward per step is a small number (a catch a ball in ten steps: 0.1)."""
    return ".4f" if config.segment else ".2f"


class ProgressLines:
    """A line every tenth of the run's steps: steps so far, steps per second, the running mean
    (return, or reward per step). Lines rather than a bar, so a log file or CI output shows
    them too."""

    PARTS = 10

    def __init__(self, total, out):
        self.total, self.out, self.next = total, out, total / self.PARTS

    def __call__(self, run, iteration):
        if run.steps < self.next:
            return
        while self.next <= run.steps:
            self.next += self.total / self.PARTS
        print(
            f"  {run.steps:>10,} steps  {run.steps_per_second:>9,.0f} steps/s  "
            f"{_metric(run.config)} {run.mean:{_digits(run.config)}}",
            file=self.out,
            flush=True,
        )


def keep_checkpoints_option(parser):
    from vecenv.checkpoints import KEEP_CHECKPOINTS

    parser.add_argument(
        "--keep-checkpoints",
        type=count,
        default=KEEP_CHECKPOINTS,
        metavar="K",
        help=f"keep the latest K periodic checkpoints ({KEEP_CHECKPOINTS}; 0: every one)",
    )


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
    from vecenv.ppo.trainer import check_env_config

    # The game as the policy trained on it (its env_config: MinAtar without sticky actions, say),
    # not the game's defaults; a policy file's field that is not an object of names is refused.
    try:
        played = check_env_config(policy.config.get("env_config") or {})
    except ValueError as e:
        raise CliError(f"{args.policy}: {e}") from None
    name = os.path.basename(args.policy)
    return play_episodes(args, out, policy.agent, name, env_id, whose, env_kwargs=played)


def add_parsers(kinds):
    ppo = kinds.add_parser(
        "ppo",
        help="train a policy with PPO (needs the train extra)",
        description="Train a policy with PPO on the engine's VectorEnv; writes the run directory.",
    )
    ppo.add_argument("--env", required=True, help="CartPole-v1, cartpole, connectx, gym.<Id>")
    ppo.add_argument("--num-envs", type=positive_int, help=f"environments {TUNED} (else 64)")
    ppo.add_argument("--total-steps", type=positive_int, help=f"env steps {TUNED} (else 200000)")
    ppo.add_argument(
        "--num-steps", type=positive_int, help=f"steps per env per update {TUNED} (else 32)"
    )
    ppo.add_argument("--seed", type=seed, default=1, help="seed of the env and the trainer (1)")
    ppo.add_argument("--hidden", help=f"hidden layer sizes {TUNED} (else 64,64)")
    ppo.add_argument(
        "--activation",
        choices=("tanh", "relu"),
        help=f"the hidden layers' activation {TUNED} (else tanh)",
    )
    ppo.add_argument("--learning-rate", type=positive_float, help="Adam's step size")
    ppo.add_argument(
        "--anneal-lr",
        action=argparse.BooleanOptionalAction,
        help="the learning rate falls linearly to 0 over the run (on unless the game's ppo.json "
        "says otherwise)",
    )
    ppo.add_argument("--ent-coef", type=non_negative_float, help="entropy bonus")
    ppo.add_argument(
        "--anneal-ent",
        action=argparse.BooleanOptionalAction,
        help="the entropy bonus falls linearly to 0 over the run",
    )
    ppo.add_argument("--update-epochs", type=positive_int, help="epochs per update")
    ppo.add_argument("--num-minibatches", type=positive_int, help="minibatches per epoch")
    ppo.add_argument("--gamma", type=discount, help="discount in (0, 1]")
    ppo.add_argument("--gae-lambda", type=unit_interval, help="GAE's lambda in [0, 1]")
    ppo.add_argument("--clip-coef", type=positive_float, help="PPO's clipping range")
    ppo.add_argument(
        "--norm-obs",
        action=argparse.BooleanOptionalAction,
        help="scale observations by running statistics",
    )
    ppo.add_argument(
        "--norm-reward",
        action=argparse.BooleanOptionalAction,
        help="scale rewards by the discounted return's running std",
    )
    ppo.add_argument(
        "--one-hot-obs",
        action=argparse.BooleanOptionalAction,
        help="a state index observation enters the network one-hot",
    )
    ppo.add_argument(
        "--explore-bonus",
        type=non_negative_float,
        help="count-based exploration bonus: this / sqrt(visits of a state's hash) (0: none)",
    )
    ppo.add_argument(
        "--segment",
        type=count,
        help="measure reward per step over segments of this many steps (continuing games; "
        "0: episode returns)",
    )
    ppo.add_argument(
        "--env-config",
        metavar="JSON",
        help="the game's fields to train on where not its defaults, e.g. "
        "'{\"sticky_action_prob\": 0}' (replaces the tuned file's env_config)",
    )
    ppo.add_argument(
        "--torch-threads",
        type=positive_int,
        help="the learner's threads: PyTorch's, and the compiled update's (its actor and critic "
        "side by side at 2) (1)",
    )
    ppo.add_argument(
        "--threshold",
        type=finite_float,
        help="stop when the running mean (of the last 100 episodes or segments) reaches it",
    )
    ppo.add_argument(
        "--stop-at-target",
        action="store_true",
        help="stop when the mean return reaches the target (ppo.json's, or --threshold)",
    )
    ppo.add_argument(
        "--checkpoint-every", type=count, default=0, help="updates between checkpoints"
    )
    keep_checkpoints_option(ppo)
    ppo.add_argument(
        "--keep",
        choices=("best", "last"),
        default="best",
        help="policy.pt's weights: those of the best running mean over a full window (best), "
        "or the last update's",
    )
    ppo.add_argument(
        "--run-dir",
        help=f"where the run goes (default {DEFAULT_RUNS}/ENV-SEED, or ENV-SEED-run2, ... where "
        "a previous run is)",
    )
    ppo.add_argument("--force", action="store_true", help="write over a previous run in --run-dir")
    ppo.add_argument(
        "--selfplay", action="store_true", help="two-agent games: train against a league"
    )
    ppo.add_argument(
        "--eval-matches", type=count, default=200, help="self-play: matches per evaluation (200)"
    )
    precision_option(ppo)
    ppo.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cuda: the game and the network on the GPU, no host copy in the loop (one-agent "
        "games with discrete actions; needs the cuda extra and an NVIDIA GPU)",
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
