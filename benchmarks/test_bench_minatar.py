"""MinAtar Breakout at N = 4096 against gymnax's ``Breakout-MinAtar``.

Env-steps per second of the engine (``vecenv.make("minatar_breakout", num_envs=N)``, one thread,
random actions of the minimal set drawn before timing, MinAtar's sticky actions and same-step...
next-step autoreset as the engine does by default) against gymnax's ``step`` under
``jax.jit(jax.vmap(...))`` on CPU over random actions of the same set: a ``jax.lax.scan`` of
T = 32 steps in one call returning every step's observation (10x10x4), reward and termination
(``gymnax scan``, the figure the target is for), the same without observations (``gymnax scan,
obs dropped``: an upper bound on gymnax), and one jitted step a call (``gymnax per call``).
Compile time is excluded. Both sides run the same rules (gymnax ports MinAtar's Breakout; its
episodes are truncated at 1000 steps, as ours by default) with their own random streams.
Target: the engine at least 10x the gymnax scan. gymnax is an optional peer (``pip install
gymnax``, with jax); where it does not install or import, its benchmarks skip with the reason.

Keys: ("Breakout-MinAtar", 4096, impl) with impl "vecenv", "gymnax-scan", "gymnax-scan-noobs",
"gymnax-step".
"""

import numpy as np
import pytest
import report
from harness import (
    GYMNAX_IMPLS,
    calls_per_round,
    declare_gymnax,
    engine_action_rows,
    gymnax_round,
    make_engine,
    run_rounds,
    run_steps,
)

N = 4096
T = 32
TARGET = 10.0
KEY = ("Breakout-MinAtar", N)
SECTION = f"MinAtar Breakout, N={N}: vecenv engine (1 thread) vs gymnax Breakout-MinAtar (jax CPU)"


declare_gymnax(SECTION, f"Breakout N={N}", KEY, "vecenv minatar_breakout", T, TARGET)


@pytest.mark.parametrize("impl", ("vecenv",) + GYMNAX_IMPLS)
def test_breakout_vs_gymnax(benchmark, impl):
    benchmark.group = f"MinAtar Breakout N={N} vs gymnax"
    if impl == "vecenv":
        engine = make_engine("minatar_breakout", N, 1)
        rows = engine_action_rows(engine, calls_per_round(N, cost=4))
        calls = run_steps(benchmark, engine.step, rows)
    else:
        count = 4 if impl == "gymnax-step" else T
        rows = list(np.random.default_rng(0).integers(0, 3, size=(count, N)))
        round_fn, calls = gymnax_round("Breakout-MinAtar", impl, rows, T)
        run_rounds(benchmark, round_fn)
    report.record(benchmark, KEY + (impl,), calls, N, impl=impl)
