"""2048 with the search: the share of games that reach the 2048 tile, ``mcts`` against random play.

Not pytest: ``python benchmarks/search_2048.py [--games G] [--simulations S] [--quick] [--out
DIR]`` plays G games of ``game_2048`` (OpenSpiel's rules; a game ends at the 2048 tile, or on a
board without a move) twice from the same seeds: once each move chosen by ``vecenv.search.MCTS``
(PUCT, random playouts to the game's end as leaf values, S simulations a move, every game
searched at once), once by uniformly random legal moves. 2048 is a game of chance: the search
draws each tile from a stream of its own under chance nodes (``vecenv.kernels.search``), never
from the episode's, which decides the tiles the game really gets. It prints (and writes to DIR
where given, ``search_2048.json`` and ``.md``) the share of games reaching 2048 with its 95%
Wilson interval, the mean score and largest tile, the moves and the time per move. ``--quick``:
4 games, 20 simulations, the 64 tile (a check that the script runs).
"""

import argparse
import datetime
import time

import numpy as np
from report import finish_run, load_average

import vecenv
from vecenv.search import MCTS
from vecenv.stats import wilson


def play(games, seed, max_tile, chooser):
    """``games`` games of 2048 from ``seed``, each move from ``chooser(engine, done, move)``;
    returns (largest tile, score, moves) per game."""
    engine = vecenv.make("game_2048", num_envs=games, seed=seed, autoreset="disabled",
                         max_tile=max_tile)  # fmt: skip
    done = np.zeros(games, dtype=bool)
    score = np.zeros(games)
    moves = np.zeros(games, dtype=np.int64)
    move = 0
    while not done.all():
        actions = chooser(engine, done, move)
        engine.step(actions)
        score += np.where(done, 0.0, engine.rewards[:, 0])
        moves += ~done
        done |= engine.terminated | engine.truncated
        move += 1
    return engine.obs["board"].reshape(games, -1).max(axis=1), score, moves


def mcts_chooser(simulations, seed, threads):
    search = MCTS("game_2048", simulations, selection="puct", num_threads=threads)
    words = np.zeros(0, dtype=np.uint64)

    def choose(engine, done, move):
        nonlocal words
        if words.size == 0:
            words = np.arange(1, engine.num_envs + 1, dtype=np.uint64) * np.uint64(seed + 7919)
        result = search.search(engine.get_state(), seed=words, mask=~done)
        return np.where(result.searched, result.action, 0)

    return choose


def random_chooser(seed):
    rng = np.random.default_rng(seed)

    def choose(engine, done, move):
        legal = engine.obs["legal"].reshape(engine.num_envs, -1)
        keys = rng.random(legal.shape) * legal
        return np.argmax(keys, axis=1)

    return choose


def summary(name, tiles, score, moves, seconds, target):
    reached = int((tiles >= target).sum())
    low, high = wilson(reached, len(tiles))
    return {
        "player": name,
        "games": len(tiles),
        "reached": reached,
        "share": reached / len(tiles),
        "interval": [low, high],
        "mean_score": float(score.mean()),
        "largest_tiles": sorted(int(t) for t in tiles),
        "mean_moves": float(moves.mean()),
        "seconds": seconds,
        "ms_per_move": 1000.0 * seconds / max(int(moves.sum()), 1),
    }


def markdown(report):
    lines = [
        f"2048: games reaching the {report['target']} tile, {report['games']} games, seed "
        f"{report['seed']} ({report['date']}; load average {report['load_before']} before, "
        f"{report['load_after']} after)",
        "",
        "| player | reached | share [95%] | mean score | mean moves | ms a move (batch) |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["players"]:
        low, high = row["interval"]
        lines.append(
            f"| {row['player']} | {row['reached']}/{row['games']} | {row['share']:.0%} "
            f"[{low:.0%}, {high:.0%}] | {row['mean_score']:.0f} | {row['mean_moves']:.0f} | "
            f"{row['ms_per_move']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    games, simulations, target = args.games, args.simulations, 2048
    if args.quick:
        games, simulations, target = 4, 20, 64
    report = {
        "date": datetime.date.today().isoformat(),
        "games": games,
        "simulations": simulations,
        "seed": args.seed,
        "target": target,
        "load_before": load_average(),
        "players": [],
    }
    searcher = mcts_chooser(simulations, args.seed, args.threads)
    choosers = (
        (f"mcts:{simulations} (PUCT, random playouts)", searcher),
        ("random legal moves", random_chooser(args.seed)),
    )
    for name, chooser in choosers:
        start = time.perf_counter()
        tiles, score, moves = play(games, args.seed, target, chooser)
        seconds = time.perf_counter() - start
        report["players"].append(summary(name, tiles, score, moves, seconds, target))
    return finish_run(report, markdown, args.out, "search_2048")


if __name__ == "__main__":
    main()
