"""MinAtar Asterix beside the ``minatar`` package's own Asterix, step for step.

Both draw the same randomness (``tests.envs.minatar_side_by_side``): whole episodes start from
MinAtar's reset state and play the same actions with sticky actions on, and hypothesis injects
arbitrary states (full slots, gold and enemies beside the player, timers and ramping about to fire)
into both and steps them. Every step's state, observation, reward, end and stream position must
agree. The reference is a test extra; outside CI the tests skip without it.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.envs.minatar_side_by_side import (
    injection_engines,
    minatar,
    play_both,
    running,
    step_both,
)

GAME = "minatar_asterix"
WARM = [(GAME, {})]  # compiled beside the tests before they start (tests/warmup.py)
SCALARS = (
    "player_x",
    "player_y",
    "spawn_speed",
    "spawn_timer",
    "move_speed",
    "move_timer",
    "ramp_timer",
    "ramp_index",
)


def same(record, env):
    for name in SCALARS:
        assert record[name] == getattr(env, name), name
    for k, entity in enumerate(env.entities):
        if entity is None:
            assert not record["alive"][k], k
        else:
            assert record["alive"][k], k
            ours = (record["x"][k], k + 1, bool(record["right"][k]), bool(record["gold"][k]))
            assert ours == tuple(entity), k


def inject(engine, env, word):
    """Our episode 0 set to MinAtar's game ``env``, our stream at ``word``."""
    state = engine.get_state(0)
    for name in SCALARS:
        state[name] = getattr(env, name)
    for k, entity in enumerate(env.entities):
        state["alive"][k] = entity is not None
        if entity is not None:
            state["x"][k], _, state["right"][k], state["gold"][k] = entity
    state["last_action"] = 0
    running(engine, state, word)


@pytest.fixture(scope="module")
def engines():
    return injection_engines(GAME, minimal_actions=False)


@pytest.mark.parametrize("seed", range(6))
def test_episodes_are_minatars(seed):
    steps, _ = play_both(GAME, same, seed, full=seed % 2 == 1, ramping=seed != 4)
    assert steps >= 2


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), full=st.booleans(), sticky=st.sampled_from([0.0, 0.1, 0.5]))
def test_any_episode_is_minatars(seed, full, sticky):
    play_both(GAME, same, seed, full, sticky=sticky)


entities = st.lists(
    st.one_of(st.none(), st.tuples(st.integers(0, 9), st.booleans(), st.booleans())),
    min_size=8,
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    player=st.tuples(st.integers(0, 9), st.integers(1, 8)),
    slots=entities,
    speeds=st.tuples(st.integers(1, 10), st.integers(1, 5)),
    timers=st.tuples(st.integers(0, 10), st.integers(0, 5), st.integers(-1, 100)),
    ramp_index=st.integers(0, 9),
    ramping=st.booleans(),
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 5), min_size=8, max_size=16),
)
def test_steps_from_any_state_are_minatars(
    engines, player, slots, speeds, timers, ramp_index, ramping, word, actions
):
    """Injected states, stepped in both until the episode ends (sticky actions off)."""
    env = minatar("asterix", word, ramping=ramping)
    env.env.player_x, env.env.player_y = player
    env.env.entities = [
        None if e is None else [e[0], k + 1, e[1], e[2]] for k, e in enumerate(slots)
    ]
    env.env.spawn_speed, env.env.move_speed = speeds
    env.env.spawn_timer = min(timers[0], speeds[0])
    env.env.move_timer = min(timers[1], speeds[1])
    env.env.ramp_timer, env.env.ramp_index = timers[2], ramp_index
    ours = engines[ramping]
    inject(ours, env.env, word)
    step_both(ours, env, same, actions)
