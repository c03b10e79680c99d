"""MountainCarContinuous against gymnasium's MountainCarContinuous-v0.

gymnasium stores this game's state as float32 between steps; the comparisons below hold to
float64 round-off only if the rules reproduce those float32 roundings. Spaces, registration,
initial states, frames and bad actions: test_classic_control.py.
"""

import math

import numpy as np
import pytest
from gymnasium.envs.classic_control.continuous_mountain_car import Continuous_MountainCarEnv

import vecenv

from . import side_by_side
from .side_by_side import MOUNTAINCAR_CONTINUOUS as GAME
from .side_by_side import ends, run_side_by_side

F32 = np.float32


def pump_most(rng, episode, state):
    """Two episodes in three push along the velocity (often harder than the clip); the others,
    and the rest of the time, act at random, out of range included."""
    if episode % 3 != 0 and rng.random() < 0.8:
        return F32((1.0 if state[1] >= 0 else -1.0) * rng.choice([0.6, 1.0, 2.0, 3.5]))
    kind = rng.integers(4)
    if kind == 0:
        return F32(rng.choice([3.5, -3.5, 1.0, -1.0, 0.0]))
    return F32(rng.uniform(-1.5, 1.5))


def test_matches_gymnasium_step_by_step():
    outcomes = run_side_by_side(GAME, pump_most, num_envs=2, seed=21, min_steps=2500, rng_seed=0)
    terminated, truncated_at = ends(outcomes)
    assert terminated >= 2, "too few episodes reached the flag"
    assert truncated_at == [999]


def test_non_default_configuration_matches_gymnasium():
    outcomes = run_side_by_side(
        GAME,
        pump_most,
        num_envs=1,
        seed=4,
        min_steps=1200,
        rng_seed=3,
        goal_velocity=0.03,
        episodeSteps=400,
    )
    terminated, truncated_at = ends(outcomes)
    assert terminated >= 1
    assert truncated_at in ([], [400])


def one_step_each(starts, actions, step, goal_velocity=0.0):
    """Step every (position, velocity) start once in ours and in gymnasium's env.

    ``step`` > 0 stands for a state reached by stepping, which gymnasium holds in float32; 0 for
    one just reset, in float64. Returns gymnasium's (state, terminated) per start.
    """
    return side_by_side.one_step_each(
        GAME,
        Continuous_MountainCarEnv(goal_velocity=goal_velocity),
        starts,
        actions,
        step=step,
        state_dtype=np.float32 if step else np.float64,
        goal_velocity=goal_velocity,
    )


def ulps_around(x, k):
    """The float32 values within ``k`` units in the last place of float32(x)."""
    x = F32(x)
    out = [x]
    up = down = x
    for _ in range(k):
        up, down = np.nextafter(up, F32(np.inf)), np.nextafter(down, F32(-np.inf))
        out += [up, down]
    return [float(v) for v in out]


def accel32(position, action):
    """gymnasium's velocity change from a float32 state and an in-range float32 action."""
    push = F32(action) * 0.0015
    return float(push - 0.0025 * math.cos(F32(3) * F32(position)))


@pytest.mark.parametrize("step", [0, 7])
def test_boundaries_match_gymnasium(step):
    starts, actions = [], []
    # Around the left wall, the flag, the right end and the speed limits, with every kind of
    # action: in range, on the bounds and clipped.
    for p in ulps_around(-1.2, 2) + ulps_around(0.45, 2) + ulps_around(0.6, 2):
        for v in [0.0, -1e-9, 1e-9, -0.07, 0.07, -0.0695, 0.0695, 0.002]:
            for a in [0.0, 0.4, -1.0, 1.0, 3.5, -3.5]:
                starts.append((p, v))
                actions.append(a)
    one_step_each(starts, actions, step)


def test_float32_comparisons_at_the_flag_match_gymnasium():
    # A float32 state is compared with float32 constants: arriving exactly at float32(0.45)
    # reaches the flag, although float32(0.45) < 0.45.
    flag = float(F32(0.45))
    starts = [(flag, v) for v in ulps_around(-accel32(flag, 0.0), 3)]
    results = one_step_each(starts, [0.0] * len(starts), step=3)
    assert any(state[0] == flag and term for state, term in results)
    # A velocity of exactly float32(0.07) is not clipped to the Python float 0.07, so it meets a
    # goal velocity between 0.07 and float32(0.07); a clipped one does not.
    goal = 0.07 + 1e-10
    p = 0.5
    starts = [(p, v) for v in ulps_around(float(F32(0.07)) - accel32(p, 0.0), 3)]
    results = one_step_each(starts, [0.0] * len(starts), step=3, goal_velocity=goal)
    assert any(term for _, term in results) and not all(term for _, term in results)


def test_reward_uses_the_unclipped_action_and_force_the_clipped_one():
    results = {}
    for a in [1.0, 3.5]:
        engine = vecenv.make(GAME.name, num_envs=1, seed=9, autoreset="disabled")
        engine.step(np.array([[a]], dtype=np.float32))
        results[a] = (GAME.state(engine), float(engine.rewards[0, 0]))
    np.testing.assert_array_equal(results[1.0][0], results[3.5][0])
    assert results[1.0][1] == pytest.approx(-0.1)
    assert results[3.5][1] == pytest.approx(-0.1 * 3.5**2)
