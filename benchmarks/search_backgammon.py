"""Backgammon with the search: ``mcts`` against random play, its win rate with a Wilson interval.

Not pytest: ``python benchmarks/search_backgammon.py [--games G] [--simulations S] [--threads T]
[--quick] [--out DIR]`` plays G games of ``backgammon`` (Pgx's rules) through
``vecenv.selfplay.play``: the built-in ``mcts`` agent (UCT, random playouts to the game's end, S
simulations a move) against ``random`` (a uniformly chosen legal action), the seats alternating
from game to game, every game played at once. Backgammon is a game of chance: the search rolls
the dice of each record it steps from a stream of its own, each move that passed the turn leading
to a chance node over the rolls it drew (``vecenv.kernels.search``), never reading the episode's
dice. It prints (and writes to DIR where given, ``search_backgammon.json`` and ``.md``) the search's
wins, draws (games stopped by ``episodeSteps``: none by default) and losses with 95% Wilson
intervals, its mean points a game (1, 2 for a gammon, 3 for a backgammon) with a 95% interval,
the share of its wins that were gammons or backgammons, and the time. ``--quick``: 4 games, 10
simulations (a check that the script runs).
"""

import argparse
import datetime
import time

import numpy as np
from report import finish_run, load_average

from vecenv import selfplay


def markdown(report):
    row = report["result"]
    lines = [
        f"Backgammon: mcts:{report['simulations']} (UCT, random playouts) against random legal "
        f"moves, {report['games']} games, seats alternating, seed {report['seed']} "
        f"({report['date']}; {report['threads']} thread(s); load average "
        f"{report['load_before']} before, {report['load_after']} after; {report['seconds']:.0f} s)",
        "",
        "| wins [95%] | draws | losses | mean points a game [95%] | gammons or backgammons among "
        "wins |",
        "|---|---|---|---|---|",
        f"| {row['wins']}/{report['games']} = {row['win_rate']:.1%} [{row['win_low']:.1%}, "
        f"{row['win_high']:.1%}] | {row['draws']} | {row['losses']} | "
        f"{row['mean_points']:+.2f} [{row['points_low']:+.2f}, {row['points_high']:+.2f}] | "
        f"{row['big_wins']}/{row['wins']} |",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    games, simulations = (4, 10) if args.quick else (args.games, args.simulations)
    report = {
        "date": datetime.date.today().isoformat(),
        "games": games,
        "simulations": simulations,
        "seed": args.seed,
        "threads": args.threads,
        "load_before": load_average(),
    }
    start = time.perf_counter()
    result = selfplay.play(
        "backgammon",
        (f"mcts:{simulations}", "random"),
        games,
        seed=args.seed,
        num_threads=args.threads,
    )
    report["seconds"] = time.perf_counter() - start
    summary = result.summary
    points = np.asarray(result.rewards)[:, 0]  # the search's final reward in each game
    mean, low, high = (float(x) for x in summary.mean_reward)
    report["result"] = {
        "wins": summary.wins,
        "draws": summary.draws,
        "losses": summary.losses,
        "win_rate": summary.win_rate[0],
        "win_low": summary.win_rate[1],
        "win_high": summary.win_rate[2],
        "mean_points": mean,
        "points_low": low,
        "points_high": high,
        "big_wins": int((points >= 2).sum()),
    }
    return finish_run(report, markdown, args.out, "search_backgammon")


if __name__ == "__main__":
    main()
