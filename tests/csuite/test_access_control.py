"""AccessControl against csuite's rules: accepting and rejecting, rewards per priority, full
servers, the freeing of busy servers, the priorities' draws, the observation's enumeration, state
checks, frames and the gym face.

Expected values are derived by hand from csuite's ``access_control.py``; random draws are checked
for their distributions (binomial freeing, uniform priorities), since the streams are not numpy's.
"""

import math

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv

from . import helpers
from .helpers import FUZZ, assert_refused, run_vector_env, step

GAME = "access_control"
PRIORITIES = (1, 2, 4, 8)
REJECT, ACCEPT = 0, 1


def make(num_envs=1, seed=0, **config):
    return vecenv.make(GAME, num_envs=num_envs, seed=seed, **config)


def put(engine, i=0, busy=None, priority=None, last_action=None):
    helpers.put(
        engine, i, num_busy_servers=busy, incoming_priority=priority, last_action=last_action
    )


def put_all(engine, busy, priority):
    state = engine.get_state()
    state["num_busy_servers"] = busy
    state["incoming_priority"] = priority
    engine.set_state(state)


def index(busy, priority):
    return busy * 4 + PRIORITIES.index(priority)


# -- start -------------------------------------------------------------------------------------


def test_start_has_every_server_free_and_a_uniform_priority():
    n = 8000
    e = make(num_envs=n, seed=1)
    s = e.get_state()
    assert (s["num_busy_servers"] == 0).all() and (s["last_action"] == -1).all()
    counts = np.array([(s["incoming_priority"] == p).sum() for p in PRIORITIES])
    assert counts.sum() == n
    # 2000 each, standard deviation about 39.
    assert (np.abs(counts - 2000) < 200).all(), counts
    want = [index(0, int(p)) for p in s["incoming_priority"]]
    np.testing.assert_array_equal(e.obs["observation"][:, 0], want)


# -- accepting and rejecting -------------------------------------------------------------------


@pytest.mark.parametrize("priority", PRIORITIES)
@pytest.mark.parametrize("busy", [0, 4, 9])
def test_accepting_with_a_free_server_pays_the_priority(priority, busy):
    e = make(free_probability=0.0)
    put(e, busy=busy, priority=priority)
    obs, rewards = step(e, ACCEPT)
    assert rewards[0] == priority
    assert e.states["num_busy_servers"][0] == busy + 1
    assert e.states["last_action"][0] == ACCEPT
    assert obs[0] == index(busy + 1, int(e.states["incoming_priority"][0]))


@pytest.mark.parametrize("priority", PRIORITIES)
@pytest.mark.parametrize(
    "busy, action",
    [(3, REJECT), (10, ACCEPT)],  # rejecting; accepting with every server busy is a rejection
)
def test_rejections_pay_nothing_and_keep_the_servers(priority, busy, action):
    e = make(free_probability=0.0)
    put(e, busy=busy, priority=priority)
    _, rewards = step(e, action)
    assert rewards[0] == 0.0
    assert e.states["num_busy_servers"][0] == busy
    assert e.states["last_action"][0] == action


def test_servers_fill_up_without_freeing():
    e = make(num_envs=2, seed=4, free_probability=0.0)
    got = []
    for _ in range(13):
        priorities = e.states["incoming_priority"].copy()
        _, rewards = step(e, ACCEPT, REJECT)
        got.append(rewards[0])
        assert rewards[1] == 0.0
        if len(got) <= 10:
            assert rewards[0] == priorities[0]
    assert got[10:] == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(e.states["num_busy_servers"], [10, 0])


def test_no_servers_never_accepts():
    e = make(num_servers=0)
    assert e.observation[0].high == 3
    for _ in range(5):
        obs, rewards = step(e, ACCEPT)
        assert rewards[0] == 0.0 and 0 <= obs[0] <= 3


# -- freeing -----------------------------------------------------------------------------------


def test_every_busy_server_frees_with_probability_one_even_the_new_one():
    e = make(free_probability=1.0)
    put(e, busy=3, priority=4)
    obs, rewards = step(e, ACCEPT)
    assert rewards[0] == 4.0 and e.states["num_busy_servers"][0] == 0
    put(e, busy=10, priority=8)
    step(e, REJECT)
    assert e.states["num_busy_servers"][0] == 0


def test_freed_servers_are_binomial():
    n, busy, p = 20000, 10, 0.3
    e = make(num_envs=n, seed=6, free_probability=p)
    put_all(e, busy, 2)
    step(e, *([REJECT] * n))
    freed = busy - e.states["num_busy_servers"]
    assert freed.min() >= 0 and freed.max() <= busy
    assert abs(freed.mean() - busy * p) < 0.05, freed.mean()
    assert abs(freed.var() - busy * p * (1 - p)) < 0.12, freed.var()
    counts = np.bincount(freed, minlength=busy + 1)
    pmf = np.array([math.comb(busy, k) * p**k * (1 - p) ** (busy - k) for k in range(busy + 1)])
    expected = n * pmf
    big = expected > 20
    chi2 = (((counts - expected) ** 2)[big] / expected[big]).sum()
    assert chi2 < 40, (counts, expected.round())


def test_the_accepted_server_may_free_at_once():
    n, p = 20000, 0.25
    e = make(num_envs=n, seed=2, free_probability=p)
    put_all(e, 0, 1)
    _, rewards = step(e, *([ACCEPT] * n))
    assert (rewards == 1.0).all()
    still = e.states["num_busy_servers"]
    assert set(np.unique(still).tolist()) <= {0, 1}
    assert abs((still == 0).mean() - p) < 0.02


def test_default_freeing_probability():
    n = 20000
    e = make(num_envs=n, seed=9)
    put_all(e, 10, 8)
    step(e, *([REJECT] * n))
    freed = 10 - e.states["num_busy_servers"]
    assert abs(freed.mean() - 0.6) < 0.03, freed.mean()


# -- priorities --------------------------------------------------------------------------------


@pytest.mark.parametrize("action", [REJECT, ACCEPT])
def test_next_priority_is_uniform_whatever_the_action(action):
    n = 8000
    e = make(num_envs=n, seed=3 + action)
    put_all(e, 5, 8)
    step(e, *([action] * n))
    counts = np.array([(e.states["incoming_priority"] == p).sum() for p in PRIORITIES])
    assert counts.sum() == n and (np.abs(counts - 2000) < 200).all(), counts


def test_priorities_are_independent_from_step_to_step():
    n = 8000
    e = make(num_envs=n, seed=10)
    first = e.states["incoming_priority"].copy()
    step(e, *([REJECT] * n))
    second = e.states["incoming_priority"]
    assert abs((first == second).mean() - 0.25) < 0.03


# -- observations ------------------------------------------------------------------------------


@pytest.mark.parametrize("servers", [10, 3])
def test_observation_enumerates_busy_servers_then_priorities(servers):
    e = make(num_servers=servers)
    assert e.observation[0].shape == () and e.observation[0].high == (servers + 1) * 4 - 1
    seen = []
    for busy in range(servers + 1):
        for k, priority in enumerate(PRIORITIES):
            put(e, busy=busy, priority=priority)
            assert e.obs["observation"][0, 0] == busy * 4 + k
            seen.append(int(e.obs["observation"][0, 0]))
    assert seen == list(range((servers + 1) * 4))


# -- state checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("num_busy_servers", -1, "num_busy_servers not in expectedrange \\[0, 10\\)"),
        ("num_busy_servers", 11, "num_busy_servers"),
        ("incoming_priority", 3, "incoming_priority not in expectedrange \\(1, 2, 4, 8\\)"),
        ("incoming_priority", 0, "incoming_priority"),
        ("incoming_priority", 16, "incoming_priority"),
        ("last_action", 2, "last_action"),
        ("last_action", -2, "last_action"),
    ],
)
def test_invalid_states_are_refused_and_change_nothing(field, value, message):
    e = make(num_envs=3, seed=4)
    step(e, 0, 1, 1)
    bad = e.get_state()
    bad[field][0] = value
    assert_refused(e, bad, match=message)


def test_full_servers_are_a_valid_state():
    e = make(num_servers=4)
    put(e, busy=4, priority=2)
    assert e.obs["observation"][0, 0] == 17


@pytest.mark.parametrize("action", [2, -1])
def test_invalid_actions_are_refused(action):
    e = make(num_envs=2)
    before = e.get_state()
    with pytest.raises(ValueError, match="out of range"):
        e.step(np.array([0, action]))
    np.testing.assert_array_equal(e.get_state(), before)


# -- properties --------------------------------------------------------------------------------


@FUZZ
@given(
    servers=st.sampled_from([0, 1, 3, 10]),
    p=st.sampled_from([0.0, 0.06, 0.5, 1.0]),
    seed=st.integers(0, 2**32),
    actions=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=50),
)
def test_random_action_sequences_follow_the_rules(servers, p, seed, actions):
    e = make(num_envs=2, seed=seed, num_servers=servers, free_probability=p)
    for pair in actions:
        busy = e.states["num_busy_servers"].copy()
        priority = e.states["incoming_priority"].copy()
        obs, rewards = step(e, *pair)
        s = e.states
        for i, a in enumerate(pair):
            accepted = a == ACCEPT and busy[i] < servers
            assert rewards[i] == (priority[i] if accepted else 0)
            assert 0 <= s["num_busy_servers"][i] <= busy[i] + accepted
            assert s["incoming_priority"][i] in PRIORITIES
            assert s["last_action"][i] == a
            assert obs[i] == index(int(s["num_busy_servers"][i]), int(s["incoming_priority"][i]))
            if p == 0.0:
                assert s["num_busy_servers"][i] == busy[i] + accepted
            if p == 1.0:
                assert s["num_busy_servers"][i] == 0


@FUZZ
@given(
    busy=st.lists(st.integers(0, 10), min_size=2, max_size=2),
    priority=st.lists(st.sampled_from(PRIORITIES), min_size=2, max_size=2),
    last=st.lists(st.integers(-1, 1), min_size=2, max_size=2),
    actions=st.lists(st.integers(0, 1), min_size=1, max_size=10),
)
def test_random_valid_states_run(busy, priority, last, actions):
    e = make(num_envs=2, seed=5)
    state = e.get_state()
    state["num_busy_servers"] = busy
    state["incoming_priority"] = priority
    state["last_action"] = last
    e.set_state(state)
    np.testing.assert_array_equal(
        e.obs["observation"][:, 0], [index(b, p) for b, p in zip(busy, priority, strict=True)]
    )
    for a in actions:
        step(e, a, 1 - a)
    assert ((e.states["num_busy_servers"] >= 0) & (e.states["num_busy_servers"] <= 10)).all()


@FUZZ
@given(
    field=st.sampled_from(["num_busy_servers", "incoming_priority", "last_action"]),
    value=st.integers(-(2**63), 2**63 - 1),
)
def test_random_invalid_states_raise_and_change_nothing(field, value):
    e = make(num_envs=2, seed=1)
    bad = e.get_state()
    if field == "num_busy_servers" and 0 <= value <= 10:
        value = 11 + value
    elif field == "incoming_priority" and value in PRIORITIES:
        value = value + 1 if value != 1 else 0
    elif field == "last_action" and -1 <= value <= 1:
        value = 2
    bad[field][1] = value
    assert_refused(e, bad)


# -- frames and faces --------------------------------------------------------------------------


def test_frames_mark_the_state_by_the_last_action():
    e = make()
    put(e, busy=3, priority=4)
    frame = e.render(0)
    assert frame.shape == (4, 11, 3) and frame.dtype == np.uint8
    want = np.full((4, 11, 3), 255, dtype=np.uint8)
    want[2, 3] = (0, 0, 0)  # before any action: black
    np.testing.assert_array_equal(frame, want)
    for action, color in ((ACCEPT, (0, 1, 0)), (REJECT, (1, 0, 0))):
        step(e, action)
        row = PRIORITIES.index(int(e.states["incoming_priority"][0]))
        column = int(e.states["num_busy_servers"][0])
        want = np.full((4, 11, 3), 255, dtype=np.uint8)
        want[row, column] = color  # csuite writes 1, not 255, in the action's channel
        np.testing.assert_array_equal(e.render(0), want)
    assert make(num_servers=2).render(0).shape == (4, 3, 3)


def test_text_frame():
    e = make()
    put(e, busy=7, priority=8, last_action=ACCEPT)
    assert e.render(0, "ansi") == "busy 7/10 priority 8 last action accept"


def test_gymnasium_vector_env_runs_and_never_ends():
    """Always accepting: on average about 0.6 servers free per step, each worth 3.75 on average."""
    space = gymnasium.spaces.Box(0, 43, (), np.int64)
    _, rewards = run_vector_env(
        "vecenv/AccessControl-v0",
        space,
        gymnasium.spaces.Discrete(2),
        policy=lambda obs, t: np.ones(8, dtype=np.int64),
    )
    assert (rewards.sum(axis=0) > 300).all()
