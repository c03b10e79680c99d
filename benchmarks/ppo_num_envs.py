"""Proof that ``--num-envs`` alone does not break a tuned PPO configuration.

A tuned configuration (``ppo.json``) is tuned for its batch; ``vecenv.ppo.zoo.for_num_envs``
rescales ``num_steps`` and ``num_minibatches`` to another number of environments so that the
steps per update and the minibatch size stay as tuned. For each (game, number of environments)
this trains seeds 1-5 (``--seeds``) until the running mean reaches the game's target or the tuned
step budget runs out, as ``ppo_zoo.py`` does, and reports seeds solved, the median env steps and
wall time to the target (compilation excluded; PyTorch on one thread). With ``--plain`` it also
trains the same seeds with only ``num_envs`` changed (nothing rescaled), the way a run went
before. Writes ``ppo_num_envs.json`` to ``--out`` (default ``docs/training``) and, with
``--docs``, the table into docs/training.md between the ``ppo-num-envs`` markers.

    python benchmarks/ppo_num_envs.py                 # CartPole at 8, 64, 256; Acrobot at 64, 256
    python benchmarks/ppo_num_envs.py --cases cartpole:64 --seeds 1,2 --plain
    python benchmarks/ppo_num_envs.py --docs          # and rewrite docs/training.md's table
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

from ppo_zoo import PAGE, machine, medians, write_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CASES = ("cartpole:8", "cartpole:64", "cartpole:256", "acrobot:64", "acrobot:256")
START, END = "<!-- ppo-num-envs:start -->", "<!-- ppo-num-envs:end -->"


def overrides(entry, num_envs, plain):
    """What a run of ``entry``'s game at ``num_envs`` overrides: ``num_envs`` (rescaled), or with
    ``plain`` also the tuned ``num_steps`` and ``num_minibatches``, which then stay as tuned (what
    ``--num-envs`` alone did before)."""
    if not plain:
        return {"num_envs": num_envs}
    tuned = entry.config()
    return {
        "num_envs": num_envs,
        "num_steps": tuned.num_steps,
        "num_minibatches": tuned.num_minibatches,
    }


def attempts(game, num_envs, seeds, plain, out=sys.stdout):
    """A row: every seed's ``zoo.attempt`` at ``num_envs`` (see ``overrides``)."""
    from vecenv import registry
    from vecenv.ppo import zoo

    entry = zoo.tuned(game)
    given = overrides(entry, num_envs, plain)
    config = entry.config(**given)  # what zoo.attempt trains
    done = []
    for seed in seeds:
        attempt = zoo.attempt(game, seed, **given)
        done.append((attempt, os.getloadavg()[0]))
        state = "solved" if attempt.solved else "NOT solved"
        print(
            f"{game} {num_envs} envs{' (plain)' if plain else ''} seed {seed}: {state} at "
            f"{attempt.steps:,} steps, {attempt.seconds:.1f} s (mean {attempt.mean:.4g})",
            file=out,
            flush=True,
        )
    solved = [a for a, _ in done if a.solved]
    return {
        "game": game,
        "id": registry.get_spec(game).gym["id"],
        "num_envs": num_envs,
        "rescaled": not plain,
        "num_steps": config.num_steps,
        "num_minibatches": config.num_minibatches,
        "tuned_num_envs": entry.hyperparameters.get("num_envs"),
        "target": entry.target,
        "budget": config.total_steps,
        "seeds": list(seeds),
        "solved": len(solved),
        "median_steps": statistics.median(a.steps for a in solved) if solved else None,
        "median_seconds": statistics.median(a.seconds for a in solved) if solved else None,
        "load_average": [round(load, 2) for _, load in done],
        "attempts": [a.__dict__ for a, _ in done],
    }


def markdown(table, where):
    lines = [
        "Run: `python benchmarks/ppo_num_envs.py --docs --plain`, "
        f"{where['cpus']} vCPUs, PyTorch {where['torch']} on one thread, {where['date']}; wall "
        "times to the target exclude compilation, under the load shown (the 1-minute load "
        "average, median over the seeds).",
        "",
        "| game | envs (tuned) | configuration | steps per env per update, minibatches | "
        "seeds solved | median steps to target | median wall time | step budget | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table:
        steps, secs = medians(row)
        how = "rescaled (for_num_envs)" if row["rescaled"] else "only num_envs changed"
        load = statistics.median(row["load_average"])
        lines.append(
            f"| {row['id']} | {row['num_envs']} ({row['tuned_num_envs']}) | {how} | "
            f"{row['num_steps']}, {row['num_minibatches']} | "
            f"{row['solved']}/{len(row['seeds'])} | {steps} | {secs} | {row['budget']:,} | "
            f"{load:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help="game:envs, comma-separated")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (1-5)")
    parser.add_argument("--plain", action="store_true", help="also train with num_envs alone")
    parser.add_argument("--out", default=str(ROOT / "docs" / "training"), help="output folder")
    parser.add_argument("--docs", action="store_true", help="rewrite docs/training.md's table")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]
    table = []
    for case in args.cases.split(","):
        game, envs = case.split(":")
        for plain in (False, True) if args.plain else (False,):
            table.append(attempts(game, int(envs), seeds, plain))
    where = machine()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ppo_num_envs.json"), "w") as f:
        json.dump({"machine": where, "rows": table}, f, indent=2)
    text = markdown(table, where)
    print(text)
    if args.docs:
        write_table(text, PAGE, START, END)
    rescaled = [row for row in table if row["rescaled"]]
    return 0 if all(row["solved"] == len(row["seeds"]) for row in rescaled) else 1


if __name__ == "__main__":
    sys.exit(main())
