"""The Gymnasium face against the engine under it, and against gymnasium's own CartPole.

- VectorEnv: ``gymnasium.make_vec("vecenv/CartPole-v1", num_envs=N, num_threads=T)`` (fresh
  arrays per call, gymnasium's default; also ``copy=False`` at N = 4096) against ``vecenv.make`` at
  the same N and T, and against gymnasium's numpy CartPoleVectorEnv.
- Env: ``gymnasium.make("vecenv/CartPole-v1")`` against ``gymnasium.make("CartPole-v1")``, one
  ``step`` per call and a ``reset`` whenever an episode ends, both with gymnasium's wrappers.

Keys: ("face", N, T, impl) and ("single", impl).
"""

import gymnasium
import numpy as np
import pytest
import report
from harness import (
    action_rows,
    calls_per_round,
    cartpole_step,
    run_rounds,
    run_steps,
)

import vecenv  # noqa: F401  (registers the vecenv/ ids)

CASES = ((64, 1), (4096, 1), (4096, 2))
SECTION = "Gymnasium faces"
SINGLE_CALLS = 1000


def _declare():
    for n, t in CASES:
        report.label(("face", n, t, "vecenv"), f"engine T={t}")
        report.label(("face", n, t, "face"), f"VectorEnv face T={t}")
        report.label(("face", n, t, "face-nocopy"), f"VectorEnv face copy=False T={t}")
        report.label(("face", n, None, "gymnasium"), "gymnasium numpy vector")
    for n, t in CASES:
        title = f"CartPole N={n} T={t}"
        budget, text = (0.10, "budget <= 10%") if n == 4096 else (None, "")
        report.compare(
            SECTION,
            title,
            ("face", n, t, "face"),
            ("face", n, t, "vecenv"),
            kind="overhead",
            target=budget,
            target_text=text,
        )
        if n == 4096:
            report.compare(
                SECTION,
                title,
                ("face", n, t, "face-nocopy"),
                ("face", n, t, "vecenv"),
                kind="overhead",
            )
        target = {64: (15.0, "target >= 15x"), 4096: (2.0, "target >= 2x")}[n]
        report.compare(
            SECTION,
            title,
            ("face", n, t, "face"),
            ("face", n, None, "gymnasium"),
            target=target[0],
            target_text=target[1],
        )
    report.label(("single", "face"), 'gymnasium.make("vecenv/CartPole-v1")')
    report.label(("single", "gymnasium"), 'gymnasium.make("CartPole-v1")')
    report.compare(
        SECTION,
        "CartPole single Env",
        ("single", "face"),
        ("single", "gymnasium"),
        target=1.5,
        target_text="target >= 1.5x",
    )


_declare()


def _vector_cases():
    """(N, T, impl) grouped by (N, T) so each comparison's figures are taken close in time."""
    cases = []
    for n, t in CASES:
        if (n, None, "gymnasium") not in cases:
            cases.append((n, None, "gymnasium"))
        cases += [(n, t, "vecenv"), (n, t, "face")]
        if n == 4096:
            cases.append((n, t, "face-nocopy"))
    return [pytest.param(*c, id=f"N{c[0]}-{c[2]}" + (f"-T{c[1]}" if c[1] else "")) for c in cases]


def _make(n, threads, impl):
    if impl in ("vecenv", "gymnasium"):
        return cartpole_step(impl, n, threads)
    kwargs = {"copy": False} if impl == "face-nocopy" else {}
    env = gymnasium.make_vec(
        "vecenv/CartPole-v1",
        num_envs=n,
        num_threads=threads,
        vectorization_mode="vector_entry_point",
        **kwargs,
    )
    env.reset(seed=0)
    env.step(np.zeros(n, dtype=np.int64))  # compile or load the kernels
    return env.step


@pytest.mark.parametrize(("n", "threads", "impl"), _vector_cases())
def test_vector_step(benchmark, n, threads, impl):
    benchmark.group = f"face N={n}"
    step = _make(n, threads, impl)
    rows = action_rows(calls_per_round(n, cost=8 if impl == "gymnasium" else 1), n)
    calls = run_steps(benchmark, step, rows)
    report.record(benchmark, ("face", n, threads, impl), calls, n, threads=threads or 1, impl=impl)


def _single_round(env, actions):
    def round_fn():
        step, reset = env.step, env.reset
        for a in actions:
            _, _, terminated, truncated, _ = step(a)
            if terminated or truncated:
                reset()

    return round_fn


@pytest.mark.parametrize("impl", ["face", "gymnasium"])
def test_single_env(benchmark, impl):
    benchmark.group = "single env"
    env = gymnasium.make("vecenv/CartPole-v1" if impl == "face" else "CartPole-v1")
    env.reset(seed=0)
    actions = [int(a) for a in np.random.default_rng(0).integers(0, 2, SINGLE_CALLS)]
    env.step(0)
    env.reset(seed=0)
    run_rounds(benchmark, _single_round(env, actions))
    report.record(benchmark, ("single", impl), SINGLE_CALLS, 1, impl=impl)
