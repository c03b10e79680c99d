"""The csuite games: Catch against gymnax, and each game against a plain-Python version of its rules

**Catch at N = 4096 against gymnax's bsuite Catch** (``gymnax.make("Catch-bsuite")``):
``vecenv.make("catch", num_envs=4096)`` stepped on one thread over random actions made before
timing, against gymnax's ``step`` under ``jax.jit(jax.vmap(...))`` on CPU, also over random actions
made before timing, in three forms:

- ``gymnax scan``: ``jax.lax.scan`` over T = 32 steps in one jitted call, returning every step's
  observation, reward and termination (the engine writes its observation every step too);
- ``gymnax scan, obs dropped``: the same, returning rewards and terminations only: XLA then leaves
  the observation out of the computation, so this is an upper bound on gymnax's speed, not the
  same work;
- ``gymnax per call``: one jitted vmapped step per Python call, observation and reward brought to
  numpy, as a numpy training loop would consume them.

Each step splits one PRNG key per environment, which gymnax's ``step`` needs. Compile time is
excluded (the first call compiles, before timing). jax runs with its default threading: a thread
per CPU the process may use (on a loaded 2-core machine that was slower than one core; ``taskset
-c 0 pytest benchmarks -k gymnax`` measures both sides on one core).

The games are not identical: bsuite's Catch is episodic (a 10 x 5 board, one ball; gymnax resets it
in the same step, and computes a reset on every step), csuite's Catch is continuing (a 10 x 5 board,
a ball spawned with probability 0.1 each step, every ball falling). The comparison is of the same
board size and the same kind of step work, not of identical rules. gymnax is an optional peer
(``pip install gymnax``, with jax); where it does not install or import, its benchmarks skip with
the reason.

**Each csuite game** (catch, windy_catch, dancing_catch, access_control, taxi, pendulum,
pendulum_poke): env-steps per second of the engine (``vecenv.make(folder, num_envs=N)``) at
N = 1 and N = 4096, of the single environment ``vecenv.csuite.load(name).step(action)``, and of a
plain-Python class with the same rules (``plain_csuite.py``: ``random``, lists, ``math``). The
ratios: the csuite face's single step over the plain class's, and the engine's env-steps at N = 1
and N = 4096 over the plain class's steps. ``test_plain_matches_vecenv`` checks, step by step,
that each plain class computes what vecenv computes.

Keys: ("Catch-bsuite", 4096, impl) with impl "vecenv", "gymnax-scan", "gymnax-scan-noobs",
"gymnax-step"; ("csuite", name, impl) with impl "engine-N1", "engine-N4096", "single", "plain".
"""

import numpy as np
import plain_csuite
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

import vecenv.csuite as csuite

N = 4096
T = 32  # steps in one gymnax scan call
GYMNAX_TARGET = 20.0
GAMES = tuple(plain_csuite.GAMES)  # csuite names
FOLDERS = {name: ("csuite_pendulum" if name == "pendulum" else name) for name in GAMES}
# A step's cost at N = 4096 relative to the engine's CartPole, roughly: sets the calls per round.
COST = {
    "catch": 2,
    "windy_catch": 4,
    "dancing_catch": 4,
    "access_control": 2,
    "taxi": 2,
    "pendulum": 4,
    "pendulum_poke": 4,
}
CATCH_SECTION = (
    f"Catch, N={N}: vecenv engine (1 thread) vs gymnax Catch-bsuite (jax CPU, default threads)"
)
CSUITE_SECTION = "csuite games: csuite face and engine vs plain Python (per env-step)"


def _declare():
    declare_gymnax(
        CATCH_SECTION, f"Catch N={N}", ("Catch-bsuite", N), "vecenv catch", T, GYMNAX_TARGET
    )
    for name in GAMES:
        k = ("csuite", name)
        report.label(k + ("single",), "csuite face")
        report.label(k + ("engine-N1",), "engine N=1")
        report.label(k + ("engine-N4096",), f"engine N={N}")
        report.label(k + ("plain",), "plain Python")
        for impl in ("single", "engine-N1", "engine-N4096"):
            report.compare(CSUITE_SECTION, name, k + (impl,), k + ("plain",))


_declare()


# -- each game against plain Python --------------------------------------------------------------


def _cases():
    """(game, impl), grouped by game so each ratio's figures are taken close in time."""
    impls = ("plain", "single", "engine-N1", "engine-N4096")
    return [pytest.param(g, i, id=f"{g}-{i}") for g in GAMES for i in impls]


def _single_actions(name, calls):
    high = int(csuite.load(name).action_spec().num_values) - 1
    rng = np.random.default_rng(0)
    return [int(a) for a in rng.integers(0, high, size=calls, endpoint=True)]


@pytest.mark.parametrize(("name", "impl"), _cases())
def test_csuite_step(benchmark, name, impl):
    benchmark.group = f"csuite {name}"
    if impl.startswith("engine"):
        n = N if impl == "engine-N4096" else 1
        engine = make_engine(FOLDERS[name], n, 1)
        rows = engine_action_rows(engine, calls_per_round(n, cost=COST[name]))
        calls = run_steps(benchmark, engine.step, rows)
    else:
        n = 1
        if impl == "single":
            env = csuite.load(name, {"seed": 0})
        else:
            env = plain_csuite.GAMES[name](seed=0)
        env.start()
        rows = _single_actions(name, calls_per_round(1))
        calls = run_steps(benchmark, env.step, rows)
    report.record(benchmark, ("csuite", name, impl), calls, n, impl=impl)


# Per game: settings of the walk that visits states, settings that make one step deterministic
# (vecenv's and the plain class's steps are then compared from each visited state), the state
# fields set before the walk, and the part of the observation compared (random draws that remain
# change the rest).
EQUIVALENCE = {
    "catch": ({"spawn_probability": 0.5}, {"spawn_probability": 0.0}, {}, None),
    "windy_catch": (
        {"spawn_probability": 0.5, "change_every": 3},
        {"spawn_probability": 0.0, "change_every": 10**9},
        {},
        None,
    ),
    "dancing_catch": (
        {"spawn_probability": 0.5, "swap_every": 2},
        {"spawn_probability": 0.0, "swap_every": 10**9},
        {},
        None,
    ),
    # The next customer's priority is always drawn: compare the busy servers (obs // 4).
    "access_control": (
        {"free_probability": 0.3},
        {"free_probability": 0.0},
        {},
        lambda obs, reward: obs // 4,
    ),
    # A delivery draws the next passenger and destination: then compare the taxi's square.
    "taxi": ({}, {}, {}, lambda obs, reward: obs // 20 if reward == 20 else obs),
    "pendulum": ({}, {}, {"angle": 2.6}, None),
    "pendulum_poke": ({"perturb_prob": 0.5}, {"perturb_prob": 0.0}, {"angle": 2.6}, None),
}


@pytest.mark.parametrize("name", GAMES)
def test_plain_matches_vecenv(name):
    """From every state of a random walk, one step of vecenv's game and of the plain class under
    deterministic settings gives the same reward and observation."""
    walk_settings, fixed, start, project = EQUIVALENCE[name]
    walk = csuite.load(name, {**walk_settings, "seed": 1})
    walk.start()
    if start:
        state = walk.get_state()
        for field, value in start.items():
            state[field] = value
        walk.set_state(state)
    ours = csuite.load(name, fixed)
    plain = plain_csuite.GAMES[name](**fixed)
    project = project or (lambda obs, reward: obs)
    actions = _single_actions(name, 400)
    rewards = set()
    for action in actions:
        state = walk.get_state()
        ours.set_state(state)
        plain.load_record(state)
        obs, reward = ours.step(action)
        plain_obs, plain_reward = plain.step(action)
        assert plain_reward == reward, (name, state, action)
        want = np.asarray(obs).ravel()
        got = np.asarray(plain_obs, dtype=want.dtype).ravel()
        np.testing.assert_array_equal(project(got, reward), project(want, reward))
        rewards.add(reward)
        walk.step(action)
    assert len(rewards) > 1, f"the walk of {name} met one reward only: {rewards}"


# -- Catch against gymnax -----------------------------------------------------------------------


@pytest.mark.parametrize("impl", ("vecenv",) + GYMNAX_IMPLS)
def test_catch_vs_gymnax(benchmark, impl):
    benchmark.group = f"Catch N={N} vs gymnax"
    rng = np.random.default_rng(0)
    if impl == "vecenv":
        engine = make_engine("catch", N, 1)
        rows = engine_action_rows(engine, calls_per_round(N, cost=COST["catch"]))
        calls = run_steps(benchmark, engine.step, rows)
    else:
        count = 4 if impl == "gymnax-step" else T
        rows = list(rng.integers(0, 3, size=(count, N)))
        round_fn, calls = gymnax_round("Catch-bsuite", impl, rows, T)
        run_rounds(benchmark, round_fn)
    report.record(benchmark, ("Catch-bsuite", N, impl), calls, N, impl=impl)
