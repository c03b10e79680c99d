"""How strong trained AlphaZero networks are: matches against named opponents with 95% Wilson
intervals and, on connectx's standard board, the share of positions where the network's move
keeps the game-theoretic value (``envs/connectx/solver.py``).

Not pytest: ``python benchmarks/alphazero_strength.py RUN_DIR [RUN_DIR ...] [--file best.pt]
[--simulations 64] [--matches 400] [--opponents negamax,mcts:1000] [--positions 200] [--seed 0]
[--json docs/alphazero/connectx.json] [--name RUN]``
plays each run's checkpoint (searching ``--simulations`` a move, Gumbel with its noise off, as
``FILE.pt:N`` plays) against each opponent, seats alternating, seeds never used in training
(a run seeds its games from its own seed and iteration; these matches from ``--seed``), and
prints a Markdown table. The positions are reached by random legal moves from the start
(8 to 20 checkers, games not over; the solver answers those in milliseconds to seconds) and
are the same for every run. ``--json`` writes the figures with each run's curve (its
evaluations during training against the minutes they came at), which the documentation's
picture of strength against training minutes is drawn from (``docs/hooks/plots.py``).
"""

import argparse
import csv
import datetime
import json
import os
import platform
import time

import numpy as np
from report import load_average

from vecenv import alphazero, search, selfplay
from vecenv.engine import Engine
from vecenv.envs.connectx import solver
from vecenv.kernels.turns import ACTIVE
from vecenv.stats import wilson


def random_positions(count, seed):
    """(states, seats, boards) of ``count`` connectx positions reached by random legal moves,
    8 to 20 checkers on the board, the game not over."""
    rng = np.random.default_rng(seed)
    engine = Engine("connectx", num_envs=count, seed=seed, autoreset="disabled")
    engine.reset(seed=seed)
    stop = rng.integers(8, 21, size=count)
    for ply in range(20):
        state = engine.get_state()
        active = (state["status"] == ACTIVE) & (state["done"] == 0)[:, None]
        actions = np.zeros((count, 2), dtype=np.int64)
        for i in range(count):
            if ply < stop[i] and active[i].any():
                seat = int(np.argmax(active[i]))
                actions[i, seat] = rng.choice(np.flatnonzero(engine.obs["legal"][i]))
        frozen = ply >= stop
        if frozen.all():
            break
        before = engine.get_state()
        engine.step(actions)
        after = engine.get_state()
        after[frozen] = before[frozen]  # a position stops at its own ply
        engine.set_state(after)
    state = engine.get_state()
    keep = np.flatnonzero((state["done"] == 0) & (state["status"] == ACTIVE).any(axis=1))
    seats = np.argmax(state["status"][keep] == ACTIVE, axis=1)
    return state[keep], seats, engine.obs["board"][keep].copy()


def keeps_value(player, simulations, positions, seed):
    """The share of ``positions`` where the player's move keeps the game-theoretic value, with
    its Wilson interval, and how many positions."""
    states, seats, boards = positions
    engine = Engine("connectx", num_envs=len(states), seed=0, autoreset="disabled")
    mcts = search.MCTS(
        engine, simulations, selection="gumbel", gumbel_scale=0.0, evaluator=player.evaluator
    )
    moves = mcts.search(states, seed=seed, seats=seats).action
    share, kept = solver.moves_keep_value(boards, moves, marks=seats + 1)
    return share, wilson(int(kept.sum()), len(kept)), len(kept)


def training_curve(run_dir, info):
    """The run's evaluations during training: (minutes, opponent, win rate, low, high) each,
    the minutes those of the iteration evaluated (``curve.csv``)."""
    with open(os.path.join(run_dir, "curve.csv"), newline="") as f:
        seconds = {int(row["iteration"]): float(row["seconds"]) for row in csv.DictReader(f)}
    return [
        {
            "iteration": e["iteration"],
            "minutes": seconds[e["iteration"]] / 60,
            "opponent": e["opponent"],
            "win_rate": e["win_rate"],
            "matches": e["matches"],
        }
        for e in info["evaluations"]
        if e["iteration"] in seconds
    ]


def kaggle_replay(player, simulations, opponent):
    """One match of the player (as its Kaggle submission plays it: the network in numpy,
    searching ``simulations`` a move) against ``opponent`` in vecenv's Kaggle face: the agents
    and the episode's steps, which ``vecenv.kaggle.make(game, steps=...)`` renders again."""
    from vecenv import kaggle

    namespace = {}
    exec(player.kaggle_submission(simulations), namespace)  # the file Kaggle would run
    env = kaggle.make(player.game, configuration=dict(player.configuration))
    env.run([namespace["agent"], opponent])
    return {"agents": [f"alphazero:{simulations}", opponent], "steps": env.toJSON()["steps"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories of vecenv train alphazero")
    parser.add_argument("--file", default="best.pt", help="the checkpoint of each run (best.pt)")
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--opponents", default="negamax,mcts:1000")
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write the figures and the runs' curves to this file")
    parser.add_argument(
        "--replay", default="negamax", help="the opponent of the first run's recorded match"
    )
    parser.add_argument("--name", default="", help="the run's name, as the documentation cites it")
    args = parser.parse_args()
    opponents = [o for o in args.opponents.split(",") if o]
    positions = None
    rows = []
    print(f"load average before: {load_average()}")
    for run_dir in args.runs:
        path = os.path.join(run_dir, args.file)
        player = alphazero.load(path)
        with open(os.path.join(run_dir, "run.json")) as f:
            info = json.load(f)
        row = {"run": run_dir, "file": args.file, "seed": info["config"]["seed"]}
        row["minutes"] = info["seconds"] / 60
        row["iterations"] = info["iterations"]
        row["games"] = info["games"]
        row["best"] = info["best"]
        row["curve"] = training_curve(run_dir, info)
        agent = player.agent(args.simulations)
        for opponent in opponents:
            start = time.perf_counter()
            result = selfplay.play(
                player.game,
                (agent, opponent),
                args.matches,
                seed=args.seed,
                **player.configuration,
            )
            s = result.summary
            row[opponent] = {
                "wins": s.wins,
                "draws": s.draws,
                "losses": s.losses,
                "matches": s.matches,
                "win_rate": list(s.win_rate),
                "seconds": time.perf_counter() - start,
            }
        standard = player.game == "connectx" and not player.configuration
        if standard and args.positions:
            positions = positions or random_positions(args.positions, args.seed + 1)
            share, (low, high), count = keeps_value(player, args.simulations, positions, args.seed)
            row["keeps_value"] = {"share": share, "interval": [low, high], "positions": count}
        rows.append(row)
    head = "| run | seed | minutes | " + " | ".join(f"vs `{o}`" for o in opponents)
    head += " | keeps the value |"
    print(head)
    print("|" + "---|" * (4 + len(opponents)))
    for row in rows:
        cells = [row["run"], str(row["seed"]), f"{row['minutes']:.1f}"]
        for opponent in opponents:
            r = row[opponent]
            rate, low, high = r["win_rate"]
            cells.append(f"{rate:.1%} [{low:.1%}, {high:.1%}], {r['draws']} draws")
        kv = row.get("keeps_value")
        if kv:
            low, high = kv["interval"]
            cells.append(f"{kv['share']:.1%} [{low:.1%}, {high:.1%}] of {kv['positions']}")
        else:
            cells.append("")
        print("| " + " | ".join(cells) + " |")
    after = load_average()
    print(f"load average after: {after}")
    if args.json:
        machine = {
            "date": datetime.date.today().isoformat(),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "load_average_after": after,
        }
        settings = {k: getattr(args, k) for k in ("file", "simulations", "matches", "seed")}
        first = alphazero.load(os.path.join(args.runs[0], args.file))
        replay = kaggle_replay(first, args.simulations, args.replay)
        replay["run"] = args.runs[0]
        results = {"name": args.name, "machine": machine, "settings": settings, "runs": rows}
        with open(args.json, "w") as f:
            json.dump(
                {**results, "replay": replay},
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
