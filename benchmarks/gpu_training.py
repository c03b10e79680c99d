"""Training on a GPU: env-steps/s and time to CartPole-v1 475 and MinAtar Breakout 28, vecenv's PPO
with the game and the network on the GPU (``vecenv train ppo --device cuda``) beside PufferLib's
PuffeRL on the same machine, in one run. Needs a CUDA GPU (``--device cpu`` runs the PuffeRL
sides on the CPU, for checking the script; vecenv's sides need the GPU, or numba's simulator).

Each side trains until the mean return of its last 100 finished episodes reaches the target,
checked after every update, or until its budget; its figures are the env steps and seconds then,
and its env-steps/s over the whole run (rollouts and updates). Sides (``--sides``):

- ``vecenv``: ``vecenv.ppo.device`` with the game's tuned ``ppo.json`` (CartPole: 32 envs x 32
  steps; Breakout: 64 x 64, norm_obs), target 475 / 28 (Breakout's tuned target is 10 in 3M
  steps; 28 is gymnax-blines' PPO return after 10M steps with a 256x2 MLP, so this side trains
  10M steps with that network);
- ``vecenv-wide``: the same with 4,096 envs (CartPole) or 2,048 (Breakout) and PureJaxRL's
  epoch and minibatch counts (4 and 4): the GPU's width at work;
- ``vecenv-purejaxrl``: PureJaxRL's own CartPole settings (``purejaxrl/ppo.py``: 4 envs x 128
  steps, 5e5 steps, learning rate 2.5e-4, 4 epochs of 4 minibatches, entropy 0.01);
- ``pufferlib``: PuffeRL (PufferLib 3.0) with its CartPole configuration (``puffer_cartpole``)
  or, for Breakout, its defaults (``default.ini``: PufferLib has no MinAtar configuration), on
  vecenv's game through ``vecenv.pufferlib`` (its envs on the CPU, its network on ``--device``).

    python benchmarks/gpu_training.py                       # both games, every side, 3 seeds
    python benchmarks/gpu_training.py --games cartpole --seeds 1 --quick

writes ``gpu_training.json`` and ``gpu_training.md`` to ``--out`` (default
``docs/training/gpu``). Published figures for the JAX stacks (other hardware, not run here) are
quoted in the table: gymnax-blines' speed table (seconds per million steps of CartPole with a
network policy: 0.08 s on an RTX 2080Ti at 2k envs, 12.5 M steps/s) and PureJaxRL's README
(CartPole and MinAtar-Breakout PPO "10x faster than CleanRL's PyTorch baselines", 2048 agents
trained at once in half the time of one PyTorch agent).
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ppo_race  # noqa: E402

GAMES = {
    "cartpole": {"env_id": "CartPole-v1", "target": 475.0, "puffer": "puffer_cartpole"},
    "minatar_breakout": {"env_id": "MinAtar-Breakout", "target": 28.0, "puffer": "default"},
}
SIDES = ("vecenv", "vecenv-wide", "vecenv-purejaxrl", "pufferlib")
PUREJAXRL = dict(
    num_envs=4, num_steps=128, total_steps=500_000, learning_rate=2.5e-4, update_epochs=4,
    num_minibatches=4, gamma=0.99, gae_lambda=0.95, clip_coef=0.2, ent_coef=0.01,
)  # fmt: skip
PUBLISHED = [
    "gymnax-blines (README speed table): CartPole-v1, network policy, 1M steps in 0.08 s on an "
    "RTX 2080Ti with 2k envs (12.5 M env-steps/s of rollout, no training)",
    "PureJaxRL (README): PPO on CartPole-v1 and MinAtar-Breakout about 10x faster than "
    "CleanRL's PyTorch PPO; 2048 agents trained in parallel in half the time of one",
    "gymnax-blines: PPO reaches 28 on Breakout-MinAtar in 10M steps (an MLP of 256x2 units)",
]


def vecenv_config(game, side, seed, quick):
    """(PPOConfig, where it comes from) of a vecenv side."""
    from vecenv.ppo import PPOConfig, zoo

    tuned = zoo.tuned(game)
    if side == "vecenv-purejaxrl":
        config, source = PPOConfig(**PUREJAXRL, seed=seed), "PureJaxRL purejaxrl/ppo.py config"
    else:
        config, source = tuned.config(seed=seed), f"tuned {os.path.relpath(tuned.path)}"
        if game == "minatar_breakout":
            config.hidden, config.total_steps = (256, 256), 10_000_000
            source += ", 256x2 MLP and 10M steps (gymnax-blines' network and budget)"
        if side == "vecenv-wide":
            config.num_envs = 4096 if game == "cartpole" else 2048
            config.update_epochs, config.num_minibatches = 4, 4
            config.total_steps = max(config.total_steps, 20 * config.batch_size)
            source += f", {config.num_envs} envs, 4 epochs of 4 minibatches"
    if quick:
        config.total_steps = config.batch_size * 2
    return config, source


def vecenv_side(game, side, seed, quick):
    from vecenv.ppo import device

    config, _ = vecenv_config(game, side, seed, quick)
    warm, _ = vecenv_config(game, side, seed, True)  # compiles the rollout's kernel first
    warm.total_steps = warm.batch_size
    device.train(game, warm)
    run, _ = device.train(game, config, threshold=GAMES[game]["target"])
    return ppo_race.Outcome(
        run.steps, run.seconds, run.reached, config.total_steps, config.batch_size
    )


def puffer_side(game, seed, quick, where):
    import numpy as np
    import pufferlib.pytorch
    import torch

    # PuffeRL's buffers know no bool observations (MinAtar's image is one): as bytes.
    pufferlib.pytorch.numpy_to_torch_dtype_dict.setdefault(np.dtype(np.bool_), torch.uint8)
    return ppo_race.pufferlib_side(
        seed, quick, game=game, config_name=GAMES[game]["puffer"], device=where,
        threshold=GAMES[game]["target"],
    )  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--device", default="cuda", help="PuffeRL's network (cuda or cpu)")
    parser.add_argument("--quick", action="store_true", help="two updates a side: the script")
    parser.add_argument("--out", default=os.path.join("docs", "training", "gpu"))
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    sides = [s for s in args.sides.split(",") if s]
    for name in games:
        if name not in GAMES:
            parser.error(f"unknown game {name!r}; games: {', '.join(GAMES)}")
    for side in sides:
        if side not in SIDES:
            parser.error(f"unknown side {side!r}; sides: {', '.join(SIDES)}")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": dict(ppo_race.machine(), gpu=_gpu_name()),
        "quick": args.quick,
        "published": PUBLISHED,
        "games": {},
    }
    for game in games:
        entry = report["games"][game] = {"target": GAMES[game]["target"], "sides": {}}
        for side in sides:
            if side == "vecenv-purejaxrl" and game != "cartpole":
                continue
            outcomes = []
            for seed in seeds:
                start = time.perf_counter()
                if side == "pufferlib":
                    outcome = puffer_side(game, seed, args.quick, args.device)
                else:
                    outcome = vecenv_side(game, side, seed, args.quick)
                took = time.perf_counter() - start
                print(f"{game} {side} seed {seed}: {outcome.steps:,} steps, reached "
                      f"{outcome.reached}, {took:.1f} s", flush=True)  # fmt: skip
                outcomes.append(outcome)
            entry["sides"][side] = {
                "runs": [_run(o) for o in outcomes],
                "summary": ppo_race.summarise(outcomes),
            }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gpu_training.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(args.out, "gpu_training.md"), "w") as f:
        f.write(table(report))
    return report


def _run(o):
    return {
        "steps": o.steps,
        "seconds": round(o.seconds, 3),
        "steps_per_second": round(o.steps_per_second, 1),
        "reached": list(o.reached) if o.reached else None,
    }


def _gpu_name():
    try:
        import torch

        return torch.cuda.get_device_name() if torch.cuda.is_available() else None
    except ImportError:
        return None


def table(report):
    lines = [f"# PPO on a GPU ({report['machine'].get('gpu')}, {report['date']})", ""]
    lines += ["| game | side | seeds solved | median steps | median seconds | env-steps/s |"]
    lines += ["|---|---|---|---|---|---|"]
    for game, entry in report["games"].items():
        for side, result in entry["sides"].items():
            s = result["summary"]
            steps, seconds = s["median_steps_to_threshold"], s["median_seconds_to_threshold"]
            lines.append(
                f"| {game} {entry['target']:g} | {side} | {s['seeds_solved']}/{s['seeds']} | "
                f"{'-' if steps is None else f'{steps:,.0f}'} | "
                f"{'-' if seconds is None else f'{seconds:.1f}'} | "
                f"{statistics.median(r['steps_per_second'] for r in result['runs']):,.0f} |"
            )
    lines += ["", "Published (other hardware, not run here):", ""]
    lines += [f"- {p}" for p in report["published"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
