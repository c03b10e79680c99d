"""CartPole through PufferLib's vector API: vecenv's native PufferEnv against PufferLib's own C
environment (Ocean's ``cartpole`` binding), one process, one thread, N = 64 and 4096; vecenv with
its float64 rules (exact to gymnasium's) and with ``precision="float32"`` (Ocean computes in
float32).

Both are made by ``pufferlib.vector.make(..., backend=pufferlib.PufferEnv)`` and stepped with
``env.step(actions)`` on int32 actions (PufferLib's buffer dtype), each reporting its episode
statistics every 128 steps (Ocean's ``report_interval``). Rounds alternate, on one CPU: each
timed vecenv round follows an Ocean round timed alike, so both sides see the same spells of a
shared machine; the figures are the best round of each.

Keys: ("pufferlib", N, "vecenv" | "vecenv-float32" | "ocean"); the Ocean key of the float32
case is ("pufferlib", N, "ocean-2"), Ocean's rounds interleaved with that case's own.
"""

import time
import warnings

import numpy as np
import pytest
import report
from harness import BUDGET_S, MAX_ROUNDS, MIN_ROUNDS, calls_per_round, one_cpu

from tests.envs.reference import need

SIZES = (64, 4096)
PRECISIONS = ("float64", "float32")
# (N, precision): vecenv's steps/s over Ocean's, at least. Ocean computes in float32, so float32
# is the like-for-like comparison; the float64 rules (bit-exact with gymnasium) spend about 11 ns
# an episode more in libm's double sin and cos, a third of a small batch's step.
TARGETS = {
    (64, "float64"): 1.5,
    (64, "float32"): 1.5,
    (4096, "float64"): 1.2,
    (4096, "float32"): 1.5,
}
REPORT_INTERVAL = 128
SECTION = "PufferLib: CartPole through its vector API (vecenv vs Ocean's C binding, 1 thread)"


def _keys(n, precision):
    if precision == "float64":
        return ("pufferlib", n, "vecenv"), ("pufferlib", n, "ocean")
    return ("pufferlib", n, "vecenv-float32"), ("pufferlib", n, "ocean-2")


def _declare():
    for n in SIZES:
        for precision in PRECISIONS:
            ours, theirs = _keys(n, precision)
            report.label(ours, f"vecenv.pufferlib {precision}")
            report.label(theirs, "Ocean cartpole")
            target = TARGETS.get((n, precision))
            report.compare(
                SECTION,
                f"N={n} {precision}",
                ours,
                theirs,
                target=target,
                target_text=f"target >= {target:g}x" if target else "",
            )


_declare()


def _envs(n, precision="float64"):
    with warnings.catch_warnings():  # PufferLib imports the unmaintained gym package
        warnings.simplefilter("ignore")
        need("pufferlib.vector", "pufferlib 3.0 (see docs/faces/pufferlib.md)")
        import pufferlib
        import pufferlib.vector

        ocean = need("pufferlib.ocean.cartpole.cartpole", "PufferLib's Ocean cartpole binding")
    from vecenv.pufferlib import env_creator

    make = pufferlib.vector.make
    ours = make(
        env_creator("cartpole", num_envs=n, report_interval=REPORT_INTERVAL, precision=precision),
        backend=pufferlib.PufferEnv,
    )
    theirs = make(
        ocean.Cartpole,
        env_kwargs=dict(num_envs=n, report_interval=REPORT_INTERVAL),
        backend=pufferlib.PufferEnv,
    )
    return ours, theirs


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("n", SIZES)
def test_pufferlib_cartpole(benchmark, n, precision):
    benchmark.group = f"PufferLib CartPole N={n}"
    ours, theirs = _envs(n, precision)
    ours_key, theirs_key = _keys(n, precision)
    ours.reset(0)
    theirs.reset(0)
    # Short rounds (about a millisecond): on a busy machine a round longer than the scheduler's
    # time slice is almost never undisturbed, and the best round would say so.
    calls = calls_per_round(n, cost=8)
    rng = np.random.default_rng(0)
    rows = list(rng.integers(0, 2, size=(calls, n), dtype=np.int32))

    def round_of(env):
        step = env.step

        def round_fn():
            for a in rows:
                step(a)

        return round_fn

    ours_round, theirs_round = round_of(ours), round_of(theirs)
    theirs_times = []

    def theirs_timed():  # untimed by pytest-benchmark: the Ocean round before each of ours
        start = time.perf_counter()
        theirs_round()
        theirs_times.append(time.perf_counter() - start)

    if benchmark.disabled:
        theirs_timed()
        benchmark(ours_round)
    else:
        start = time.perf_counter()
        ours_round()
        theirs_round()
        elapsed = max(time.perf_counter() - start, 1e-6)
        rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, 2 * BUDGET_S / elapsed)))
        with one_cpu():  # both on the same CPU, never migrating between rounds
            benchmark.pedantic(ours_round, setup=theirs_timed, rounds=rounds, iterations=1)
        benchmark.extra_info["ocean"] = report.record_rounds(theirs_key, theirs_times, calls, n)
    report.record(benchmark, ours_key, calls, n, threads=1, impl="vecenv", precision=precision)
    if not benchmark.disabled:
        ratio = benchmark.extra_info.get(f"ratio_vs_pufferlib/{n}/{theirs_key[-1]}")
        benchmark.extra_info["ratio_vs_ocean"] = ratio
        print(f"\nPufferLib CartPole N={n} {precision}: vecenv/Ocean {ratio:.2f}x")
    assert ours.observations.shape == (n, 4) and np.isfinite(ours.observations).all()
    ours.close()
    theirs.close()
