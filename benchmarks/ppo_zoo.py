"""Proof that the tuned PPO configurations learn: every seed must reach its game's target.

For each game with a ``ppo.json`` (``vecenv.ppo.zoo``), trains seeds 1-5 (``--seeds``) with the
game's tuned configuration until the running mean reaches the target or the configuration's step
budget runs out, and reports per game: what the running mean measures (the mean return of the last
100 episodes, or for a continuing game the mean reward per step of the last 100 segments), seeds
solved, median env steps and median wall time to the target (compilation excluded; PyTorch on the
threads the configuration sets, one by default). Writes ``ppo_zoo.json`` to ``--out`` (default
``docs/training``) and, with ``--docs``, the table into docs/training.md between the ``ppo-zoo``
markers, labelled with the run's date, machine and load average (sampled after every seed, as
other work shares the machine).

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


def prove(games, seeds, out=sys.stdout, loads=None):
    """{game: [Attempt per seed]}, printing each attempt as it ends; the 1-minute load average
    after each attempt is appended to ``loads[game]`` (where given)."""
    from vecenv.ppo import zoo

    results = {}
    for game in games:
        results[game] = []
        for seed in seeds:
            attempt = zoo.attempt(game, seed)
            results[game].append(attempt)
            if loads is not None:
                loads.setdefault(game, []).append(os.getloadavg()[0])
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


def rows(results, loads=None):
    """One summary row per game: the figures docs/training.md's table shows, with the run's date
    and the 1-minute load averages after each of its seeds (``loads``: {game: [...]})."""
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
                "torch_threads": entry.config().torch_threads,
                "seeds": [a.seed for a in attempts],
                "solved": len(solved),
                "median_steps": statistics.median(a.steps for a in solved) if solved else None,
                "median_seconds": statistics.median(a.seconds for a in solved) if solved else None,
                "date": datetime.date.today().isoformat(),
                "load_average": [round(x, 2) for x in (loads or {}).get(game, [])],
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
    }


def load_label(row):
    """A row's date and the median 1-minute load average over its seeds (other work shares the
    machine, and its wall times show it)."""
    loads = row.get("load_average") or []
    load = f", load {statistics.median(loads):.1f}" if loads else ""
    return f"{row.get('date', '-')}{load}"


def merged(table, path):
    """``table`` with the rows of games it does not hold kept from the earlier ``path`` (a
    ``ppo_zoo.json``), so games can be proven one run at a time; sorted by game."""
    kept = {}
    if os.path.exists(path):
        with open(path) as f:
            earlier = json.load(f)
        for row in earlier.get("games", []):
            # Rows of runs before continuing games had a metric: episodes' returns.
            row.setdefault("metric", "mean_return")
            row.setdefault("measure", "return (100 episodes)")
            row.setdefault("date", earlier.get("machine", {}).get("date", "-"))
            row.setdefault("torch_threads", 1)  # rows from before configurations set threads
            kept[row["game"]] = row
    kept.update({row["game"]: row for row in table})
    return [kept[game] for game in sorted(kept)]


def medians(row):
    """A row's median steps and wall time to the target as the tables print them ("-": no seed
    reached it)."""
    steps = f"{row['median_steps']:,.0f}" if row["median_steps"] is not None else "-"
    secs = f"{row['median_seconds']:.1f} s" if row["median_seconds"] is not None else "-"
    return steps, secs


def threads_said(table):
    """The learner's threads, in words: one unless a configuration sets more (``torch_threads``)."""
    more = [f"{row['id']}'s {row['torch_threads']}" for row in table if row["torch_threads"] > 1]
    return "on one thread" + (f" ({', '.join(more)})" if more else "")


def markdown(table, where):
    lines = [
        "Run: `python benchmarks/ppo_zoo.py --docs --games G` (one game at a time, rows kept), "
        f"{where['cpus']} vCPUs, PyTorch {where['torch']} {threads_said(table)}. Wall times are "
        "this machine's under the load shown (the 1-minute load average, median over a game's "
        "seeds; compilation excluded); the steps are what any machine's run of the same seed "
        "gives, up to floating-point differences between CPUs.",
        "",
        "| game | measured by the mean | target (source) | seeds solved | "
        "median steps to target | median wall time | step budget | run, load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in table:
        steps, secs = medians(row)
        lines.append(
            f"| {row['id']} | {row['measure']} | {row['target']:g} ({row['target_source']}) | "
            f"{row['solved']}/{len(row['seeds'])} | {steps} | {secs} | {row['budget']:,} | "
            f"{load_label(row)} |"
        )
    return "\n".join(lines)


def write_table(text, page=PAGE, start=START, end=END):
    """``text`` in place of what ``page`` holds between the markers ``start`` and ``end``."""
    content = page.read_text()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(content):
        raise SystemExit(f"{page}: no {start} ... {end} markers")
    page.write_text(pattern.sub(lambda _: f"{start}\n{text}\n{end}", content))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", help="comma-separated games (default: every tuned game)")
    parser.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated seeds (1-5)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "training"), help="output folder")
    parser.add_argument("--docs", action="store_true", help="rewrite docs/training.md's table")
    args = parser.parse_args(argv)
    import torch

    from vecenv.ppo import zoo

    torch.set_num_threads(1)  # the trainer sets each configuration's torch_threads
    games = args.games.split(",") if args.games else sorted(zoo.all_tuned())
    seeds = [int(s) for s in args.seeds.split(",")]
    loads = {}
    ran = rows(prove(games, seeds, loads=loads), loads)
    where = machine()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "ppo_zoo.json")
    table = merged(ran, path)
    with open(path, "w") as f:
        json.dump({"machine": where, "games": table}, f, indent=2)
    text = markdown(table, where)
    print(text)
    if args.docs:
        write_table(text)
    return 0 if all(row["solved"] == len(row["seeds"]) for row in ran) else 1


if __name__ == "__main__":
    sys.exit(main())
