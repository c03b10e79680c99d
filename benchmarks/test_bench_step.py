"""CartPole batch step: the engine against the hand-written numba loop and gymnasium's numpy vector
env, at the same N (and thread count), random actions made before timing.

Keys: ("cartpole", N, T, impl) with impl "vecenv", "handwritten" (serial below N = 1024 and for one
thread, prange above, the engine's own rule), "handwritten-prange" (prange at small N, to show what
the serial rule saves) and "gymnasium" (T = None: numpy, one thread).
"""

import gymnasium
import pytest
import report
from handwritten_cartpole import HandwrittenCartPole
from harness import (
    action_rows,
    calls_per_round,
    make_engine,
    run_rounds,
    set_threads,
    step_round,
)

from vecenv.engine import PARALLEL_MIN_ENVS

NS = (1, 64, 256, 4096, 65536)
THREADS = (1, 2)
SMALL_NS = tuple(n for n in NS if n < PARALLEL_MIN_ENVS)
SECTION = "CartPole step (engine array API)"
GYM = "gymnasium numpy vector"


def _declare():
    for n in NS:
        report.label(("cartpole", n, None, "gymnasium"), GYM)
        for t in THREADS:
            report.label(("cartpole", n, t, "vecenv"), f"vecenv T={t}")
            report.label(("cartpole", n, t, "handwritten"), f"hand-written T={t}")
            report.label(("cartpole", n, t, "handwritten-prange"), "hand-written prange T=2")
    for n in NS:
        for t in THREADS:
            title = f"CartPole N={n} T={t}"
            target, text = (2.0, "target >= 2x") if n == 4096 else (None, "")
            report.compare(SECTION, title, ("cartpole", n, t, "vecenv"),
                           ("cartpole", n, None, "gymnasium"), target=target, target_text=text)
            budget, text = (0.20, "budget <= 20%") if n == 4096 else (None, "")
            report.compare(SECTION, title, ("cartpole", n, t, "vecenv"),
                           ("cartpole", n, t, "handwritten"), kind="overhead", target=budget,
                           target_text=text)
    threads = "CartPole threads (2 vs 1)"
    for n in NS:
        if n in SMALL_NS:
            target, text = 0.9, "never slower than serial (noise allowance 10%)"
        elif n == 65536:
            target, text = 1.7, "target >= 1.7x"
        else:
            target, text = None, ""
        report.compare(threads, f"CartPole N={n}", ("cartpole", n, 2, "vecenv"),
                       ("cartpole", n, 1, "vecenv"), target=target, target_text=text)
        report.compare(threads, f"CartPole N={n}", ("cartpole", n, 2, "handwritten"),
                       ("cartpole", n, 1, "handwritten"))
    for n in SMALL_NS:
        report.compare(threads, f"CartPole N={n} prange cost", ("cartpole", n, 2,
                       "handwritten-prange"), ("cartpole", n, 1, "handwritten"))


_declare()


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("threads", THREADS)
def test_engine_step(benchmark, n, threads):
    benchmark.group = f"cartpole-step N={n}"
    engine = make_engine("cartpole", n, threads)
    calls = calls_per_round(n)
    rows = action_rows(calls, n)
    run_rounds(benchmark, step_round(engine.step, rows))
    report.record(benchmark, ("cartpole", n, threads, "vecenv"), calls, n, threads=threads,
                  impl="vecenv")


@pytest.mark.parametrize("n", NS)
@pytest.mark.parametrize("threads", THREADS)
def test_handwritten_step(benchmark, n, threads):
    benchmark.group = f"cartpole-step N={n}"
    parallel = threads > 1 and n >= PARALLEL_MIN_ENVS
    set_threads(threads)
    env = HandwrittenCartPole(n, parallel=parallel)
    calls = calls_per_round(n)
    rows = action_rows(calls, n)
    run_rounds(benchmark, step_round(env.step, rows))
    report.record(benchmark, ("cartpole", n, threads, "handwritten"), calls, n, threads=threads,
                  impl="handwritten-prange" if parallel else "handwritten-serial")


@pytest.mark.parametrize("n", SMALL_NS)
def test_handwritten_prange_small(benchmark, n):
    benchmark.group = f"cartpole-step N={n}"
    set_threads(2)
    env = HandwrittenCartPole(n, parallel=True)
    calls = calls_per_round(n)
    rows = action_rows(calls, n)
    run_rounds(benchmark, step_round(env.step, rows))
    report.record(benchmark, ("cartpole", n, 2, "handwritten-prange"), calls, n, threads=2,
                  impl="handwritten-prange")


@pytest.mark.parametrize("n", NS)
def test_gymnasium_vector_step(benchmark, n):
    benchmark.group = f"cartpole-step N={n}"
    env = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    calls = calls_per_round(n)
    rows = action_rows(calls, n)
    run_rounds(benchmark, step_round(env.step, rows))
    env.close()
    report.record(benchmark, ("cartpole", n, None, "gymnasium"), calls, n, threads=1,
                  impl="gymnasium CartPoleVectorEnv")
