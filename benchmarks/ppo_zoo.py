"""Proof that the tuned PPO configurations learn: every seed must reach its game's target.

For each game with a ``ppo.json`` (``vecenv.ppo.zoo``), trains seeds 1-5 (``--seeds``) with the
game's tuned configuration until the running mean reaches the target or the configuration's step
budget runs out, and reports per game: what the running mean measures (the mean return of the last
100 episodes, or for a continuing game the mean reward per step of the last 100 segments), seeds
solved, median env steps and median wall time to the target (compilation excluded; PyTorch on one
thread). Writes ``ppo_zoo.json`` to ``--out`` (default ``docs/training``) and, with ``--readme``,
the table into README.md between the ``ppo-zoo`` markers, labelled with the run's date, machine
and load average (sampled after every seed, as other work shares the machine).

    python benchmarks/ppo_zoo.py                      # every tuned game, seeds 1-5
    python benchmarks/ppo_zoo.py --games cartpole --seeds 1,2
    python benchmarks/ppo_zoo.py --readme             # and rewrite README's table
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
START, END = "<!-- ppo-zoo:start -->", "<!-- ppo-zoo:end -->"


def prove(games, seeds, out=sys.stdout, loads=None):
    """{game: [Attempt per seed]}, printing each attempt as it ends; the 1-minute load average
    after each attempt is appended to ``loads`` (where given)."""
    from vecenv.ppo import zoo

    results = {}
    for game in games:
        results[game] = []
        for seed in seeds:
            attempt = zoo.attempt(game, seed)
            results[game].append(attempt)
            if loads is not None:
                loads.append(os.getloadavg()[0])
            state = "solved" if attempt.solved else "NOT solved"
            metric = attempt.metric.removeprefix("mean_").replace("_", " ")
            print(
                f"{game} seed {seed}: {state} at {attempt.steps:,} steps, "
                f"{attempt.seconds:.1f} s (mean {metric} {attempt.mean:.4g})",
                file=out,
                flush=True,
            )
    return results


def measure(config):
    """What a row's running mean is, in the table's words."""
    if config.segment:
        return f"reward per step ({config.window} segments of {config.segment:,} steps)"
    return f"return ({config.window} episodes)"


def rows(results):
    """One summary row per game: the figures README's table shows."""
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
                "metric": entry.config().metric,
                "measure": measure(entry.config()),
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


def machine(loads=()):
    import torch

    return {
        "date": datetime.date.today().isoformat(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_threads": 1,
        "load_average": [round(x, 2) for x in loads],  # 1-minute, after each seed
    }


def markdown(table, where):
    loads = where.get("load_average") or []
    load = (
        f", load average {statistics.median(loads):.1f} (1-minute, median over the seeds; "
        f"{min(loads):.1f}-{max(loads):.1f})"
        if loads
        else ""
    )
    lines = [
        f"Run: `python benchmarks/ppo_zoo.py --readme` on {where['date']}, "
        f"{where['cpus']} vCPUs{load}, PyTorch {where['torch']} on one thread. Wall times are "
        "this machine's under that load (compilation excluded); the steps are what any "
        "machine's run of the same seed gives, up to floating-point differences between CPUs.",
        "",
        "| game | measured by the mean | target (source) | seeds solved | "
        "median steps to target | median wall time | step budget |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in table:
        steps = f"{row['median_steps']:,.0f}" if row["median_steps"] is not None else "-"
        secs = f"{row['median_seconds']:.1f} s" if row["median_seconds"] is not None else "-"
        lines.append(
            f"| {row['id']} | {row['measure']} | {row['target']:g} ({row['target_source']}) | "
            f"{row['solved']}/{len(row['seeds'])} | {steps} | {secs} | {row['budget']:,} |"
        )
    return "\n".join(lines)


def write_readme(text, readme=ROOT / "README.md"):
    content = readme.read_text()
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{readme}: no {START} ... {END} markers")
    readme.write_text(pattern.sub(lambda _: f"{START}\n{text}\n{END}", content))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", help="comma-separated games (default: every tuned game)")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (1-5)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "training"), help="output folder")
    parser.add_argument("--readme", action="store_true", help="rewrite README's table")
    args = parser.parse_args(argv)
    import torch

    from vecenv.ppo import zoo

    torch.set_num_threads(1)
    games = args.games.split(",") if args.games else sorted(zoo.all_tuned())
    seeds = [int(s) for s in args.seeds.split(",")]
    loads = []
    table = rows(prove(games, seeds, loads=loads))
    where = machine(loads)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ppo_zoo.json"), "w") as f:
        json.dump({"machine": where, "games": table}, f, indent=2)
    text = markdown(table, where)
    print(text)
    if args.readme:
        write_readme(text)
    return 0 if all(row["solved"] == len(row["seeds"]) for row in table) else 1


if __name__ == "__main__":
    sys.exit(main())
