"""Training on vecenv against training on the vector envs users have today, in one run.

The same PPO (``vecenv.ppo.Trainer``, same hyper-parameters and seeds) trains on both sides:

- CartPole-v1 to a mean return of 475: vecenv's VectorEnv against gymnasium's own
  ``CartPoleVectorEnv`` (its ``vector_entry_point``, numpy over all envs);
- Acrobot-v1 to -100: vecenv's VectorEnv against ``SyncVectorEnv`` (gymnasium has no vector
  Acrobot);
- ConnectX against a fixed opponent: vecenv's VectorEnv (the opponent inside the engine) against a
  ``SyncVectorEnv`` over kaggle-environments' ``env.train([None, opponent])``, for a fixed number
  of steps (throughput: kaggle-environments is too slow to train to a threshold here);
- ConnectX self-play against a league (``vecenv.ppo.league``), its plies per second.

Each side reports wall-clock time to the threshold (median over the seeds), env-steps per second,
and the fraction of wall time spent inside the env. ``python benchmarks/training.py`` runs it all
and writes the learning curves (PNG) and ``training.json`` to ``--out`` (default
``docs/training``); ``--quick`` cuts every budget down (a smoke run). Both sides run one env call
at a time on one thread, and PyTorch on one thread.
"""

import argparse
import json
import os
import statistics
import sys
import time

import gymnasium
import numpy as np

import vecenv  # noqa: F401  (registers the vecenv/ ids)

N = 64
SEEDS = (1, 2, 3)
TARGETS = {"CartPole-v1": 475.0, "Acrobot-v1": -100.0}
BUDGET = {"CartPole-v1": 600_000, "Acrobot-v1": 600_000}
# ConnectX: (N, steps per rollout) for each opponent; kaggle-environments' negamax takes about
# 60 ms a move, so its side gets a smaller batch.
CONNECTX = {"random": (256, 32), "negamax": (64, 8)}
CONNECTX_N, CONNECTX_STEPS = CONNECTX["random"]


def _config(total, seed, num_envs=N, **kw):
    from vecenv.ppo import PPOConfig

    return PPOConfig(num_envs=num_envs, total_steps=total, seed=seed, **kw)


def warm(env):
    """One reset and step before timing: compilation (or numba's cache load) is not training."""
    env.reset(seed=0)
    env.step(env.action_space.sample())


def train_once(env, config, threshold=None):
    from vecenv.ppo import Trainer

    warm(env)
    try:
        return Trainer(env, config).run(threshold=threshold)
    finally:
        env.close()


def time_to_threshold(env_id, seeds=SEEDS, budget=None, n=N):
    """{side: [Run per seed]} for vecenv and gymnasium on ``env_id``."""
    from vecenv.ppo import vector_env

    threshold, total = TARGETS[env_id], budget or BUDGET[env_id]
    runs = {}
    for side in ("vecenv", "gymnasium"):
        runs[side] = [
            train_once(vector_env(env_id, n, backend=side), _config(total, seed, n), threshold)
            for seed in seeds
        ]
    return runs


# -- kaggle-environments as a gymnasium.Env, for the ConnectX throughput comparison ------------


class KaggleConnectX(gymnasium.Env):
    """kaggle-environments' ConnectX ``train([None, opponent])`` with vecenv's spaces (board,
    legal moves, mark), so the same trainer drives it; an illegal move ends the game as Kaggle
    rules it (reward -1)."""

    def __init__(self, opponent="random"):
        from kaggle_environments import make

        self.kaggle = make("connectx", debug=False)
        self.trainer = self.kaggle.train([None, opponent])
        cfg = self.kaggle.configuration
        self.columns, self.cells = cfg.columns, cfg.rows * cfg.columns
        self.observation_space = gymnasium.spaces.Dict(
            {
                "board": gymnasium.spaces.Box(0, 2, (self.cells,), np.int8),
                "legal": gymnasium.spaces.Box(0, 1, (self.columns,), np.bool_),
                "mark": gymnasium.spaces.Box(1, 2, (), np.int8),
            }
        )
        self.action_space = gymnasium.spaces.Discrete(self.columns)

    def _obs(self, observation):
        board = np.asarray(observation["board"], dtype=np.int8)
        return {
            "board": board,
            "legal": board[: self.columns] == 0,
            "mark": np.array(observation["mark"], dtype=np.int8),
        }

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs(self.trainer.reset()), {}

    def step(self, action):
        observation, reward, done, info = self.trainer.step(int(action))
        return (
            self._obs(observation),
            float(reward or 0.0) if reward is not None else -1.0,
            done,
            False,
            {},
        )


def connectx_throughput(opponent, iterations, n=CONNECTX_N, num_steps=CONNECTX_STEPS):
    """{side: Run} of the trainer on ConnectX against ``opponent``: kaggle-environments for
    ``iterations`` updates, vecenv for 20 times as many (its runs are too short to time
    otherwise); the same N and hyper-parameters."""
    ours = gymnasium.make_vec(
        "vecenv/ConnectX-v0", num_envs=n, vectorization_mode="vector_entry_point", opponent=opponent
    )
    theirs = gymnasium.vector.SyncVectorEnv([lambda: KaggleConnectX(opponent) for _ in range(n)])
    batch = n * num_steps

    def config(iters):
        return _config(batch * iters, 1, n, num_steps=num_steps)

    return {
        "vecenv": train_once(ours, config(iterations * 20)),
        "kaggle-environments": train_once(theirs, config(iterations)),
    }


def selfplay_throughput(total, n=N):
    from vecenv.ppo import PPOConfig, league

    trainer = league.LeagueTrainer("connectx", PPOConfig(num_envs=n, total_steps=total, seed=1))
    result = trainer.run()
    return trainer, result


# -- report ------------------------------------------------------------------------------------


def describe(run):
    return {
        "steps": run.steps,
        "seconds": round(run.seconds, 3),
        "steps_per_second": round(run.steps_per_second, 1),
        "env_fraction": round(run.env_fraction, 4),
        "reached": run.reached,
        "mean_return": run.mean,
    }


def threshold_lines(env_id, runs):
    ours, theirs = runs["vecenv"], runs["gymnasium"]

    def median_time(rs):
        times = [r.reached[1] if r.reached else float("inf") for r in rs]
        return statistics.median(times)

    def median_rate(rs):
        return statistics.median(r.steps_per_second for r in rs)

    t_ours, t_theirs = median_time(ours), median_time(theirs)
    peer = "CartPoleVectorEnv" if env_id == "CartPole-v1" else "SyncVectorEnv"
    return {
        "env": env_id,
        "threshold": TARGETS[env_id],
        "peer": f"gymnasium {peer}",
        "median_seconds_to_threshold": {"vecenv": t_ours, "gymnasium": t_theirs},
        "time_ratio": t_theirs / t_ours,
        "median_steps_per_second": {"vecenv": median_rate(ours), "gymnasium": median_rate(theirs)},
        "steps_per_second_ratio": median_rate(ours) / median_rate(theirs),
        "median_env_fraction": {
            "vecenv": statistics.median(r.env_fraction for r in ours),
            "gymnasium": statistics.median(r.env_fraction for r in theirs),
        },
        "runs": {side: [describe(r) for r in rs] for side, rs in runs.items()},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("docs", "training"))
    parser.add_argument("--quick", action="store_true", help="tiny budgets (a smoke run)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    from vecenv.ppo import plot

    seeds = SEEDS[:1] if args.quick else SEEDS
    report = {"num_envs": N, "seeds": list(seeds), "torch_threads": 1, "env_threads": 1}
    for env_id in TARGETS:
        runs = time_to_threshold(env_id, seeds, budget=20_000 if args.quick else None)
        line = threshold_lines(env_id, runs)
        report[env_id] = line
        print(
            f"{env_id}: median time to {line['threshold']:g}: vecenv "
            f"{line['median_seconds_to_threshold']['vecenv']:.1f} s, {line['peer']} "
            f"{line['median_seconds_to_threshold']['gymnasium']:.1f} s "
            f"(ratio {line['time_ratio']:.2f}x); env-steps/s ratio "
            f"{line['steps_per_second_ratio']:.2f}x; env share of wall time: vecenv "
            f"{line['median_env_fraction']['vecenv']:.1%}, gymnasium "
            f"{line['median_env_fraction']['gymnasium']:.1%}",
            flush=True,
        )
        plot(
            {
                f"{side} seed {seed}": run
                for side, rs in runs.items()
                for seed, run in zip(seeds, rs, strict=True)
            },
            os.path.join(args.out, f"{env_id}.png"),
            title=f"PPO on {env_id}, {N} envs: vecenv vs {line['peer']}",
            threshold=line["threshold"],
        )
    for opponent, (n, steps) in CONNECTX.items():
        runs = connectx_throughput(opponent, 1, n=8 if args.quick else n, num_steps=steps)
        ours, theirs = runs["vecenv"], runs["kaggle-environments"]
        ratio = ours.steps_per_second / theirs.steps_per_second
        report[f"ConnectX vs {opponent}"] = {
            "ratio": ratio,
            "runs": {side: describe(r) for side, r in runs.items()},
        }
        print(
            f"ConnectX against {opponent}, N={n}: PPO env-steps/s "
            f"vecenv {ours.steps_per_second:,.0f}, "
            f"kaggle-environments train {theirs.steps_per_second:,.0f} (ratio {ratio:,.0f}x)",
            flush=True,
        )
    trainer, result = selfplay_throughput(N * 32 * (2 if args.quick else 40))
    rate = result.steps / result.seconds
    report["ConnectX self-play"] = {
        "plies": result.steps,
        "decisions": result.decisions,
        "plies_per_second": rate,
        "env_fraction": result.env_seconds / result.seconds,
        "league": trainer.league,
    }
    print(f"ConnectX self-play against a league: {rate:,.0f} plies/s", flush=True)
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(report, f, indent=2, default=float)
    return report


if __name__ == "__main__":
    # kaggle-environments, installed apart from the environment (tests/isolated.py).
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests import isolated

    isolated.kaggle_on_import()
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
