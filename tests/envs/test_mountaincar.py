"""MountainCar against gymnasium's MountainCar-v0: dynamics, rewards, limits.

Spaces, registration, initial states, frames and bad actions: test_classic_control.py.
"""

import gymnasium
import numpy as np
import pytest

import vecenv

from .side_by_side import MOUNTAINCAR as GAME
from .side_by_side import assert_same_step, ends, run_side_by_side


def pump_half(rng, episode, state):
    """Half the episodes pump energy (push along the velocity) so that they reach the flag, with
    random actions mixed in; the others act at random and run into the time limit."""
    if episode % 2 == 0 and rng.random() < 0.85:
        return 2 if state[1] >= 0 else 0
    return int(rng.integers(3))


def test_matches_gymnasium_step_by_step():
    outcomes = run_side_by_side(GAME, pump_half, num_envs=3, seed=11, min_steps=1500, rng_seed=0)
    terminated, truncated_at = ends(outcomes)
    assert terminated >= 1, "no episode reached the flag"
    assert truncated_at == [200]


def test_non_default_configuration_matches_gymnasium():
    # About half the pumped episodes reach the flag slower than 0.04 and must carry on: they are
    # at or past the flag without terminating.
    slow = []
    outcomes = run_side_by_side(
        GAME,
        pump_half,
        num_envs=2,
        seed=5,
        min_steps=1000,
        rng_seed=1,
        watch=lambda obs, terminated: slow.append(obs[0] >= 0.5 and not terminated),
        goal_velocity=0.04,
        episodeSteps=150,
    )
    terminated, truncated_at = ends(outcomes)
    assert terminated >= 1
    assert any(slow)
    assert truncated_at in ([], [150])


@pytest.mark.parametrize(
    ("position", "velocity", "action"),
    [
        (-1.19, -0.05, 0),  # hits the left wall: the velocity drops to 0
        (-1.2, 0.0, 0),  # pressed against the wall
        (-1.25, -0.01, 1),  # off the track: clipped back onto it
        (0.49, 0.07, 2),  # reaches the flag
        (0.55, 0.1, 2),  # beyond the speed limit
        (0.7, -0.2, 0),  # beyond the right end
    ],
)
def test_edge_states_match_gymnasium(position, velocity, action):
    engine = vecenv.make(GAME.name, num_envs=1, seed=0, autoreset="disabled")
    state = engine.get_state(0)
    state["position"], state["velocity"] = position, velocity
    engine.set_state(state, 0)
    env = gymnasium.make(GAME.gym_id)
    env.reset(seed=0)
    env.unwrapped.state = np.array([position, velocity])
    for _ in range(5):
        engine.step(np.array([action]))
        obs, reward, terminated, truncated, _ = env.step(action)
        assert_same_step(GAME, engine, 0, obs, reward, terminated, truncated, env)
        if terminated:
            break
