"""What WindyCatch and DancingCatch share with csuite's Catch, checked on both: the start, the
paddle, spawns, state checks, random input and the gym face. Each game's own rules (the wind, the
shuffled observation) are tested in its own file.

Expected values are derived by hand from csuite's ``windy_catch.py`` and ``dancing_catch.py``;
random draws are checked for their distributions, since the streams are not numpy's.
"""

from collections.abc import Callable
from dataclasses import dataclass

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv

from .helpers import (
    FUZZ,
    SIZES,
    STAY,
    assert_refused,
    balls_in,
    dancing_observation,
    one_hot,
    put,
    run_single_env,
    run_vector_env,
    step,
    windy_observation,
)


@dataclass(frozen=True)
class Variant:
    game: str
    gym_id: str
    observation_size: Callable  # (rows, columns) -> the observation's length
    period: str  # the configuration's steps between changes
    clock: str  # the state's steps since the last change
    start: Callable  # (rows, columns) -> the start values of the game's own fields
    observation: Callable  # (rows, columns, record) -> the observation the record shows
    valid: Callable  # (states) -> the game's own fields are valid (asserts)
    reachable: Callable  # (states, rows, columns) -> as the rules leave them from a start (asserts)
    draw: Callable  # (data) -> valid values of the game's own fields, for a 10 x 5 board


def ids(value):
    """Test ids: a variant by its game's name, other values as pytest names them."""
    return value.game if isinstance(value, Variant) else None


def _windy_valid(s):
    assert (s["wind_direction"].sum(axis=1) == 1).all()


def _dancing_valid(s):
    assert ((s["shuffle_idx"] >= 0) & (s["shuffle_idx"] < 50)).all()


def _dancing_reachable(s, rows, columns):
    assert (np.sort(s["shuffle_idx"], axis=1) == np.arange(rows * columns)).all()


WINDY = Variant(
    game="windy_catch",
    gym_id="vecenv/WindyCatch-v0",
    observation_size=lambda rows, columns: rows * columns + 3,
    period="change_every",
    clock="time_since_wind_change",
    start=lambda rows, columns: {"wind_direction": one_hot(0), "time_since_wind_change": 0},
    observation=lambda rows, columns, record: windy_observation(
        rows,
        columns,
        int(record["paddle_x"]),
        balls_in(record["balls"]),
        int(np.argmax(record["wind_direction"])),
    ),
    valid=_windy_valid,
    reachable=lambda s, rows, columns: _windy_valid(s),
    draw=lambda data: {
        "wind_direction": one_hot(data.draw(st.integers(0, 2))),
        "time_since_wind_change": data.draw(st.integers(0, 2**40)),
    },
)
DANCING = Variant(
    game="dancing_catch",
    gym_id="vecenv/DancingCatch-v0",
    observation_size=lambda rows, columns: rows * columns,
    period="swap_every",
    clock="time_since_swap",
    start=lambda rows, columns: {"shuffle_idx": np.arange(rows * columns), "time_since_swap": 0},
    observation=lambda rows, columns, record: dancing_observation(
        rows, columns, int(record["paddle_x"]), balls_in(record["balls"]), record["shuffle_idx"]
    ),
    valid=_dancing_valid,
    reachable=_dancing_reachable,
    draw=lambda data: {
        "shuffle_idx": data.draw(st.lists(st.integers(0, 49), min_size=50, max_size=50)),
        "time_since_swap": data.draw(st.integers(0, 2**40)),
    },
)
VARIANTS = [WINDY, DANCING]


def make(variant, num_envs=1, seed=0, **config):
    return vecenv.make(variant.game, num_envs=num_envs, seed=seed, **config)


# -- start -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_start_state_and_observation(variant):
    e = make(variant, num_envs=6, seed=3)
    s = e.get_state()
    assert (s["paddle_x"] == 2).all() and (s["paddle_y"] == 9).all()
    for name, value in variant.start(10, 5).items():
        assert (s[name] == value).all()
    assert (s["balls"][:, 1:] == -1).all() and (
        (s["balls"][:, 0] >= 0) & (s["balls"][:, 0] < 5)
    ).all()
    for i in range(6):
        balls = [int(s["balls"][i, 0])] + [-1] * 9
        record = dict(variant.start(10, 5), paddle_x=2, balls=balls)
        np.testing.assert_array_equal(e.obs["board"][i, 0], variant.observation(10, 5, record))


@pytest.mark.parametrize("variant, rows, columns", [(WINDY, 4, 8), (DANCING, 3, 7)], ids=ids)
def test_start_on_other_sizes(variant, rows, columns):
    e = make(variant, num_envs=2, rows=rows, columns=columns)
    assert e.obs["board"].shape == (2, 1, variant.observation_size(rows, columns))
    assert (e.states["paddle_x"] == columns // 2).all() and (e.states["paddle_y"] == rows - 1).all()
    assert e.states["balls"].shape == (2, rows)
    for name, value in variant.start(rows, columns).items():
        assert e.states[name].shape == (2, *np.shape(value))
        assert (e.states[name] == value).all()


@pytest.mark.parametrize("variant, seed", [(WINDY, 11), (DANCING, 12)], ids=ids)
def test_first_ball_column_is_uniform(variant, seed):
    e = make(variant, num_envs=5000, seed=seed)
    counts = np.bincount(e.states["balls"][:, 0], minlength=5)
    assert counts.size == 5
    # 1000 expected per column, standard deviation about 28.
    assert (np.abs(counts - 1000) < 150).all(), counts


# -- Catch's rules -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
@pytest.mark.parametrize(
    "start, action, end",
    [(2, 0, 1), (2, 1, 2), (2, 2, 3), (0, 0, 0), (0, 2, 1), (4, 2, 4), (4, 0, 3)],
)
def test_paddle_moves_and_is_clipped(variant, start, action, end):
    e = make(variant, spawn_probability=0.0)
    put(e, paddle_x=start, balls={})
    step(e, action)
    assert e.states["paddle_x"][0] == end


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_spawn_probability_one_adds_a_ball_every_step_and_zero_never(variant):
    e = make(variant, num_envs=2, spawn_probability=1.0)
    for _ in range(20):
        step(e, STAY, STAY)
        assert (e.states["balls"][:, 0] != -1).all()
        assert (e.states["balls"][:, :9] != -1).all() or e.states["step"][0] < 9
    z = make(variant, num_envs=3, spawn_probability=0.0)
    for k in range(12):
        step(z, STAY, STAY, STAY)
        # The start's ball has landed after 9 steps; nothing comes after it.
        assert (z.states["balls"] == -1).all() or k < 9


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_spawns_follow_the_probability_and_uniform_columns(variant):
    n, p = 4000, 0.3
    e = make(variant, num_envs=n, seed=5, spawn_probability=p)
    counts = np.zeros(5, dtype=np.int64)
    spawned = 0
    for _ in range(5):
        step(e, *([STAY] * n))
        top = e.states["balls"][:, 0]
        spawned += (top != -1).sum()
        counts += np.bincount(top[top != -1], minlength=5)
    trials = 5 * n
    # Mean 6000, standard deviation about 65.
    assert abs(spawned - p * trials) < 400, spawned
    assert (np.abs(counts - spawned / 5) < 250).all(), counts


@pytest.mark.parametrize(
    "variant, steps, actions",
    [(WINDY, 300, (0, 1, 2, 1)), (DANCING, 200, (0, 1, 2))],
    ids=ids,
)
def test_default_schedule_keeps_the_start(variant, steps, actions):
    e = make(variant, num_envs=len(actions), seed=2)
    for _ in range(steps):
        step(e, *actions)
    start = variant.start(10, 5)
    for name, value in start.items():
        assert (e.states[name] == (steps if name == variant.clock else value)).all()


# -- state checks ------------------------------------------------------------------------------

PADDLE = "paddle should be positioned at the bottom"
# Spoiled boards: a field's value, or (row, column) of a ball, and the message's words.
BOARD_CASES = [
    ("paddle_x", -1, PADDLE),
    ("paddle_x", 5, PADDLE),
    ("paddle_y", 8, PADDLE),
    ("paddle_y", 0, PADDLE),
    ("balls", (3, 5), "row range \\[0, 10\\) and column range \\[0, 5\\)"),
    ("balls", (3, -2), "column range"),
    ("balls", (0, -7), "column range"),
    ("balls", (9, 2), "paddle's row"),
    ("balls", (9, 0), "paddle's row"),
]
# Each game's own spoiled fields (entry, value for the arrays) and the episode its cases spoil.
OWN_CASES = {
    "windy_catch": [
        ("wind_direction", (0, 0, 0), "exactly one entry of wind_direction"),
        ("wind_direction", (1, 0, 1), "exactly one entry of wind_direction"),
        ("wind_direction", (2, 0, 0), "wind_direction"),
        ("time_since_wind_change", -1, "time_since_wind_change"),
    ],
    "dancing_catch": [
        ("shuffle_idx", (4, 50), "shuffle_idx"),
        ("shuffle_idx", (0, -1), "shuffle_idx"),
        ("time_since_swap", -3, "time_since_swap"),
    ],
}
SPOILED = {"windy_catch": 1, "dancing_catch": 2}


@pytest.mark.parametrize(
    "variant, field, value, message",
    [(v, *case) for v in VARIANTS for case in BOARD_CASES + OWN_CASES[v.game]],
    ids=ids,
)
def test_invalid_states_are_refused_and_change_nothing(variant, field, value, message):
    e = make(variant, num_envs=3, seed=4)
    step(e, 0, 1, 2)
    bad = e.get_state()
    if field in ("balls", "shuffle_idx"):
        bad[field][SPOILED[variant.game], value[0]] = value[1]
    else:
        bad[field][SPOILED[variant.game]] = value
    assert_refused(e, bad, match=message)


def _spoil_wind(bad, i, value, index):
    bad["wind_direction"][i] = (value % 256, 1, 1)


def _spoil_shuffle(bad, i, value, index):
    bad["shuffle_idx"][i, index] = value if not 0 <= value < 50 else 50 + value


@pytest.mark.parametrize(
    "variant, i, spoil", [(WINDY, 0, _spoil_wind), (DANCING, 1, _spoil_shuffle)], ids=ids
)
@FUZZ
@given(
    field=st.sampled_from(["paddle_x", "paddle_y", "balls", "own", "time"]),
    value=st.integers(-(2**63), 2**63 - 1),
    index=st.integers(0, 49),
)
def test_random_invalid_states_raise_and_change_nothing(variant, i, spoil, field, value, index):
    """Episode ``i`` spoiled: one field out of range, or ``spoil`` spoiling the game's own."""
    e = make(variant, num_envs=2, seed=1)
    bad = e.get_state()
    if field == "paddle_x":
        bad["paddle_x"][i] = value if not 0 <= value < 5 else -1 - value
    elif field == "paddle_y":
        bad["paddle_y"][i] = value if value != 9 else 10
    elif field == "balls":
        row = index % 10
        if row == 9:
            bad["balls"][i, row] = value if value != -1 else 0
        else:
            bad["balls"][i, row] = value if not -1 <= value < 5 else 6 + value
    elif field == "own":
        spoil(bad, i, value, index)
    else:
        bad[variant.clock][i] = min(value, -1)
    assert_refused(e, bad)


# -- properties --------------------------------------------------------------------------------


def check_invariants(variant, engine):
    rows, columns = engine.config["rows"], engine.config["columns"]
    s = engine.states
    assert ((s["paddle_x"] >= 0) & (s["paddle_x"] < columns)).all()
    assert (s["paddle_y"] == rows - 1).all()
    assert ((s["balls"] >= -1) & (s["balls"] < columns)).all()
    assert (s["balls"][:, rows - 1] == -1).all()
    variant.reachable(s, rows, columns)
    assert (s[variant.clock] < engine.config[variant.period]).all()
    for i in range(engine.num_envs):
        want = variant.observation(rows, columns, s[i])
        np.testing.assert_array_equal(engine.obs["board"][i, 0], want)


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
@FUZZ
@given(
    size=st.sampled_from(SIZES),
    p=st.sampled_from([0.0, 0.3, 1.0]),
    period=st.integers(1, 4),
    seed=st.integers(0, 2**32),
    actions=st.lists(st.integers(0, 2), min_size=1, max_size=40),
)
def test_random_action_sequences_keep_the_state_valid(variant, size, p, period, seed, actions):
    rows, columns = size
    config = {"rows": rows, "columns": columns, "spawn_probability": p, variant.period: period}
    e = make(variant, num_envs=2, seed=seed, **config)
    for a in actions:
        _, rewards = step(e, a, 2 - a)
        assert np.isin(rewards, (-1.0, 0.0, 1.0)).all()
        check_invariants(variant, e)


@pytest.mark.parametrize("variant, period", [(WINDY, 3), (DANCING, 2)], ids=ids)
@FUZZ
@given(data=st.data())
def test_random_valid_states_run(variant, period, data):
    e = make(variant, num_envs=2, seed=9, **{variant.period: period})
    state = e.get_state()
    for i in range(2):
        state["paddle_x"][i] = data.draw(st.integers(0, 4))
        state["balls"][i] = data.draw(st.lists(st.integers(-1, 4), min_size=9, max_size=9)) + [-1]
        for name, value in variant.draw(data).items():
            state[name][i] = value
    e.set_state(state)
    for i in range(2):
        np.testing.assert_array_equal(e.obs["board"][i, 0], variant.observation(10, 5, state[i]))
    for a in data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=10)):
        step(e, a, a)
    s = e.states
    assert (s["balls"][:, 9] == -1).all()
    variant.valid(s)


# -- faces -------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=ids)
def test_gymnasium_vector_env_runs_and_never_ends(variant):
    size = variant.observation_size(10, 5)
    space = gymnasium.spaces.Box(0, 1, (size,), np.int64)
    _, rewards = run_vector_env(variant.gym_id, space, gymnasium.spaces.Discrete(3))
    assert np.isin(rewards, (-1.0, 0.0, 1.0)).all()
    assert (rewards.sum(axis=0) != 0).any()
    run_single_env(variant.gym_id, 20)
