"""Where a MinAtar training step's time goes, with the learner on one thread and on two.

Trains gymnax-blines' MinAtar PPO configuration (``BLINES``: separate actor and critic MLPs of
256x2 ReLU units on the flattened image, 64 environments x 128 steps, 8 minibatches, 4 epochs,
a constant learning rate of 5e-4, gamma 0.999) warm (a two-update run first compiles the
kernels or loads them from numba's cache) for ``--updates`` updates at each ``--threads`` count,
and prints the env steps per second and the shares of the wall time in the compiled update
(``vecenv.ppo.compiled_update``), the rollout's forward pass and sampling
(``vecenv.ppo.compiled``), the environment's steps and the rest (GAE, bookkeeping). The same
seed trains the same network at every thread count (the update's arithmetic does not depend on
it), so only the time differs.

    python benchmarks/ppo_learner.py                          # Breakout and Seaquest, 1 and 2
    python benchmarks/ppo_learner.py --games minatar_asterix --threads 2 --updates 60
"""

import argparse
import cProfile
import os
import platform
import pstats

# gymnax-blines' agents/<Game>-MinAtar/ppo.yaml, in PPOConfig's fields (its lr_begin = lr_end).
BLINES = {
    "num_envs": 64,
    "num_steps": 128,
    "num_minibatches": 8,
    "update_epochs": 4,
    "learning_rate": 5e-4,
    "anneal_lr": False,
    "gamma": 0.999,
    "gae_lambda": 0.95,
    "clip_coef": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "hidden": (256, 256),
    "activation": "relu",
    "norm_obs": False,
}

# (label, the profiled function's file and name): their own time, not their callees'.
PARTS = (
    ("update", "compiled_update.py", "_update"),
    ("rollout forward", "compiled.py", "_run"),
)


def measure(game, threads, updates, seed=1):
    """(env steps per second, {part: share of the wall time}) of a warm run."""
    from vecenv.ppo import PPOConfig, train, warm

    config = dict(BLINES, torch_threads=threads, seed=seed)
    batch = config["num_envs"] * config["num_steps"]
    warm(game)
    train(game, PPOConfig(**config, total_steps=2 * batch))
    profile = cProfile.Profile()
    profile.enable()
    run, _ = train(game, PPOConfig(**config, total_steps=updates * batch))
    profile.disable()
    spent = dict.fromkeys(label for label, _, _ in PARTS)
    for (path, _, name), (_, _, own, _, _) in pstats.Stats(profile).stats.items():
        for label, file, function in PARTS:
            if name == function and os.path.basename(path) == file:
                spent[label] = (spent[label] or 0.0) + own
    shares = {label: (seconds or 0.0) / run.seconds for label, seconds in spent.items()}
    shares["env"] = run.env_fraction
    shares["rest"] = max(0.0, 1.0 - sum(shares.values()))
    return run.steps_per_second, shares


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="minatar_breakout,minatar_seaquest")
    parser.add_argument("--threads", default="1,2", help="comma-separated learner threads")
    parser.add_argument("--updates", type=int, default=30, help="timed updates per run")
    args = parser.parse_args(argv)
    import torch

    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"PyTorch {torch.__version__}; gymnax-blines' MinAtar configuration, warm, "
        f"{args.updates} updates of {BLINES['num_envs'] * BLINES['num_steps']:,} steps"
    )
    for game in args.games.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            rate, shares = measure(game, threads, args.updates)
            parts = ", ".join(f"{label} {share:.0%}" for label, share in shares.items())
            print(f"{game}, {threads} learner thread(s): {rate:,.0f} steps/s ({parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
