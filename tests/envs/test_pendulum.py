"""Pendulum against gymnasium's Pendulum-v1: dynamics, rewards, limits, the torque arrow.

Spaces, registration, initial states, frames and bad actions: test_classic_control.py.
"""

import numpy as np
import pytest
from gymnasium.envs.classic_control.pendulum import PendulumEnv

import vecenv

from . import side_by_side
from .side_by_side import PENDULUM as GAME
from .side_by_side import run_side_by_side

F32 = np.float32


def random_action(rng, episode, state):
    """A float32 torque: mostly in range, sometimes on or beyond the bounds."""
    kind = rng.integers(5)
    if kind == 0:
        return F32(rng.choice([3.5, -3.5, 2.0, -2.0, 0.0, 1e6]))
    return F32(rng.uniform(-2.5, 2.5))


def test_matches_gymnasium_step_by_step():
    outcomes = run_side_by_side(
        GAME, random_action, num_envs=2, seed=31, min_steps=1200, rng_seed=0
    )
    assert outcomes == [(False, True, 200)] * 6


@pytest.mark.parametrize("g", [9.81, 2.5])
def test_non_default_configuration_matches_gymnasium(g):
    outcomes = run_side_by_side(
        GAME, random_action, num_envs=1, seed=8, min_steps=500, rng_seed=1, g=g, episodeSteps=125
    )
    assert outcomes == [(False, True, 125)] * 4


def one_step_each(starts, actions, g=10.0):
    """Step every (theta, theta_dot) start once in ours and in gymnasium's env."""
    side_by_side.one_step_each(GAME, PendulumEnv(g=g), starts, actions, g=g)


def test_any_angle_and_speed_match_gymnasium():
    # Angles far outside [-pi, pi) are normalised for the cost, speeds beyond 8 are clipped.
    starts = [
        (th, thdot)
        for th in [-np.pi, np.pi, 7.5, -50.25, 1e6, -3e7, 0.0]
        for thdot in [0.0, -12.0, 40.0, 7.99]
    ]
    one_step_each(starts, [1.5] * len(starts))


def test_torque_cost_matches_numpy_float32_power():
    # gymnasium squares the float32 torque with NumPy's float32 power (the C library's powf),
    # which is not always the correctly rounded product; upright and at rest the cost is that
    # square alone, so any difference shows far above float64 round-off.
    rng = np.random.default_rng(5)
    torques = rng.uniform(-2, 2, 4000).astype(np.float32)
    differs = [float(u) for u in torques if u**2 != F32(float(u) * float(u))]
    chosen = differs[:40] + [float(u) for u in torques[:40]]
    one_step_each([(0.0, 0.0)] * len(chosen), chosen)


def test_reward_and_dynamics_use_the_clipped_torque():
    results = {}
    for a in [2.0, 3.5]:
        engine = vecenv.make(GAME.name, num_envs=1, seed=9, autoreset="disabled")
        engine.step(np.array([[a]], dtype=np.float32))
        results[a] = (
            GAME.state(engine),
            float(engine.rewards[0, 0]),
            float(engine.get_state(0)["last_u"]),
        )
    np.testing.assert_array_equal(results[2.0][0], results[3.5][0])
    assert results[2.0][1] == results[3.5][1]
    assert results[3.5][2] == 2.0


def test_render_shows_the_torque_arrow_mirrored_with_its_sign():
    engine = vecenv.make(GAME.name, num_envs=1, seed=0)
    state = engine.get_state(0)
    state["theta"] += 1.0
    engine.set_state(state, 0)
    turned = engine.render()
    state["last_u"] = 1.5
    engine.set_state(state, 0)
    pushed = engine.render()
    state["last_u"] = -1.5
    engine.set_state(state, 0)
    pulled = engine.render()
    assert (pushed != turned).any() and (pulled != turned).any() and (pushed != pulled).any()
    text = engine.render(mode="ansi")
    assert isinstance(text, str) and "torque=-1.500" in text
