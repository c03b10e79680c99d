"""Proof that the tuned PPO configurations learn: every seed must reach its game's target.

For each game with a ``ppo.json`` (``vecenv.ppo.zoo``), trains seeds 1-5 (``--seeds``) with the
game's tuned configuration until the mean return of the last 100 episodes reaches the target or
the configuration's step budget runs out, and reports per game: seeds solved, median env steps
and median wall time to the target (compilation excluded; PyTorch on one thread). Writes
``ppo_zoo.json`` to ``--out`` (default ``docs/training``) and, with ``--docs``, the table into
docs/training.md between the ``ppo-zoo`` markers, labelled with the run's date and machine.

    python benchmarks/ppo_zoo.py                      # every tuned game, seeds 1-5
    python benchmarks/ppo_zoo.py --games cartpole --seeds 1,2
    python benchmarks/ppo_zoo.py --docs               # and rewrite docs/training.md's table
"""

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "training.md"  # the page whose table --docs rewrites
START, END = "<!-- ppo-zoo:start -->", "<!-- ppo-zoo:end -->"


def prove(games, seeds, out=sys.stdout):
    """{game: [Attempt per seed]}, printing each attempt as it ends."""
    from vecenv.ppo import zoo

    results = {}
    for game in games:
        results[game] = []
        for seed in seeds:
            attempt = zoo.attempt(game, seed)
            results[game].append(attempt)
            state = "solved" if attempt.solved else "NOT solved"
            print(
                f"{game} seed {seed}: {state} at {attempt.steps:,} steps, "
                f"{attempt.seconds:.1f} s (mean return {attempt.mean_return:.1f})",
                file=out,
                flush=True,
            )
    return results


def rows(results):
    """One summary row per game: the figures docs/training.md's table shows."""
    from vecenv import registry
    from vecenv.ppo import zoo

    table = []
    for game, attempts in results.items():
        entry = zoo.tuned(game)
        solved = [a for a in attempts if a.solved]
        table.append(
            {
                "game": game,
                "id": registry.get_spec(game).gym["id"],
                "target": entry.target,
                "target_source": entry.target_source,
                "budget": entry.config().total_steps,
                "seeds": [a.seed for a in attempts],
                "solved": len(solved),
                "median_steps": statistics.median(a.steps for a in solved) if solved else None,
                "median_seconds": statistics.median(a.seconds for a in solved) if solved else None,
                "attempts": [a.__dict__ for a in attempts],
            }
        )
    return table


def machine():
    import torch

    return {
        "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": 1,
    }


def markdown(table, where):
    lines = [
        f"Run: `python benchmarks/ppo_zoo.py --docs` on {where['date']}, "
        f"{where['cpus']} vCPUs, PyTorch {where['torch']} on one thread. Wall times are "
        "this machine's (compilation excluded); the steps are what any machine's run of the "
        "same seed gives, up to floating-point differences between CPUs.",
        "",
        "| game | target (source) | seeds solved | median steps to target | "
        "median wall time | step budget |",
        "|---|---|---|---|---|---|",
    ]
    for row in table:
        steps = f"{row['median_steps']:,.0f}" if row["median_steps"] is not None else "-"
        secs = f"{row['median_seconds']:.1f} s" if row["median_seconds"] is not None else "-"
        lines.append(
            f"| {row['id']} | {row['target']:g} ({row['target_source']}) | "
            f"{row['solved']}/{len(row['seeds'])} | {steps} | {secs} | {row['budget']:,} |"
        )
    return "\n".join(lines)


def write_table(text, page=PAGE):
    content = page.read_text()
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{page}: no {START} ... {END} markers")
    page.write_text(pattern.sub(lambda _: f"{START}\n{text}\n{END}", content))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", help="comma-separated games (default: every tuned game)")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (1-5)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "training"), help="output folder")
    parser.add_argument("--docs", action="store_true", help="rewrite docs/training.md's table")
    args = parser.parse_args(argv)
    import torch

    from vecenv.ppo import zoo

    torch.set_num_threads(1)
    games = args.games.split(",") if args.games else sorted(zoo.all_tuned())
    seeds = [int(s) for s in args.seeds.split(",")]
    table = rows(prove(games, seeds))
    where = machine()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ppo_zoo.json"), "w") as f:
        json.dump({"machine": where, "games": table}, f, indent=2)
    text = markdown(table, where)
    print(text)
    if args.docs:
        write_table(text)
    return 0 if all(row["solved"] == len(row["seeds"]) for row in table) else 1


if __name__ == "__main__":
    sys.exit(main())
