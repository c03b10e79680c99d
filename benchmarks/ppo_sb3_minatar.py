"""MinAtar at equal wall time: vecenv's PPO against Stable-Baselines3's PPO on the minatar package.

For each game (``--games``, Freeway and Breakout by default) and seed, in this process, one after
the other:

- ``vecenv``: ``vecenv.ppo.train(game, config)`` with the game's shipped configuration (its
  ``ppo.json``: ``vecenv.ppo.zoo.tuned``), after ``vecenv.ppo.warm`` compiled what it calls. Where
  that configuration's target is the published return (Freeway's 58) it stops there; elsewhere
  (Breakout's shipped 10 is far below the published 28) it trains its whole budget of env steps.
  Its wall time is the time both sides get (SB3 stops sooner only where it reaches the end of
  the same budget of env steps first).
- ``sb3``: Stable-Baselines3's ``PPO("MlpPolicy")`` for that many seconds, on the minatar package
  itself (``gymnasium.make("MinAtar/<Game>-v1")``: MinAtar's minimal action set and sticky
  actions, as vecenv's games default to, or the configuration's ``env_config`` where it sets
  them, with a time limit of vecenv's ``episodeSteps``), as many
  envs in SB3's ``DummyVecEnv`` as vecenv's configuration steps, and the same hyper-parameters
  mapped one to one (``sb3_hyperparameters``): rollout length, minibatch size, epochs, learning
  rate and its schedule (over the same budget of env steps), gamma, GAE lambda, clip ranges,
  entropy and value coefficients, gradient clipping, the actor's and critic's hidden layers and
  activation, observation normalisation (SB3's ``VecNormalize``). Its running mean is SB3's own:
  the mean return of its last 100 episodes (``ep_info_buffer``), read after every update, as
  vecenv's trainer reads its own.

Both sides hold PyTorch to the configuration's ``torch_threads``; neither has compilation in its
timed span (vecenv is warmed first, SB3 compiles nothing). The table gives each side's env steps
and running mean when the time is up, and when SB3 (if ever) passed what vecenv reached.

    python benchmarks/ppo_sb3_minatar.py                      # Freeway and Breakout, seed 1
    python benchmarks/ppo_sb3_minatar.py --quick --out /tmp   # two updates a side: checks it
    python benchmarks/ppo_sb3_minatar.py --games minatar_freeway --seeds 1,2

writes ``NAME.json`` (``--name``; else ``sb3_minatar.json``) to ``--out`` (default
``docs/training/sb3``, which docs/training.md cites), and with an ``--out`` of your own the table
as ``NAME.md`` beside it (the documentation's folder takes no page the site does not list).
"""

import argparse
import contextlib
import io
import json
import os
import time

import numpy as np
from ppo_zoo import machine as zoo_machine
from report import check_run_name, load_average

# game: (minatar's name, whether vecenv stops at the shipped target: the published return)
GAMES = {"minatar_freeway": ("Freeway", True), "minatar_breakout": ("Breakout", False)}
WINDOW = 100  # episodes in both sides' running mean


def vecenv_side(game, seed, quick=False):
    """vecenv's trainer on ``game``'s shipped configuration; returns (config, result)."""
    import torch

    from vecenv import ppo
    from vecenv.ppo import zoo

    tuned = zoo.tuned(game)
    config = tuned.config(seed=seed)
    if quick:
        config.total_steps = config.batch_size * 2
    torch.set_num_threads(config.torch_threads)
    ppo.warm(game, like=config)
    stops = GAMES[game][1]
    run, _ = ppo.train(game, config, threshold=tuned.target if stops else None, target=tuned.target)
    last = run.curve[-1][2] if run.curve else float("nan")
    result = {
        "steps": int(run.steps),
        "seconds": run.seconds,
        "running_mean": last,
        "reached": list(run.reached) if run.reached is not None else None,
        "target": tuned.target,
        "target_source": tuned.target_source,
    }
    return config, result


def sb3_hyperparameters(config):
    """SB3's PPO arguments for vecenv's ``PPOConfig`` (the same rollout, update and network)."""
    import torch

    batch = config.num_envs * config.num_steps
    rate = config.learning_rate
    return dict(
        n_steps=config.num_steps,
        batch_size=batch // config.num_minibatches,
        n_epochs=config.update_epochs,
        learning_rate=(lambda left: left * rate) if config.anneal_lr else rate,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_coef,
        clip_range_vf=config.clip_coef if config.clip_vloss else None,
        normalize_advantage=config.norm_adv,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        policy_kwargs=dict(
            net_arch=dict(pi=list(config.hidden), vf=list(config.hidden)),
            activation_fn=torch.nn.ReLU if config.activation == "relu" else torch.nn.Tanh,
        ),
    )


def sb3_side(game, config, seconds, episode_steps):
    """SB3's PPO on minatar's ``game`` for ``seconds`` of wall time; returns its result."""
    import gymnasium
    import torch

    with contextlib.redirect_stderr(io.StringIO()):  # SB3 imports the old gym where installed
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env
        from stable_baselines3.common.vec_env import VecNormalize
    from minatar.gym import register_envs

    torch.set_num_threads(config.torch_threads)
    env_id = f"MinAtar/{GAMES[game][0]}-v1"
    if env_id not in gymnasium.registry:
        register_envs()
    # The time limit inside SB3's Monitor (gymnasium.make's own TimeLimit), so that the episodes
    # it ends are the ones Monitor records.
    env = make_vec_env(
        env_id,
        n_envs=config.num_envs,
        seed=config.seed,
        # the game as vecenv's side trains on it (MinAtar's Environment takes the same names)
        env_kwargs={"max_episode_steps": episode_steps, **config.env_config},
    )
    if config.norm_obs:
        env = VecNormalize(env, norm_obs=True, norm_reward=False, gamma=config.gamma)
    model = PPO(
        "MlpPolicy",
        env,
        **sb3_hyperparameters(config),
        seed=config.seed,
        device="cpu",
        verbose=0,
    )

    class Clock(BaseCallback):
        """Reads SB3's running mean after every update (at the next rollout's start) and stops
        the run once its seconds are spent."""

        def __init__(self):
            super().__init__()
            self.curve = []  # (env steps, seconds, running mean) after every update

        def read(self):
            buffer = self.model.ep_info_buffer
            if buffer is not None and len(buffer) == WINDOW:
                mean = float(np.mean([e["r"] for e in buffer]))
                now = time.perf_counter() - start
                self.curve.append((int(self.model.num_timesteps), now, mean))

        def _on_rollout_start(self):
            self.read()

        def _on_step(self):
            return time.perf_counter() - start < seconds

    clock = Clock()
    start = time.perf_counter()
    # vecenv's budget as SB3's, so that its learning-rate schedule (the share of the budget left)
    # is vecenv's at the same env step; the wall time ends it first
    model.learn(total_timesteps=config.total_steps, callback=clock)
    spent = time.perf_counter() - start
    clock.read()
    env.close()
    last = clock.curve[-1][2] if clock.curve else float("nan")
    return {
        "steps": int(model.num_timesteps),
        "seconds": spent,
        "running_mean": last,
        "curve": clock.curve,
    }


def passed(curve, level):
    """(steps, seconds) where ``curve`` first reached ``level``, or None."""
    return next(((steps, sec) for steps, sec, mean in curve if mean >= level), None)


def machine():
    """The zoo's machine record (``ppo_zoo.machine``) with SB3's version."""
    import stable_baselines3

    return {**zoo_machine(), "stable_baselines3": stable_baselines3.__version__}


def markdown(report):
    lines = [
        f"Run {report['name'] or '(unnamed)'} ({report['machine']['date']}, "
        f"{report['machine']['cpus']} CPUs, load average {report['load_before']} before and "
        f"{report['load_after']} after; SB3 {report['machine']['stable_baselines3']}, "
        f"torch {report['machine']['torch']}):",
        "",
        "| game | seed | wall time | vecenv: env steps, running mean | SB3: env steps, running "
        "mean | SB3 reached vecenv's mean |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["rows"]:
        ours, theirs = row["vecenv"], row["sb3"]
        reached = passed(theirs["curve"], ours["running_mean"])
        when = "never" if reached is None else f"at {reached[0]:,} steps"
        lines.append(
            f"| {row['game']} | {row['seed']} | {ours['seconds'] / 60:.1f} min "
            f"| {ours['steps']:,}, {ours['running_mean']:.2f} "
            f"| {theirs['steps']:,}, {theirs['running_mean']:.2f} | {when} |"
        )
    return "\n".join(lines) + "\n"


def say(game, seed, side, result):
    print(
        f"{game} seed {seed} {side}: {result['steps']:,} steps, running mean "
        f"{result['running_mean']:.2f} after {result['seconds']:.0f} s",
        flush=True,
    )


def main(argv=None):
    """Runs the comparison; returns the report (as ``sb3_minatar.json`` holds it)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--quick", action="store_true", help="two updates a side")
    parser.add_argument(
        "--out",
        help="where the json and the table go (docs/training/sb3; --quick: only where given)",
    )
    parser.add_argument("--name", default="", help="the run's name, as the documentation cites it")
    args = parser.parse_args(argv)
    check_run_name(parser, args.name)
    out = args.out or (None if args.quick else "docs/training/sb3")
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown:
        parser.error(f"--games: {unknown} are not among {list(GAMES)}")
    seeds = [int(s) for s in args.seeds.split(",")]
    import vecenv

    report = {
        "name": args.name,
        "quick": args.quick,
        "machine": machine(),
        "load_before": load_average(),
        "rows": [],
    }
    for game in games:
        for seed in seeds:
            config, ours = vecenv_side(game, seed, args.quick)
            say(game, seed, "vecenv", ours)
            made = vecenv.make(game, num_envs=1, **config.env_config)
            episode_steps = int(made.config["episodeSteps"])
            theirs = sb3_side(game, config, ours["seconds"], episode_steps)
            say(game, seed, "sb3", theirs)
            report["rows"].append({"game": game, "seed": seed, "vecenv": ours, "sb3": theirs})
    report["load_after"] = load_average()
    table = markdown(report)
    print(table)
    if out:
        os.makedirs(out, exist_ok=True)
        stem = args.name or "sb3_minatar"
        with open(os.path.join(out, f"{stem}.json"), "w") as f:
            json.dump(report, f, indent=1)
        if args.out:
            with open(os.path.join(out, f"{stem}.md"), "w") as f:
                f.write(table)
    return report


if __name__ == "__main__":
    main()
