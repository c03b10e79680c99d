"""2048 at N = 4096 against Pgx's ``2048``: random legal moves, finished games replaced at once.

vecenv: ``vecenv.make("game_2048", num_envs=N, autoreset="same_step")`` stepped with a random
legal move of every game chosen each step from the engine's ``legal`` mask with numpy (the
legal move of highest priority, from tables of random priorities drawn before timing; the choice
itself is timed, as Pgx's choice is inside its scan), 32 steps a round. Pgx:
``pgx.make("2048")`` under ``jax.jit`` on CPU, ``jax.vmap`` of
``pgx.experimental.auto_reset(env.step, env.init)``, moves drawn by ``act_randomly`` on
``legal_action_mask``, in a 32-step ``jax.lax.scan`` a call; compile time excluded. Same thread
count on both sides: one thread against Pgx with the process held to one CPU, two threads against
jax's default (every CPU). The games differ only where the peers do (Pgx plays on past 2048;
ours, as OpenSpiel's, ends there: few random games get that far). Target: at least 5x. Pgx is an
optional peer (``pip install pgx``); where it does not install or import, its benchmarks skip.

Keys: ("2048", 4096, impl) with impl "vecenv-T1", "vecenv-T2", "pgx-scan-1cpu", "pgx-scan".
"""

import contextlib

import numpy as np
import pytest
import report
from harness import cpu_threads, declare_pgx, one_cpu, pgx_round, timed_for

import vecenv

N = 4096
T = 32
SMOKE_N = 64
SMOKE_T = 2
TARGET = 5.0
PRIORITIES = 61  # tables of move priorities, cycled (a prime: no period shared with rounds)
KEY = ("2048", N)
SECTION = f"2048, N={N}: vecenv engine + numpy legal random moves vs Pgx 2048 (jax CPU)"
IMPLS = ("vecenv-T1", "vecenv-T2", "pgx-scan-1cpu", "pgx-scan")


declare_pgx(SECTION, f"random legal moves N={N}", KEY, ("vecenv-T1", "vecenv-T2"), T, TARGET)


def _vecenv_round(n, steps, threads):
    engine = vecenv.make(
        "game_2048",
        num_envs=n,
        seed=0,
        autoreset="same_step",
        num_threads=threads,
        parallel=threads > 1,
    )
    legal = engine.obs["legal"][:, 0]
    # Random priorities of the four moves, drawn before timing (as the other benchmarks draw
    # their actions): each step plays the legal move of highest priority.
    rng = np.random.default_rng(0)
    priorities = [rng.integers(1, 256, size=legal.shape, dtype=np.uint8) for _ in range(PRIORITIES)]
    ended = []
    calls = [0]

    def round_fn():
        count = 0
        for _ in range(steps):
            priority = priorities[calls[0] % PRIORITIES]
            calls[0] += 1
            _, _, terminated, _ = engine.step((priority * legal).argmax(axis=1))
            count += int(terminated.sum())
        ended.append(count)

    round_fn()  # compiles (or loads) the kernels
    return round_fn, ended


@pytest.mark.parametrize("impl", IMPLS)
def test_2048_random(benchmark, impl):
    benchmark.group = f"2048 random legal moves N={N}"
    n, steps = (SMOKE_N, SMOKE_T) if benchmark.disabled else (N, T)
    held = impl in ("vecenv-T1", "pgx-scan-1cpu")
    if impl.startswith("pgx"):
        round_fn, ended = pgx_round(n, steps, "2048")
    else:
        round_fn, ended = _vecenv_round(n, steps, int(impl[-1]))
    with one_cpu() if held else contextlib.nullcontext():
        timed_for(benchmark, round_fn)
    info = {"games_ended_per_round": ended[-1], "threads": 1 if held else cpu_threads(impl)}
    report.record(benchmark, KEY + (impl,), n * steps, 1, unit="steps", impl=impl, **info)
