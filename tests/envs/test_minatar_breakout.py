"""MinAtar Breakout beside the ``minatar`` package's own Breakout, step for step.

MinAtar draws its randomness (the ball's start, sticky actions) from numpy's global-style
``RandomState``, ours from each episode's stream, so the states are injected: each episode starts
from MinAtar's reset state, then both play the same actions with sticky actions off (MinAtar's
``Env``, the game behind its sticky-action ``Environment``) and every step's state, observation,
reward and termination must agree. Sticky actions are checked on their own against MinAtar's
``Environment`` semantics. The reference is a test extra; outside CI the tests skip without it.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need

FIELDS = ("ball_x", "ball_y", "ball_dir", "pos", "last_x", "last_y")


def _breakout():
    return need("minatar.environments.breakout", "MinAtar")


def inject(engine, theirs):
    """Our episode 0 set to MinAtar's ``theirs``."""
    state = engine.get_state(0)
    for name in FIELDS:
        state[name] = getattr(theirs, name)
    state["strike"] = theirs.strike
    state["bricks"] = theirs.brick_map
    engine.set_state(state, 0)


def assert_same(engine, theirs):
    state = engine.get_state(0)
    for name in FIELDS:
        assert state[name] == getattr(theirs, name), name
    assert bool(state["strike"]) == bool(theirs.strike)
    np.testing.assert_array_equal(state["bricks"], theirs.brick_map)
    np.testing.assert_array_equal(engine.obs["obs"][0, 0], theirs.state())


def play_both(seed, full=True, max_steps=3000):
    """A whole episode from MinAtar's reset state with random actions in both."""
    breakout = _breakout()
    theirs = breakout.Env()
    theirs.random = np.random.RandomState(seed)
    theirs.reset()
    config = {"sticky_action_prob": 0.0, "minimal_actions": not full}
    ours = vecenv.make("minatar_breakout", num_envs=1, seed=seed, max_episode_steps=0, **config)
    inject(ours, theirs)
    assert_same(ours, theirs)
    rng = np.random.default_rng(seed)
    total = 0.0
    for t in range(max_steps):
        action = int(rng.integers(0, 6 if full else 3))
        reward, terminal = theirs.act(action if full else (0, 1, 3)[action])
        obs, rewards, terminated, _ = ours.step(np.array([action]))
        assert rewards[0, 0] == reward, t
        assert bool(terminated[0]) == terminal, t
        total += reward
        if terminal:
            return t + 1, total
        assert_same(ours, theirs)
    return max_steps, total


@pytest.mark.parametrize("seed", range(8))
def test_episodes_are_minatars(seed):
    steps, total = play_both(seed, full=seed % 2 == 0)
    assert steps >= 5


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), full=st.booleans())
def test_any_episode_is_minatars(seed, full):
    play_both(seed, full)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ball=st.tuples(st.integers(0, 9), st.integers(0, 8), st.integers(0, 3)),
    pos=st.integers(0, 9),
    strike=st.booleans(),
    bricks=st.lists(st.booleans(), min_size=30, max_size=30),
    action=st.integers(0, 5),
)
def test_one_step_from_any_state_is_minatars(ball, pos, strike, bricks, action):
    """Injected states: empty boards (the refill on the bottom row), walls, corners, bricks next
    to the ball and a strike in progress."""
    breakout = _breakout()
    theirs = breakout.Env()
    theirs.ball_x, theirs.ball_y, theirs.ball_dir = ball
    theirs.last_x, theirs.last_y = ball[0], ball[1]
    theirs.pos, theirs.strike = pos, strike
    theirs.brick_map = np.zeros((10, 10))
    theirs.brick_map[1:4, :] = np.array(bricks, dtype=float).reshape(3, 10)
    ours = vecenv.make(
        "minatar_breakout", num_envs=1, seed=0, sticky_action_prob=0.0, minimal_actions=False
    )
    inject(ours, theirs)
    reward, terminal = theirs.act(action)
    _, rewards, terminated, _ = ours.step(np.array([action]))
    assert (rewards[0, 0], bool(terminated[0])) == (reward, terminal)
    if not terminal:
        assert_same(ours, theirs)


def test_sticky_actions_repeat_the_previous_action_across_episodes():
    # Probability 1: the previous action always repeats; it starts as no-op, as MinAtar's.
    e = vecenv.make("minatar_breakout", num_envs=1, seed=0, sticky_action_prob=1.0)
    for _ in range(3):
        e.step(np.array([2]))
    assert e.states["pos"][0] == 4 and e.states["last_action"][0] == 0
    state = e.get_state(0)
    state["last_action"] = 3  # right, in MinAtar's full numbering
    e.set_state(state, 0)
    e.reset()  # a new episode keeps it, as MinAtar's Environment keeps last_action
    e.step(np.array([1]))
    assert e.states["pos"][0] == 5


def test_sticky_actions_repeat_at_their_rate():
    n, steps, p = 256, 200, 0.25
    e = vecenv.make("minatar_breakout", num_envs=n, seed=3, sticky_action_prob=p)
    rng = np.random.default_rng(0)
    repeats = chances = 0
    for _ in range(steps):
        before = e.states["last_action"].copy()
        stepped = e.states["step"].copy()
        actions = rng.integers(0, 3, size=n)
        wanted = np.array([0, 1, 3])[actions]
        e.step(actions)
        taken = e.states["last_action"]
        # Where the episode really stepped (not the step that starts the next one).
        differs = (wanted != before) & (e.states["step"] == stepped + 1)
        chances += differs.sum()
        repeats += (differs & (taken == before)).sum()
    rate = repeats / chances
    assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / chances)


def test_the_minimal_set_maps_to_minatars_actions():
    e = vecenv.make("minatar_breakout", num_envs=1, seed=0, sticky_action_prob=0.0)
    assert e.action.high[0] == 2
    e.step(np.array([2]))
    assert e.states["pos"][0] == 5 and e.states["last_action"][0] == 3
    e.step(np.array([1]))
    assert e.states["pos"][0] == 4 and e.states["last_action"][0] == 1
    with pytest.raises(ValueError, match="out of range"):
        e.step(np.array([3]))
    full = vecenv.make("minatar_breakout", num_envs=1, minimal_actions=False)
    assert full.action.high[0] == 5


def test_a_ball_set_below_the_paddle_ends_the_episode_instead_of_reading_off_the_board():
    e = vecenv.make("minatar_breakout", num_envs=1, seed=0, sticky_action_prob=0.0)
    state = e.get_state(0)
    state["ball_y"], state["ball_dir"], state["pos"] = 9, 2, 0
    e.set_state(state, 0)
    _, _, terminated, _ = e.step(np.array([0]))
    assert terminated[0]
