"""MinAtar Space Invaders beside the ``minatar`` package's own Space Invaders, step for step.

The game draws nothing; the sticky actions draw the same in both
(``tests.envs.minatar_side_by_side``). Whole episodes start from MinAtar's reset state and play the
same actions with sticky actions on, and hypothesis injects arbitrary states (aliens at the edges
and on the bottom row, a last alien, bullets in flight, timers about to fire) into both and steps
them. Every step's state, observation, reward, end and stream position must agree. The reference is
a test extra; outside CI the tests skip without it.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.envs.minatar_side_by_side import (
    injection_engines,
    minatar,
    play_both,
    running,
    start_both,
    step_both,
)

GAME = "minatar_space_invaders"
WARM = [(GAME, {})]  # compiled beside the tests before they start (tests/warmup.py)
SCALARS = (
    "pos",
    "alien_dir",
    "enemy_move_interval",
    "alien_move_timer",
    "alien_shot_timer",
    "ramp_index",
    "shot_timer",
)
MAPS = {"aliens": "alien_map", "f_bullets": "f_bullet_map", "e_bullets": "e_bullet_map"}


def cells(rows):
    return ((np.asarray(rows, dtype=np.int64)[:, None] >> np.arange(10)) & 1).astype(float)


def rows(cells):
    return (np.asarray(cells, dtype=np.int64) << np.arange(10)).sum(axis=1)


def same(record, env):
    for name in SCALARS:
        assert record[name] == getattr(env, name), name
    for ours, theirs in MAPS.items():
        np.testing.assert_array_equal(cells(record[ours]), getattr(env, theirs), err_msg=ours)


def inject(engine, env, word):
    """Our episode 0 set to MinAtar's game ``env``, our stream at ``word``."""
    state = engine.get_state(0)
    for name in SCALARS:
        state[name] = getattr(env, name)
    for ours, theirs in MAPS.items():
        state[ours] = rows(getattr(env, theirs))
    state["last_action"] = 0
    running(engine, state, word)


@pytest.fixture(scope="module")
def engines():
    return injection_engines(GAME, minimal_actions=False)


@pytest.mark.parametrize("seed", range(6))
def test_episodes_are_minatars(seed):
    steps, _ = play_both(GAME, same, seed, full=seed % 2 == 1, ramping=seed != 4)
    assert steps >= 10


def lookahead(game, horizon=10):
    """A full-set action for MinAtar's game: the best of fire, no-op, left and right by what a
    copy of the game scores in the next steps, firing whenever it can (dying costs 100)."""
    best, choice = None, 0
    for action in (5, 0, 1, 3):
        copy = object.__new__(type(game))
        copy.__dict__ = {
            k: v.copy() if isinstance(v, np.ndarray) else v for k, v in vars(game).items()
        }
        score, done = copy.act(action)
        for k in range(horizon):
            if done:
                score -= 100
                break
            reward, done = copy.act(5 if copy.shot_timer == 0 else 0)
            score += reward * 0.9**k
        if best is None or score > best:
            best, choice = score, action
    return choice


def test_a_cannon_clearing_waves_is_minatars():
    # A player that clears waves (sticky actions on): new waves, each faster (the ramp).
    ours, theirs = start_both(GAME, same, seed=4, full=True)
    total = 0.0
    for _ in range(400):
        steps, reward = step_both(ours, theirs, same, [lookahead(theirs.env)])
        total += reward
        if ours.terminated[0]:
            break
    assert total >= 24 and ours.get_state(0)["ramp_index"] >= 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), full=st.booleans(), sticky=st.sampled_from([0.0, 0.1, 0.5]))
def test_any_episode_is_minatars(seed, full, sticky):
    play_both(GAME, same, seed, full, sticky=sticky)


# Rows of a map: mostly empty or sparse (so the nearest alien is often columns away), some full.
ROWS = st.one_of(
    st.just(0),
    st.just(0),
    st.integers(0, 9).map(lambda x: 1 << x),
    st.tuples(st.integers(0, 1023), st.integers(0, 1023)).map(lambda ab: ab[0] & ab[1]),
    st.sampled_from([0b0011111100, 1023]),
)
SPARSE = st.one_of(st.just(0), st.just(0), st.just(0), st.integers(0, 9).map(lambda x: 1 << x))
MAP = st.lists(ROWS, min_size=10, max_size=10)
# Aliens and their bullets mostly clear of the cannon's row, so that episodes go on a while.
ALIENS = st.tuples(st.lists(ROWS, min_size=8, max_size=8), SPARSE, SPARSE).map(
    lambda t: [*t[0], t[1], t[2]]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pos=st.integers(0, 9),
    aliens=ALIENS,
    f_bullets=MAP,
    e_bullets=st.lists(SPARSE, min_size=10, max_size=10),
    alien_dir=st.sampled_from([-1, 1]),
    interval=st.integers(6, 12),
    timers=st.tuples(st.integers(0, 12), st.integers(0, 10) | st.just(0), st.integers(0, 5)),
    ramp_index=st.integers(0, 6),
    ramping=st.booleans(),
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 5), min_size=8, max_size=16),
)
def test_steps_from_any_state_are_minatars(
    engines,
    pos,
    aliens,
    f_bullets,
    e_bullets,
    alien_dir,
    interval,
    timers,
    ramp_index,
    ramping,
    word,
    actions,
):
    """Injected states, stepped in both until the episode ends (sticky actions off)."""
    if not any(aliens):
        aliens[0] = 1  # a wave is never empty at a step's start
    env = minatar("space_invaders", word, ramping=ramping)
    game = env.env
    game.pos, game.alien_dir, game.enemy_move_interval = pos, alien_dir, interval
    game.alien_move_timer, game.alien_shot_timer, game.shot_timer = timers
    game.ramp_index = ramp_index
    game.alien_map, game.f_bullet_map, game.e_bullet_map = map(
        cells, (aliens, f_bullets, e_bullets)
    )
    ours = engines[ramping]
    inject(ours, game, word)
    step_both(ours, env, same, actions)


def test_states_without_aliens_or_a_direction_are_refused(engines):
    engine = engines[True]
    for field, value, message in (("aliens", 0, "must hold an alien"), ("alien_dir", 0, "-1 or 1")):
        state = engine.get_state(0)
        state[field] = value
        with pytest.raises(ValueError, match=message):
            engine.set_state(state, 0)
