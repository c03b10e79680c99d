"""MinAtar against the published PPO returns: gymnax-blines' configuration, its learning curve.

Trains each ``--games`` game with gymnax-blines' MinAtar PPO configuration (``ppo_learner.BLINES``:
separate actor and critic MLPs of 256x2 ReLU units, 64 environments x 128 steps, 8 minibatches,
4 epochs, a constant learning rate of 5e-4, gamma 0.999) on two learner threads for its 10M env
steps (``--total-steps``), on the game as gymnax has it: no sticky actions (``--sticky`` sets
MinAtar's own probability, 0.1, instead). Compilation is excluded (``vecenv.ppo.warm`` first).
Each run's curve (env steps, seconds, the mean return of the last 100 episodes, after every
update), its best running mean and when it first reached the published return are added to
``--out`` (default ``docs/training/minatar.json``) under ``--name``, replacing an earlier record
of the same name, game and seed; docs/training.md draws the curves from it, the published
returns drawn in.

    python benchmarks/ppo_minatar.py --games minatar_space_invaders --name M6
    python benchmarks/ppo_minatar.py --games minatar_breakout --seeds 2,3 --name B5
    python benchmarks/ppo_minatar.py --set num_minibatches=16 --name B6   # one field changed
    python benchmarks/ppo_minatar.py --quick --out /tmp/minatar.json    # two updates: checks it
"""

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

from ppo_learner import BLINES
from ppo_zoo import machine
from report import check_run_name, load_average

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "training" / "minatar.json"
# gymnax's README (gymnax-blines, 10M steps); Seaquest, which it does not report, the 30.
PUBLISHED = {
    "minatar_asterix": (15.0, "gymnax-blines"),
    "minatar_breakout": (28.0, "gymnax-blines"),
    "minatar_freeway": (58.0, "gymnax-blines"),
    "minatar_space_invaders": (131.0, "gymnax-blines"),
    "minatar_seaquest": (30.0, "no published PPO return; 30 within 10M steps"),
}
POINTS = 400  # the curve's rows kept, evenly over the run (its best and its last always kept)


def thinned(curve, points=POINTS):
    """At most about ``points`` rows of ``curve``, evenly spaced, with its best and last rows."""
    if len(curve) <= points:
        return [list(row) for row in curve]
    step = len(curve) / points
    keep = {int(k * step) for k in range(points)} | {len(curve) - 1}
    keep.add(max(range(len(curve)), key=lambda k: curve[k][2]))
    return [list(curve[k]) for k in sorted(keep)]


def overrides(pairs):
    """``--set FIELD=JSON`` pairs as {field: value}: fields of PPOConfig that a run changes from
    gymnax-blines' configuration (ValueError names a malformed pair or an unknown field)."""
    from vecenv.ppo import PPOConfig

    fields = set(PPOConfig.__dataclass_fields__) - {
        "seed",
        "total_steps",
        "torch_threads",
        "env_config",
    }
    changed = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"--set {pair!r}: FIELD=JSON, FIELD one of {sorted(fields)}")
        try:
            changed[name] = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"--set {pair!r}: the value is not JSON ({error})") from None
    return changed


def attempt(game, seed, total_steps, sticky, threads=2, changed=None):
    """One run of gymnax-blines' configuration (with ``changed`` fields); its record."""
    from vecenv import ppo

    config = ppo.PPOConfig(
        **{**BLINES, **(changed or {})},
        total_steps=total_steps,
        seed=seed,
        torch_threads=threads,
        env_config={"sticky_action_prob": 0.1 if sticky else 0.0},
    )
    published, source = PUBLISHED[game]
    ppo.warm(game, like=config)
    run, _ = ppo.train(game, config, target=published)
    best = max(run.curve, key=lambda row: row[2]) if run.curve else None
    return {
        "game": game,
        "seed": seed,
        "sticky_action_prob": config.env_config["sticky_action_prob"],
        "total_steps": total_steps,
        "torch_threads": threads,
        "changed": dict(changed or {}),
        "published": published,
        "published_source": source,
        "steps": int(run.steps),
        "seconds": run.seconds,
        "reached": list(run.reached) if run.reached is not None else None,
        "best": list(best) if best else None,
        "last": list(run.curve[-1]) if run.curve else None,
        "curve": thinned(run.curve),
    }


def summary(record):
    """One run in a line."""
    best, last = record["best"], record["last"]
    if best is None:
        return f"{record['game']} seed {record['seed']}: no episode ended"
    reached = record["reached"]
    where = f"reached at {reached[0]:,} steps" if reached else "not reached"
    return (
        f"{record['game']} seed {record['seed']}: best {best[2]:.2f} at {best[0]:,} steps "
        f"({best[1] / 60:.1f} min), last {last[2]:.2f} at {record['steps']:,}; "
        f"published {record['published']:g}, {where}"
    )


def merged(path, records):
    """``path``'s runs with ``records`` in place of those of the same name, game and seed."""
    old = json.loads(Path(path).read_text()) if os.path.exists(path) else {"runs": []}
    key = lambda r: (r["name"], r["game"], r["seed"])  # noqa: E731
    fresh = {key(r) for r in records}
    runs = [r for r in old["runs"] if key(r) not in fresh] + records
    return {"runs": sorted(runs, key=lambda r: (r["game"], r["name"], r["seed"]))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="minatar_breakout")
    parser.add_argument("--seeds", default="1")
    parser.add_argument("--total-steps", type=int, default=10_000_000)
    parser.add_argument("--sticky", action="store_true", help="MinAtar's sticky actions (0.1)")
    parser.add_argument("--threads", type=int, default=2, help="learner threads (2)")
    parser.add_argument("--quick", action="store_true", help="two updates a run")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=JSON",
        help="a PPOConfig field changed from gymnax-blines' configuration (repeatable)",
    )
    parser.add_argument("--name", default="", help="the run's name, as the documentation cites it")
    parser.add_argument("--out", help=f"the record to add to ({OUT.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in PUBLISHED]
    if unknown:
        parser.error(f"--games: {unknown} are not among {list(PUBLISHED)}")
    check_run_name(parser, args.name)
    if args.quick and not args.out:
        parser.error("--quick writes only to an --out of your own")
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        parser.error(f"--seeds: integers separated by commas, got {args.seeds!r}")
    try:
        changed = overrides(args.set)
    except ValueError as error:
        parser.error(str(error))
    batch = {**BLINES, **changed}
    total = batch["num_envs"] * batch["num_steps"] * 2 if args.quick else args.total_steps
    if total < 1:
        parser.error(f"--total-steps: a positive number, got {total}")
    records = []
    for game in games:
        for seed in seeds:
            before = load_average()
            record = attempt(game, seed, total, args.sticky, args.threads, changed)
            record.update(
                name=args.name or "unnamed",
                date=datetime.date.today().isoformat(),
                load_before=before,
                load_after=load_average(),
                machine=machine(),
            )
            records.append(record)
            print(summary(record), flush=True)
    out = Path(args.out) if args.out else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(merged(out, records), indent=1) + "\n")
    return records


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
