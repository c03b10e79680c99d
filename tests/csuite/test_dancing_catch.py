"""DancingCatch against csuite's rules: Catch's paddle, falling balls and scoring, spawns, the swap
schedule of the observation's permutation, the observation read through it, state checks, frames
and the gym face.

Expected values are derived by hand from csuite's ``dancing_catch.py``; random draws are checked
for their distributions, since the streams are not numpy's.
"""

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv

GAME = "dancing_catch"
STAY = 1
# A few board sizes (each compiles its own kernels): the smallest, narrow, wide, the default.
SIZES = [(2, 1), (3, 4), (5, 2), (10, 5)]
FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def make(num_envs=1, seed=0, **config):
    return vecenv.make(GAME, num_envs=num_envs, seed=seed, **config)


def put(engine, i=0, paddle_x=None, balls=None, shuffle=None, time=None):
    """Set episode i's paddle column, {row: column} balls, permutation and time since a swap."""
    record = engine.get_state(i)
    if paddle_x is not None:
        record["paddle_x"] = paddle_x
    if balls is not None:
        record["balls"][:] = -1
        for row, column in balls.items():
            record["balls"][row] = column
    if shuffle is not None:
        record["shuffle_idx"] = shuffle
    if time is not None:
        record["time_since_swap"] = time
    engine.set_state(record, i)


def balls_of(engine, i=0):
    return {r: int(c) for r, c in enumerate(engine.states["balls"][i]) if c != -1}


def board(rows, columns, paddle_x, balls):
    cells = np.zeros((rows, columns), dtype=np.int64)
    cells[rows - 1, paddle_x] = 1
    for row, column in balls.items():
        cells[row, column] = 1
    return cells.ravel()


def step(engine, *actions):
    obs, rewards, terminated, truncated = engine.step(np.array(actions, dtype=np.int64))
    assert not terminated.any() and not truncated.any()
    return obs["board"][:, 0], rewards[:, 0]


# -- start -------------------------------------------------------------------------------------


def test_start_state_and_observation():
    e = make(num_envs=6, seed=3)
    s = e.get_state()
    assert (s["paddle_x"] == 2).all() and (s["paddle_y"] == 9).all()
    assert (s["shuffle_idx"] == np.arange(50)).all()
    assert (s["time_since_swap"] == 0).all()
    assert (s["balls"][:, 1:] == -1).all() and (
        (s["balls"][:, 0] >= 0) & (s["balls"][:, 0] < 5)
    ).all()
    for i in range(6):
        want = board(10, 5, 2, {0: int(s["balls"][i, 0])})
        np.testing.assert_array_equal(e.obs["board"][i, 0], want)


def test_other_sizes():
    e = make(num_envs=2, rows=3, columns=7)
    assert e.obs["board"].shape == (2, 1, 21)
    assert e.states["shuffle_idx"].shape == (2, 21)
    assert (e.states["paddle_x"] == 3).all() and (e.states["paddle_y"] == 2).all()


def test_first_ball_column_is_uniform():
    e = make(num_envs=5000, seed=12)
    counts = np.bincount(e.states["balls"][:, 0], minlength=5)
    assert counts.size == 5 and (np.abs(counts - 1000) < 150).all(), counts


# -- catch's rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "start, action, end",
    [(2, 0, 1), (2, 1, 2), (2, 2, 3), (0, 0, 0), (0, 2, 1), (4, 2, 4), (4, 0, 3)],
)
def test_paddle_moves_and_is_clipped(start, action, end):
    e = make(spawn_probability=0.0)
    put(e, paddle_x=start, balls={})
    step(e, action)
    assert e.states["paddle_x"][0] == end


@pytest.mark.parametrize(
    "ball, paddle, action, reward",
    [(2, 2, STAY, 1.0), (2, 3, STAY, -1.0), (3, 2, 2, 1.0), (1, 2, 0, 1.0), (2, 2, 0, -1.0)],
)
def test_ball_reaching_the_paddle_row_scores_after_the_paddle_moves(ball, paddle, action, reward):
    e = make(spawn_probability=0.0)
    put(e, paddle_x=paddle, balls={8: ball, 3: 4})
    obs, rewards = step(e, action)
    assert rewards[0] == reward
    assert balls_of(e) == {4: 4}  # the scored ball left; the other fell straight down
    assert obs[0][45:50].sum() == 1


def test_balls_fall_straight_down_and_only_landings_score():
    e = make(spawn_probability=0.0)
    put(e, paddle_x=0, balls={0: 1, 4: 3, 7: 0})
    _, rewards = step(e, STAY)
    assert rewards[0] == 0.0 and balls_of(e) == {1: 1, 5: 3, 8: 0}
    _, rewards = step(e, STAY)
    assert rewards[0] == 1.0 and balls_of(e) == {2: 1, 6: 3}


def test_spawns_follow_the_probability_and_uniform_columns():
    n, p = 4000, 0.3
    e = make(num_envs=n, seed=5, spawn_probability=p)
    counts = np.zeros(5, dtype=np.int64)
    spawned = 0
    for _ in range(5):
        step(e, *([STAY] * n))
        top = e.states["balls"][:, 0]
        spawned += (top != -1).sum()
        counts += np.bincount(top[top != -1], minlength=5)
    assert abs(spawned - p * 5 * n) < 400, spawned
    assert (np.abs(counts - spawned / 5) < 250).all(), counts
    always = make(num_envs=2, spawn_probability=1.0)
    never = make(num_envs=2, spawn_probability=0.0)
    for _ in range(10):
        step(always, STAY, STAY)
        step(never, STAY, STAY)
        assert (always.states["balls"][:, 0] != -1).all()
    assert (never.states["balls"] == -1).all()


# -- the observation's permutation -------------------------------------------------------------


def test_observation_reads_the_board_through_shuffle_idx():
    e = make(spawn_probability=0.0)
    shuffle = np.arange(50)[::-1].copy()
    put(e, paddle_x=1, balls={2: 3}, shuffle=shuffle)
    flat = board(10, 5, 1, {2: 3})
    np.testing.assert_array_equal(e.obs["board"][0, 0], flat[shuffle])
    # The paddle's cell 46 shows at entry 3, the ball's cell 13 at entry 36.
    assert np.flatnonzero(e.obs["board"][0, 0]).tolist() == [3, 36]
    obs, _ = step(e, 2)
    np.testing.assert_array_equal(obs[0], board(10, 5, 2, {3: 3})[shuffle])


def test_repeated_indices_show_the_same_cell_twice():
    """csuite accepts any indices into the board, not only permutations."""
    e = make(spawn_probability=0.0)
    shuffle = np.full(50, 47)
    put(e, paddle_x=2, balls={}, shuffle=shuffle)
    assert (e.obs["board"][0, 0] == 1).all()


def test_swap_happens_every_swap_every_steps():
    e = make(num_envs=300, seed=2, spawn_probability=0.0, swap_every=3)
    ident = np.arange(50)
    for k in (1, 2):
        step(e, *([STAY] * 300))
        assert (e.states["time_since_swap"] == k).all()
        assert (e.states["shuffle_idx"] == ident).all()
    step(e, *([STAY] * 300))
    assert (e.states["time_since_swap"] == 0).all()
    changed = (e.states["shuffle_idx"] != ident).sum(axis=1)
    # Two entries swapped, or none when both draws named the same entry (1 in 50).
    assert set(changed.tolist()) <= {0, 2}
    assert (changed == 2).mean() > 0.9
    for idx in e.states["shuffle_idx"]:
        assert sorted(idx.tolist()) == ident.tolist()
        moved = np.flatnonzero(idx != ident)
        if moved.size:
            a, b = moved
            assert idx[a] == b and idx[b] == a


def test_the_swapping_step_observes_through_the_new_permutation():
    e = make(num_envs=50, seed=8, spawn_probability=0.0, swap_every=1)
    for i in range(50):
        put(e, i, paddle_x=0, balls={4: 2})
    obs, _ = step(e, *([STAY] * 50))
    flat = board(10, 5, 0, {5: 2})
    for i in range(50):
        np.testing.assert_array_equal(obs[i], flat[e.states["shuffle_idx"][i]])


def test_swap_time_past_the_period_uses_csuite_modulo():
    e = make(spawn_probability=0.0, swap_every=4)
    put(e, time=5)
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 6
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 7
    step(e, STAY)
    assert e.states["time_since_swap"][0] == 0


def test_swapped_entries_are_uniform_and_independent():
    n, cells = 20000, 50
    e = make(num_envs=n, seed=13, spawn_probability=0.0, swap_every=1)
    step(e, *([STAY] * n))
    ident = np.arange(cells)
    moved = e.states["shuffle_idx"] != ident
    same = (moved.sum(axis=1) == 0).mean()
    # Both draws alike with probability 1/50.
    assert abs(same - 1 / cells) < 0.006, same
    # Each entry takes part in a real swap with probability 2/50 * 49/50 (about 784 of 20000,
    # standard deviation about 27).
    per_entry = moved.sum(axis=0)
    want = n * 2 / cells * (cells - 1) / cells
    assert (np.abs(per_entry - want) < 160).all(), per_entry
    # The pairs: no preference for near or far entries.
    pairs = np.sort(np.array([np.flatnonzero(m) for m in moved if m.any()]), axis=1)
    gaps = pairs[:, 1] - pairs[:, 0]
    # For two distinct uniform entries of 50 the mean gap is 51/3 = 17.
    assert abs(gaps.mean() - 17.0) < 0.6, gaps.mean()


def test_default_schedule_keeps_the_identity():
    e = make(num_envs=3, seed=2)
    for _ in range(200):
        step(e, 0, 1, 2)
    assert (e.states["shuffle_idx"] == np.arange(50)).all()
    assert (e.states["time_since_swap"] == 200).all()


# -- state checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("paddle_x", -1, "paddle should be positioned at the bottom"),
        ("paddle_x", 5, "paddle should be positioned at the bottom"),
        ("paddle_y", 0, "paddle should be positioned at the bottom"),
        ("balls", (3, 5), "row range \\[0, 10\\) and column range \\[0, 5\\)"),
        ("balls", (0, -7), "column range"),
        ("balls", (9, 0), "paddle's row"),
        ("shuffle_idx", (4, 50), "shuffle_idx"),
        ("shuffle_idx", (0, -1), "shuffle_idx"),
        ("time_since_swap", -3, "time_since_swap"),
    ],
)
def test_invalid_states_are_refused_and_change_nothing(field, value, message):
    e = make(num_envs=3, seed=4)
    step(e, 0, 1, 2)
    before = e.get_state()
    obs = e.obs["board"].copy()
    bad = e.get_state()
    if field in ("balls", "shuffle_idx"):
        bad[field][2, value[0]] = value[1]
    else:
        bad[field][2] = value
    with pytest.raises(ValueError, match=message):
        e.set_state(bad)
    np.testing.assert_array_equal(e.get_state(), before)
    np.testing.assert_array_equal(e.obs["board"], obs)


# -- properties --------------------------------------------------------------------------------


def check_invariants(engine):
    rows, columns = engine.config["rows"], engine.config["columns"]
    s = engine.states
    assert ((s["paddle_x"] >= 0) & (s["paddle_x"] < columns)).all()
    assert ((s["balls"] >= -1) & (s["balls"] < columns)).all()
    assert (s["balls"][:, rows - 1] == -1).all()
    assert (np.sort(s["shuffle_idx"], axis=1) == np.arange(rows * columns)).all()
    assert (s["time_since_swap"] < engine.config["swap_every"]).all()
    for i in range(engine.num_envs):
        balls = {r: int(c) for r, c in enumerate(s["balls"][i]) if c != -1}
        flat = board(rows, columns, int(s["paddle_x"][i]), balls)
        np.testing.assert_array_equal(engine.obs["board"][i, 0], flat[s["shuffle_idx"][i]])


@FUZZ
@given(
    size=st.sampled_from(SIZES),
    p=st.sampled_from([0.0, 0.3, 1.0]),
    swap_every=st.integers(1, 4),
    seed=st.integers(0, 2**32),
    actions=st.lists(st.integers(0, 2), min_size=1, max_size=40),
)
def test_random_action_sequences_keep_the_state_valid(size, p, swap_every, seed, actions):
    rows, columns = size
    e = make(
        num_envs=2,
        seed=seed,
        rows=rows,
        columns=columns,
        spawn_probability=p,
        swap_every=swap_every,
    )
    for a in actions:
        _, rewards = step(e, a, 2 - a)
        assert np.isin(rewards, (-1.0, 0.0, 1.0)).all()
        check_invariants(e)


@FUZZ
@given(data=st.data())
def test_random_valid_states_run(data):
    e = make(num_envs=2, seed=9, swap_every=2)
    state = e.get_state()
    for i in range(2):
        state["paddle_x"][i] = data.draw(st.integers(0, 4))
        state["balls"][i] = data.draw(st.lists(st.integers(-1, 4), min_size=9, max_size=9)) + [-1]
        state["shuffle_idx"][i] = data.draw(st.lists(st.integers(0, 49), min_size=50, max_size=50))
        state["time_since_swap"][i] = data.draw(st.integers(0, 2**40))
    e.set_state(state)
    for i in range(2):
        balls = {r: int(c) for r, c in enumerate(state["balls"][i]) if c != -1}
        flat = board(10, 5, int(state["paddle_x"][i]), balls)
        np.testing.assert_array_equal(e.obs["board"][i, 0], flat[state["shuffle_idx"][i]])
    for a in data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=10)):
        step(e, a, a)
    s = e.states
    assert (s["balls"][:, 9] == -1).all()
    assert ((s["shuffle_idx"] >= 0) & (s["shuffle_idx"] < 50)).all()


@FUZZ
@given(
    field=st.sampled_from(["paddle_x", "paddle_y", "balls", "shuffle_idx", "time"]),
    value=st.integers(-(2**63), 2**63 - 1),
    index=st.integers(0, 49),
)
def test_random_invalid_states_raise_and_change_nothing(field, value, index):
    e = make(num_envs=2, seed=1)
    before = e.get_state()
    bad = e.get_state()
    if field == "paddle_x":
        bad["paddle_x"][1] = value if not 0 <= value < 5 else -1 - value
    elif field == "paddle_y":
        bad["paddle_y"][1] = value if value != 9 else 10
    elif field == "balls":
        row = index % 10
        if row == 9:
            bad["balls"][1, row] = value if value != -1 else 0
        else:
            bad["balls"][1, row] = value if not -1 <= value < 5 else 6 + value
    elif field == "shuffle_idx":
        bad["shuffle_idx"][1, index] = value if not 0 <= value < 50 else 50 + value
    else:
        bad["time_since_swap"][1] = min(value, -1)
    with pytest.raises(ValueError):
        e.set_state(bad)
    np.testing.assert_array_equal(e.get_state(), before)


# -- frames and faces --------------------------------------------------------------------------


def test_frame_is_the_shuffled_observation_as_a_board():
    e = make(spawn_probability=0.0)
    shuffle = np.arange(50)
    shuffle[[0, 46]] = shuffle[[46, 0]]  # the paddle's cell shows in the top-left corner
    put(e, paddle_x=1, balls={3: 4}, shuffle=shuffle)
    frame = e.render(0)
    assert frame.shape == (10, 5, 3) and frame.dtype == np.uint8
    cells = np.zeros((10, 5), dtype=np.uint8)
    cells[0, 0] = cells[3, 4] = 1
    for channel in range(3):
        np.testing.assert_array_equal(frame[:, :, channel], cells * 255)
    assert e.render(0, "ansi").splitlines()[:4] == ["#....", ".....", ".....", "....#"]


def test_gymnasium_vector_env_runs_and_never_ends():
    env = gymnasium.make_vec("vecenv/DancingCatch-v0", num_envs=8)
    assert env.single_observation_space == gymnasium.spaces.Box(0, 1, (50,), np.int64)
    assert env.single_action_space == gymnasium.spaces.Discrete(3)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8, 50) and obs.dtype == np.int64
    env.action_space.seed(0)
    total = np.zeros(8)
    for _ in range(300):
        obs, rewards, terminated, truncated, _ = env.step(env.action_space.sample())
        assert not terminated.any() and not truncated.any()
        assert env.single_observation_space.contains(obs[0])
        total += rewards
    assert (total != 0).any()
    env.close()
