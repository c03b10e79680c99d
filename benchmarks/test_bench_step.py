"""CartPole batch step: the engine against the hand-written numba loop and gymnasium's numpy vector
env, at the same N (and thread count), random actions made before timing.

Keys: ("cartpole", N, T, impl) with impl "vecenv", "vecenv-float32" (``precision="float32"``),
"handwritten" (serial below N = 1024 and for one thread, prange above), "handwritten-prange"
(prange at small N, to show what the serial rule saves) and "gymnasium" (T = None: numpy, one
thread). With T = 2 the engine chooses its loop by timing both (``vecenv.threads``): the threads
comparisons say whether two threads ever made a batch slower than one.
"""

import pytest
import report
from handwritten_cartpole import HandwrittenCartPole
from harness import (
    action_rows,
    calls_per_round,
    cartpole_step,
    run_steps,
    set_threads,
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
            report.label(("cartpole", n, t, "vecenv-float32"), f"vecenv float32 T={t}")
            report.label(("cartpole", n, t, "handwritten"), f"hand-written T={t}")
            report.label(("cartpole", n, t, "handwritten-prange"), "hand-written prange T=2")
    for n in NS:
        for t in THREADS:
            title = f"CartPole N={n} T={t}"
            target, text = (2.0, "target >= 2x") if n == 4096 else (None, "")
            report.compare(
                SECTION,
                title,
                ("cartpole", n, t, "vecenv"),
                ("cartpole", n, None, "gymnasium"),
                target=target,
                target_text=text,
            )
            budget, text = (0.20, "budget <= 20%") if n in (1, 4096) else (None, "")
            report.compare(
                SECTION,
                title,
                ("cartpole", n, t, "vecenv"),
                ("cartpole", n, t, "handwritten"),
                kind="overhead",
                target=budget,
                target_text=text,
            )
    precision = "CartPole float32 (precision='float32' vs the float64 rules)"
    for n in NS:
        for t in THREADS:
            target, text = (1.6, "target >= 1.6x") if (n, t) == (4096, 1) else (None, "")
            report.compare(
                precision,
                f"CartPole N={n} T={t}",
                ("cartpole", n, t, "vecenv-float32"),
                ("cartpole", n, t, "vecenv"),
                target=target,
                target_text=text,
            )
    threads = "CartPole threads (2 vs 1)"
    for n in NS:
        if n == 65536:
            target, text = 1.7, "target >= 1.7x"
        else:
            target, text = 0.9, "never slower than serial (noise allowance 10%)"
        for impl in ("vecenv", "vecenv-float32"):
            report.compare(
                threads,
                f"CartPole N={n}" + (" float32" if impl == "vecenv-float32" else ""),
                ("cartpole", n, 2, impl),
                ("cartpole", n, 1, impl),
                target=target,
                target_text=text,
            )
        report.compare(
            threads,
            f"CartPole N={n}",
            ("cartpole", n, 2, "handwritten"),
            ("cartpole", n, 1, "handwritten"),
        )
    for n in SMALL_NS:
        report.compare(
            threads,
            f"CartPole N={n} prange cost",
            ("cartpole", n, 2, "handwritten-prange"),
            ("cartpole", n, 1, "handwritten"),
        )


_declare()


def _cases():
    """Every (N, T, impl), grouped by N: the two sides of a comparison are timed close together."""
    cases = []
    for n in NS:
        cases.append((n, None, "gymnasium"))
        for t in THREADS:
            cases += [(n, t, "vecenv"), (n, t, "vecenv-float32"), (n, t, "handwritten")]
        if n in SMALL_NS:
            cases.append((n, 2, "handwritten-prange"))
    return [pytest.param(*c, id=f"N{c[0]}-{c[2]}" + (f"-T{c[1]}" if c[1] else "")) for c in cases]


def _make(n, threads, impl):
    if impl in ("vecenv", "vecenv-float32", "gymnasium"):
        return cartpole_step(impl, n, threads)
    parallel = impl == "handwritten-prange" or (threads > 1 and n >= PARALLEL_MIN_ENVS)
    set_threads(threads)
    return HandwrittenCartPole(n, parallel=parallel).step


@pytest.mark.parametrize(("n", "threads", "impl"), _cases())
def test_cartpole_step(benchmark, n, threads, impl):
    benchmark.group = f"cartpole-step N={n}"
    step = _make(n, threads, impl)
    rows = action_rows(calls_per_round(n, cost=8 if impl == "gymnasium" else 1), n)
    calls = run_steps(benchmark, step, rows)
    engine = getattr(step, "__self__", None)
    info = {"threads_used": engine.threads.chosen} if hasattr(engine, "threads") else {}
    report.record(
        benchmark, ("cartpole", n, threads, impl), calls, n, threads=threads or 1, impl=impl, **info
    )
