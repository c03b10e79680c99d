"""How far ``precision="float32"`` plays from the float64 rules, per float game, over long runs.

For each game that declares ``PRECISION`` and each policy, each precision plays N episodes side
by side for K steps (next-step autoreset) from a seed of its own (independent samples: from one
seed the two would start a float32 rounding apart and stay close for a while), and every episode
that ends is counted with its length and return (continuing games, which never end: each slot's
mean reward per step over the run instead). The two samples are compared by

- their means, each with its 95% interval, and the difference with its interval (Welch);
- a two-sample Kolmogorov-Smirnov test of the whole distributions (its p-value).

A game passes when the two distributions are the same at the stated tolerance: KS p-value above
0.01 and the difference of the means within 3 standard errors of zero. Policies:

- ``random``: uniform random actions (the same draws for both precisions);
- ``trained``: greedy actions of a PPO policy trained on the float64 game with its tuned
  configuration (``ppo.json``, seed 1, until its target), for the games that have one;
- ``scripted``: CSuite's pendulums instead: torque in the direction of the velocity (it pumps
  energy and swings the pendulum up). Their tuned policies are no use here: trained on one
  episode that never resets, they act well near the top, where they spend the run, and have
  forgotten the swing-up from the resting start (from it their actions earn nothing).

    python benchmarks/precision_deviation.py                    # every float game (minutes)
    python benchmarks/precision_deviation.py --games cartpole --steps 2000
    python benchmarks/precision_deviation.py --out docs/precision

Writes ``deviation.json`` and ``deviation.md`` (the table of docs/precision.md) to ``--out``.
"""

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PRECISIONS = ("float64", "float32")
KS_ALPHA = 0.01  # the KS p-value a game must stay above
MAX_SE = 3.0  # the difference of the means must stay within this many standard errors


def ks_two_sample(a, b):
    """The two-sample Kolmogorov-Smirnov statistic and its asymptotic p-value."""
    a, b = np.sort(np.asarray(a, float)), np.sort(np.asarray(b, float))
    values = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, values, side="right") / len(a)
    cdf_b = np.searchsorted(b, values, side="right") / len(b)
    d = float(np.abs(cdf_a - cdf_b).max())
    m = len(a) * len(b) / (len(a) + len(b))
    lam = (math.sqrt(m) + 0.12 + 0.11 / math.sqrt(m)) * d
    if lam < 1e-3:
        return d, 1.0
    p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * (k * lam) ** 2) for k in range(1, 101))
    return d, float(min(max(p, 0.0), 1.0))


def mean_ci(x):
    x = np.asarray(x, float)
    se = x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else 0.0
    return float(x.mean()), float(se)


def random_policy(engine, seed):
    """Uniform random actions inside the action space (the same stream for each precision)."""
    rng = np.random.default_rng(seed)
    action = engine.action
    n = engine.num_envs
    if action.discrete:
        lo, hi = int(action.low[0]), int(action.high[0])
        return lambda obs: rng.integers(lo, hi, size=n, endpoint=True)
    lo, hi = action.low.reshape(action.shape), action.high.reshape(action.shape)
    return lambda obs: rng.uniform(lo, hi, size=(n,) + action.shape)


def scripted_policy(engine, seed):
    """CSuite pendulum: push (+1) in the direction of the velocity, pull (-1) against it."""
    return lambda obs: np.where(obs["observation"][:, 0, 2] >= 0, 2, 0)


def trained_policy(game):
    """A function making the greedy policy of a PPO run on the float64 game (tuned config,
    seed 1, trained until its target), or None where the game has no tuned configuration."""
    from vecenv.ppo import train, warm, zoo
    from vecenv.ppo.checkpoint import Policy

    entry = zoo.tuned(game)
    if entry is None:
        return None
    warm(entry.game)
    run, trainer = train(entry.game, entry.config(seed=1), threshold=entry.target)
    policy = Policy(trainer.policy, entry.game)
    print(
        f"  trained {game}: {run.steps:,} steps, {run.seconds:.1f} s, mean return "
        f"{run.mean:.1f} (target {entry.target:g})",
        flush=True,
    )

    def make(engine, seed):
        field = engine.observation[0].name
        return lambda obs: policy.act(obs[field][:, 0], engine.num_envs)

    return make, run


def play(game, precision, make_policy, n, steps, seed):
    """(episode lengths, episode returns) of every episode that ended, or for a continuing game
    (None, each slot's mean reward per step)."""
    import vecenv

    engine = vecenv.make(game, num_envs=n, seed=seed, precision=precision)
    act = make_policy(engine, seed)
    obs = engine.obs
    running = np.zeros(n)
    total = np.zeros(n)
    lengths, returns = [], []
    for _ in range(steps):
        obs, rewards, terminated, truncated = engine.step(act(obs))
        r = rewards[:, 0]
        running += r
        total += r
        done = terminated | truncated
        if done.any():
            lengths.extend(engine.states["step"][done].tolist())
            returns.extend(running[done].tolist())
            running[done] = 0.0
    if not lengths:
        return None, (total / steps).tolist()
    return lengths, returns


def compare(samples):
    """The statistics of one figure under both precisions."""
    a, b = samples["float64"], samples["float32"]
    (ma, sa), (mb, sb) = mean_ci(a), mean_ci(b)
    se = math.sqrt(sa**2 + sb**2)
    diff = mb - ma
    d, p = ks_two_sample(a, b)
    ok = p > KS_ALPHA and abs(diff) <= MAX_SE * se + 1e-12
    return {
        "n": [len(a), len(b)],
        "float64": [ma, 1.96 * sa],
        "float32": [mb, 1.96 * sb],
        "difference": [diff, 1.96 * se],
        "ks_d": d,
        "ks_p": p,
        "same": bool(ok),
    }


def measure(game, policy_name, make_policy, n, steps, seed):
    runs = {p: play(game, p, make_policy, n, steps, seed + k) for k, p in enumerate(PRECISIONS)}
    row = {"game": game, "policy": policy_name, "num_envs": n, "steps": steps}
    if runs["float64"][0] is None:
        row["reward per step"] = compare({p: runs[p][1] for p in PRECISIONS})
    else:
        row["episode length"] = compare({p: runs[p][0] for p in PRECISIONS})
        row["episode return"] = compare({p: runs[p][1] for p in PRECISIONS})
    return row


def fmt(stat):
    (m, h) = stat["float64"], stat["float32"]
    diff = stat["difference"]
    return (
        f"{m[0]:.4g} ± {m[1]:.2g} | {h[0]:.4g} ± {h[1]:.2g} | {diff[0]:+.3g} ± {diff[1]:.2g} | "
        f"{stat['ks_p']:.2f} | {'same' if stat['same'] else 'DIFFERENT'}"
    )


def markdown(rows, meta):
    lines = [
        f"Run: `python benchmarks/precision_deviation.py` on {meta['date']}, {meta['machine']}, "
        f"{meta['seconds']:.0f} s. Means ± 95% intervals; KS: the two-sample Kolmogorov-Smirnov "
        f"p-value. Same: KS p > {KS_ALPHA} and the difference within {MAX_SE:g} standard errors.",
        "",
        "| game | policy | figure (episodes float64 / float32) | float64 | float32 | "
        "float32 - float64 | KS p | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for figure in ("episode length", "episode return", "reward per step"):
            if figure not in row:
                continue
            stat = row[figure]
            count = f"{figure} ({stat['n'][0]:,} / {stat['n'][1]:,})"
            lines.append(f"| {row['game']} | {row['policy']} | {count} | {fmt(stat)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    from vecenv import registry
    from vecenv.kernels import precision

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    games = [g for g in registry.list_envs() if precision.declared(registry.rules(g))]
    parser.add_argument("--games", default=",".join(games))
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=5000, help="steps of each run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-train", action="store_true", help="random and scripted only")
    parser.add_argument("--out", help="folder for deviation.json and deviation.md")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = []
    for game in args.games.split(","):
        print(f"{game}:", flush=True)
        policies = [("random", random_policy)]
        if game in ("csuite_pendulum", "pendulum_poke"):
            policies.append(("scripted", scripted_policy))
        elif not args.no_train:
            trained = trained_policy(game)
            if trained is not None:
                policies.append(("trained (PPO, float64)", trained[0]))
        for name, make_policy in policies:
            row = measure(game, name, make_policy, args.num_envs, args.steps, args.seed)
            rows.append(row)
            for figure in ("episode length", "episode return", "reward per step"):
                if figure in row:
                    print(f"  {name}, {figure}: {fmt(row[figure])}", flush=True)
    meta = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{os.cpu_count()} CPUs, {platform.machine()}, load average "
        f"{os.getloadavg()[0]:.1f}",
        "seconds": time.perf_counter() - start,
        "num_envs": args.num_envs,
        "steps": args.steps,
        "seed": args.seed,
    }
    table = markdown(rows, meta)
    print(table)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "deviation.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        (out / "deviation.md").write_text(table)
        print(f"wrote {out / 'deviation.json'} and {out / 'deviation.md'}")
    return 0 if all(r[f]["same"] for r in rows for f in r if isinstance(r[f], dict)) else 1


if __name__ == "__main__":
    sys.exit(main())
