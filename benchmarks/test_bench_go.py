"""Go random self-play at N = 4096, against Pgx's ``go_9x9``.

vecenv (``vecenv-stream-T*``): ``vecenv.make("go", num_envs=4096, autoreset="same_step")`` (9x9,
komi 7.5), both seats played by the built-in random agent (a uniform legal action, the pass among
them) through ``vecenv.selfplay.Seats.step(32)``: one call a round, in which each game plays 32
plies in a row (the moves chosen and played in one compiled loop), a finished game replaced in
the same step, as Pgx's ``auto_reset`` does; N x 32 plies a round.

Pgx (``pgx-scan*``): ``pgx.make("go_9x9")`` under ``jax.jit`` on CPU: ``jax.vmap`` of
``pgx.experimental.auto_reset(env.step, env.init)`` over N = 4096 games, the moves drawn uniformly
among the legal ones (``pgx.experimental.act_randomly``), in a ``jax.lax.scan`` of 32 steps per
call (``harness.pgx_round``); N x 32 steps a call. Compile time is excluded (the first call
compiles, before timing; ``test_bench_startup.py`` times vecenv's).

Same thread count on both sides: ``vecenv-stream-T1`` against ``pgx-scan-1cpu`` (every thread of
the process held to one CPU while it plays, vecenv's rounds held to that CPU too), and
``vecenv-stream-T2`` against ``pgx-scan`` (jax's default threads: every CPU). Target: each vecenv
stream at least 5x its Pgx. Pgx is an optional peer (``pip install pgx``, with jax); where it does
not install or import, its benchmarks skip with the reason. In smoke mode N = 64 and the scan is
2 steps long.

Keys: ("selfplay", "go_9x9", 4096, impl); the table prints every rate as "plies".
"""

import contextlib

import numpy as np
import pytest
import report
from harness import cpu_threads, declare_pgx, one_cpu, pgx_round, timed_for

import vecenv
from vecenv import selfplay

N = 4096
T = 32  # plies (Pgx: steps) in one call
SMOKE_N = 64
SMOKE_T = 2
TARGET = 5.0
IMPLS = ("vecenv-stream-T1", "vecenv-stream-T2", "pgx-scan-1cpu", "pgx-scan")
KEY = ("selfplay", "go_9x9", N)
SECTION = (
    f"Go 9x9 random self-play, N={N}: vecenv (Seats.step, plies/s) vs Pgx go_9x9 (jax CPU, steps/s)"
)

declare_pgx(SECTION, f"random vs random N={N}", KEY, IMPLS[:2], T, TARGET)


def stream_round(n, steps, threads):
    """``n`` games of Go, every game moving every ply, the random agents choosing inside the
    engine, a finished game replaced in the same step. Returns (round, games finished per round)."""
    engine = vecenv.make(
        "go", num_envs=n, seed=0, autoreset="same_step", num_threads=threads, parallel=threads > 1
    )
    seats = selfplay.Seats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))
    finished = []

    def round_fn():
        before = int(seats.ends.sum())
        seats.step(steps)
        finished.append(int(seats.ends.sum()) - before)

    round_fn()  # compiles (or loads) the kernels
    return round_fn, finished


@pytest.mark.parametrize("impl", IMPLS)
def test_go_random_selfplay(benchmark, impl):
    benchmark.group = f"Go 9x9 random self-play N={N}"
    smoke = benchmark.disabled
    n, steps = (SMOKE_N, SMOKE_T) if smoke else (N, T)
    held = impl in ("vecenv-stream-T1", "pgx-scan-1cpu")
    if impl.startswith("pgx"):
        round_fn, finished = pgx_round(n, steps, "go_9x9")
    else:
        round_fn, finished = stream_round(n, steps, int(impl[-1]))
    with one_cpu() if held else contextlib.nullcontext():
        timed_for(benchmark, round_fn)
    info = {
        "games_finished_per_call": finished[-1],
        "steps_per_call": steps,
        "threads": 1 if held else cpu_threads(impl),
    }
    report.record(benchmark, KEY + (impl,), n * steps, 1, unit="plies", impl=impl, **info)
