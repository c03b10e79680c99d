"""MinAtar Freeway beside the ``minatar`` package's own Freeway, step for step.

Both draw the same randomness (``tests.envs.minatar_side_by_side``): whole episodes (2501 steps, to
MinAtar's time limit) start from MinAtar's reset state and play the same actions with sticky
actions on, and hypothesis injects arbitrary states (the chicken a step from the top, cars about to
move into it or wrap, speeds of 0) into both and steps them. Every step's state, observation,
reward, end and stream position must agree. The reference is a test extra; outside CI the tests
skip without it.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.minatar_side_by_side import minatar, play_both, running, start_both, step_both

GAME = "minatar_freeway"
WARM = [(GAME, {})]  # compiled beside the tests before they start (tests/warmup.py)
SCALARS = ("pos", "move_timer", "terminate_timer")


def same(record, env):
    for name in SCALARS:
        assert record[name] == getattr(env, name), name
    for k, car in enumerate(env.cars):
        ours = [record["car_x"][k], k + 1, record["car_timer"][k], record["car_speed"][k]]
        assert ours == list(car), k


def inject(engine, env, word):
    """Our episode 0 set to MinAtar's game ``env``, our stream at ``word``."""
    state = engine.get_state(0)
    for name in SCALARS:
        state[name] = getattr(env, name)
    for k, (x, _, timer, speed) in enumerate(env.cars):
        state["car_x"][k], state["car_timer"][k], state["car_speed"][k] = x, timer, speed
    state["last_action"] = 0
    running(engine, state, word)


@pytest.fixture(scope="module")
def engine():
    """One engine for the injected states (sticky actions off, the full action set)."""
    return vecenv.make(
        GAME, num_envs=1, seed=0, sticky_action_prob=0.0, minimal_actions=False, max_episode_steps=0
    )


@pytest.mark.parametrize("seed", range(3))
def test_episodes_are_minatars(seed):
    steps, total = play_both(GAME, same, seed, full=seed == 1, ramping=None)
    assert steps == 2501  # MinAtar's time limit
    assert total >= 0


def test_a_chicken_going_up_crosses_as_in_minatar():
    # Up four times in five (sticky actions on): crossings, each drawing the cars again.
    ours, theirs = start_both(GAME, same, seed=3, ramping=None)
    actions = np.where(np.random.default_rng(3).random(2501) < 0.8, 1, 0)
    steps, total = step_both(ours, theirs, same, actions)
    assert steps == 2501 and total >= 10


cars = st.lists(
    st.tuples(st.integers(0, 9), st.integers(0, 5), st.integers(-5, 5)), min_size=8, max_size=8
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pos=st.integers(0, 9),
    move_timer=st.integers(0, 3),
    terminate_timer=st.integers(-1, 2500) | st.integers(0, 2),
    cars=cars,
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 5), min_size=8, max_size=16),
)
def test_steps_from_any_state_are_minatars(
    engine, pos, move_timer, terminate_timer, cars, word, actions
):
    """Injected states, stepped in both until the episode ends (sticky actions off)."""
    if cars[0][2] == 0:  # MinAtar's state() fails on a first car of speed 0 (ours: no trail)
        cars[0] = (cars[0][0], cars[0][1], 1)
    env = minatar("freeway", word)
    env.env.pos, env.env.move_timer, env.env.terminate_timer = pos, move_timer, terminate_timer
    env.env.cars = [[x, k + 1, timer, speed] for k, (x, timer, speed) in enumerate(cars)]
    inject(engine, env.env, word)
    step_both(engine, env, same, actions)
