"""How long connect four's perfect solver (``envs/connectx/solver.py``) takes, from the opening on.

Solves positions reached by the move sequences given (columns 0-6, e.g. ``3322``; ``-`` the
empty board) with a fresh ``Solver`` each (a cold table), and prints, per position, the outcome
search's and the exact score's time and nodes. The first line is a warm-up: numba compiles the
solver there or loads it from its cache, so the times below it are warm.

    python benchmarks/connectx_solver.py                  # 12, 10 and 8 plies in: seconds
    python benchmarks/connectx_solver.py 3333 33 -        # deeper: up to minutes
    python benchmarks/connectx_solver.py - --outcome      # the empty board's outcome only

The empty board's value is a first-player win with the last of its 21 checkers (score 1; Allis
1988, Tromp): a long run, named with its time in docs/games/connectx.md.
"""

import argparse
import os
import platform
import time

import numpy as np

from vecenv.envs.connectx import solver

DEFAULT = ("532335133321", "5152124324", "53314123", "4444333")


def board(sequence):
    """The connectx board after the columns of ``sequence`` (``-``: none)."""
    cells = np.zeros(solver.CELLS, dtype=np.int8)
    height = [0] * solver.COLUMNS
    for ply, ch in enumerate(sequence.strip("-")):
        column = int(ch)
        cells[column + solver.COLUMNS * (solver.ROWS - 1 - height[column])] = 1 + ply % 2
        height[column] += 1
    return cells


def timed(call, cells):
    """``int(call(cells)[0])`` and the seconds it took."""
    start = time.perf_counter()
    value = int(call(cells)[0])
    return value, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sequences", nargs="*", default=DEFAULT)
    parser.add_argument("--outcome", action="store_true", help="the outcome search only")
    parser.add_argument("--table", type=int, default=solver.TABLE_SIZE, help="table words")
    args = parser.parse_args(argv)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs", flush=True)
    _, seconds = timed(solver.Solver(1024).score, board("532335133321"))
    print(f"warm-up (compile or load from numba's cache): {seconds:.2f} s", flush=True)
    for sequence in args.sequences:
        cells = board(sequence)
        s = solver.Solver(args.table)
        outcome, seconds = timed(s.outcome, cells)
        line = f"{sequence:>14}: outcome {outcome:+d} in {seconds:.2f} s ({s.nodes:,} nodes)"
        print(line, flush=True)
        if not args.outcome:
            s = solver.Solver(args.table)
            score, seconds = timed(s.score, cells)
            print(f"{'':>14}  score {score:+d} in {seconds:.2f} s ({s.nodes:,} nodes)", flush=True)


if __name__ == "__main__":
    main()
