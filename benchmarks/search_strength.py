"""The agent ``mcts`` against itself and the games' built-in agents: results with 95% intervals,
the simulations and the time per move.

Not pytest: ``python benchmarks/search_strength.py [--quick] [--out DIR]`` plays the matches of
docs/search.md's strength table with ``vecenv.selfplay.play`` (seats alternating, every match of
a pairing searched at once), prints the table (and writes it with the raw figures,
``strength.md`` and ``strength.json``, to DIR where given). The scaffolded game is the Nim that
``vecenv new NAME --agents 2`` writes, made in a temporary folder. Time per move is the
pairing's wall time (the opponent's moves included; compiles not: 2 matches of the pairing are
played first, their time reported apart) over mcts's moves, counted from the matches' plies;
the matches of a pairing run as one batch, so it is the time a move of one match costs inside
that batch. ``--quick`` plays 4 matches of each pairing with 20 simulations (a
check that the script runs).
"""

import argparse
import datetime
import os
import tempfile
import time
from pathlib import Path

from report import finish_run, load_average

import vecenv
from vecenv import selfplay
from vecenv.cli import main as cli

# (game, A, B, matches, what the issue asks of A)
PAIRINGS = (
    ("tictactoe", "mcts", "mcts", 200, "draws itself"),
    ("connectx", "mcts:200", "random", 400, "wins >= 95%"),
    ("connectx", "mcts", "random", 200, "wins >= 95%"),
    ("connectx", "mcts", "negamax", 100, "beats"),
    ("othello", "mcts:200", "greedy", 100, "beats"),
    ("othello", "mcts", "greedy", 50, "beats"),
    ("pebbles", "mcts:200", "random", 400, "beats (scaffolded Nim)"),
)


def scaffold(folder):
    """Write and register the Nim game ``vecenv new pebbles --agents 2`` makes."""
    if cli(["new", "pebbles", "--agents", "2", "--dir", str(folder)]) != 0:
        raise SystemExit("vecenv new failed")
    vecenv.register(Path(folder) / "pebbles")


def quick(agent):
    """``agent`` with 20 simulations (the smoke test's settings)."""
    return "mcts:20" if agent.startswith("mcts") else agent


def mcts_moves(result):
    """How many moves agent A made: the plies of each match, A moving on even plies where it
    sat first (a pass in othello is a ply of its own, so there it is close, not exact)."""
    first = result.seats == 0
    return int(((result.plies + first) // 2).sum())


def simulations(agent):
    if not agent.startswith("mcts"):
        return None
    return int(agent.split(":")[1]) if ":" in agent else 1000


def measure(pairings, scale, seed=0):
    rows = []
    for game, a, b, matches, goal in pairings:
        if scale:
            a, b, matches = quick(a), quick(b), 4
        start = time.perf_counter()
        selfplay.play(game, (a, b), 2, seed=seed + 1)  # compiles, or loads numba's cache
        first = time.perf_counter() - start
        start = time.perf_counter()
        result = selfplay.play(game, (a, b), matches, seed=seed)
        seconds = time.perf_counter() - start
        s = result.summary
        moves = mcts_moves(result)
        row = {
            "game": game,
            "a": a,
            "b": b,
            "goal": goal,
            "matches": matches,
            "wins": s.wins,
            "draws": s.draws,
            "losses": s.losses,
            "win_rate": list(s.win_rate),
            "draw_rate": list(s.draw_rate),
            "simulations": simulations(a),
            "a_moves": moves,
            "seconds": seconds,
            "first_call_seconds": first,
            "ms_per_move": 1000 * seconds / max(moves, 1),
        }
        rows.append(row)
        print(
            f"{game:9s} {a} vs {b}: {s.wins}/{s.draws}/{s.losses} of {matches}, wins "
            f"{s.win_rate[0]:.1%} [{s.win_rate[1]:.1%}, {s.win_rate[2]:.1%}], draws "
            f"{s.draw_rate[0]:.1%} [{s.draw_rate[1]:.1%}, {s.draw_rate[2]:.1%}]; "
            f"{seconds:.1f} s, {row['ms_per_move']:.2f} ms a move (2 matches first: {first:.1f} s)"
        )
    return rows


def markdown(report):
    lines = [
        f"Measured {report['date']} on {report['machine']['cores']} CPUs, one thread, load "
        f"average {report['load_before']} before and {report['load_after']} after; "
        f"`python benchmarks/search_strength.py{' --quick' if report['quick'] else ''}`.",
        "",
        "| game | A | B | matches | A wins / draws / losses | A's wins (95%) | draws (95%) |"
        " simulations a move | ms a move (batched) | s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def rate(r):
        return f"{r[0]:.1%} [{r[1]:.1%}, {r[2]:.1%}]"

    for r in report["rows"]:
        game = "Nim (`vecenv new --agents 2`)" if r["game"] == "pebbles" else r["game"]
        lines.append(
            f"| {game} | {r['a']} | {r['b']} | {r['matches']} | {r['wins']} / {r['draws']} / "
            f"{r['losses']} | {rate(r['win_rate'])} | {rate(r['draw_rate'])} | "
            f"{r['simulations']} | {r['ms_per_move']:.2f} | {r['seconds']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few matches, 20 simulations")
    parser.add_argument("--out", default=None, help="a folder for strength.json and .md")
    parser.add_argument("--games", default=None, help="comma-separated games (default: all)")
    args = parser.parse_args(argv)
    pairings = PAIRINGS
    if args.games:
        wanted = set(args.games.split(","))
        pairings = tuple(p for p in PAIRINGS if p[0] in wanted)
    report = {
        "date": datetime.date.today().isoformat(),
        "quick": args.quick,
        "machine": {"cores": os.cpu_count()},
        "load_before": load_average(),
    }
    with tempfile.TemporaryDirectory() as folder:
        if any(p[0] == "pebbles" for p in pairings):
            scaffold(folder)
        report["rows"] = measure(pairings, args.quick)
    return finish_run(report, markdown, args.out, "strength")


if __name__ == "__main__":
    main()
