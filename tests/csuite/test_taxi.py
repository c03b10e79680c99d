"""csuite's continuing Taxi: walls, pickup and drop-off rewards, passenger respawns and their
statistics, the observation index, random input, and the batched faces (never terminated).

Expected values come from csuite's map and rules written out by hand below, and from the cases of
csuite's own taxi_test.py."""

import itertools
import math

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv
from vecenv import registry

from .helpers import (
    FUZZ,
    advanced,
    assert_refused,
    chi_square,
    run_single_env,
    run_vector_env,
)

NORTH, WEST, SOUTH, EAST, PICKUP, DROPOFF = range(6)
IN_TAXI = 4
# The coloured squares as (x, y), (0, 0) the top-left: Red, Green, Yellow, Blue.
SQUARES = [(0, 0), (4, 0), (0, 4), (3, 4)]
# csuite's map:      |R: | : :G|
#                    | : | : : |
#                    | : : : : |
#                    | | : | : |
#                    |Y| : |B: |
# each wall separates the two squares of one pair.
WALLS = {
    frozenset({(1, 0), (2, 0)}),
    frozenset({(1, 1), (2, 1)}),
    frozenset({(0, 3), (1, 3)}),
    frozenset({(0, 4), (1, 4)}),
    frozenset({(2, 3), (3, 3)}),
    frozenset({(2, 4), (3, 4)}),
}
MOVES = {NORTH: (0, -1), WEST: (-1, 0), SOUTH: (0, 1), EAST: (1, 0)}
FIELDS = ("taxi_x", "taxi_y", "passenger_loc", "destination")


def expected_move(x, y, action):
    dx, dy = MOVES[action]
    nx, ny = x + dx, y + dy
    if not (0 <= nx < 5 and 0 <= ny < 5) or frozenset({(x, y), (nx, ny)}) in WALLS:
        return x, y
    return nx, ny


def index(x, y, passenger, destination):
    """csuite's lookup table: enumerate(product(range(5), range(5), range(5), range(4)))."""
    return ((x * 5 + y) * 5 + passenger) * 4 + destination


def put(engine, rows, idx=None):
    """Set (taxi_x, taxi_y, passenger_loc, destination) of the episodes at ``idx``."""
    where = np.arange(engine.num_envs) if idx is None else np.atleast_1d(idx)
    state = engine.get_state(where)
    rows = np.asarray(rows, dtype=np.int64).reshape(len(where), 4)
    for k, name in enumerate(FIELDS):
        state[name] = rows[:, k]
    engine.set_state(state, where)
    return state


def fields(engine):
    s = engine.get_state()
    return np.stack([s[name] for name in FIELDS], axis=1)


def chi_square_sf(x, df):
    """P(chi-square with ``df`` degrees of freedom > x): the regularized upper gamma Q(df/2, x/2)
    by its power series (enough for the small values used here)."""
    a, z = df / 2.0, x / 2.0
    term = total = 1.0 / a
    for n in range(1, 1000):
        term *= z / (a + n)
        total += term
        if term < total * 1e-16:
            break
    return 1.0 - math.exp(-z + a * math.log(z) - math.lgamma(a)) * total


# -- specification ---------------------------------------------------------------------------


def test_spec_is_csuites():
    spec = registry.get_spec("taxi")
    assert spec.configuration == {}
    (field,) = spec.observation
    assert field.name == "observation" and field.shape == () and field.dtype == np.int64
    assert int(field.low) == 0 and int(field.high) == 499
    assert spec.action.discrete and (spec.action.low[0], spec.action.high[0]) == (0, 5)
    assert spec.raw["csuite"]["name"] == "taxi"
    assert spec.raw["csuite"]["observation_name"] == "observation"
    assert spec.raw["csuite"]["action_name"] == "action"
    assert spec.gym == {"id": "Taxi-v0"}
    assert vecenv.make("Taxi-v0").name == "taxi"


# -- movement --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x,y,action,can_move",
    [  # csuite's taxi_test.test_one_movement_step
        (2, 2, NORTH, True),
        (2, 0, NORTH, False),
        (2, 2, SOUTH, True),
        (2, 4, SOUTH, False),
        (1, 4, EAST, True),
        (1, 1, EAST, False),
        (2, 4, WEST, True),
        (2, 1, WEST, False),
    ],
)
def test_csuites_movement_cases(x, y, action, can_move):
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    put(engine, [x, y, 0, 2])
    _, rewards, terminated, truncated = engine.step(np.array([action]))
    dx, dy = MOVES[action] if can_move else (0, 0)
    np.testing.assert_array_equal(fields(engine)[0], [x + dx, y + dy, 0, 2])
    assert rewards[0, 0] == 0.0 and not terminated[0] and not truncated[0]


def test_every_move_from_every_square():
    """All 25 squares x 4 directions in one batch: a move happens unless it leaves the grid or
    crosses a wall; it never changes the passenger or destination, and costs nothing."""
    cases = [(x, y, a) for x in range(5) for y in range(5) for a in MOVES]
    engine = vecenv.make("taxi", num_envs=len(cases), seed=0)
    put(engine, [[x, y, k % 4, (k * 3) % 4] for k, (x, y, _) in enumerate(cases)])
    obs, rewards, terminated, truncated = engine.step(np.array([a for _, _, a in cases]))
    got = fields(engine)
    for k, (x, y, a) in enumerate(cases):
        want = (*expected_move(x, y, a), k % 4, (k * 3) % 4)
        assert tuple(got[k]) == want, (x, y, a)
        assert obs["observation"][k, 0] == index(*want)
    assert (rewards == 0).all() and not terminated.any() and not truncated.any()


@pytest.mark.parametrize("pair", sorted(tuple(sorted(w)) for w in WALLS))
def test_each_wall_blocks_both_ways(pair):
    (x0, y), (x1, _) = pair
    assert x1 == x0 + 1
    engine = vecenv.make("taxi", num_envs=2, seed=0)
    put(engine, [[x0, y, 0, 0], [x1, y, 0, 0]])
    engine.step(np.array([EAST, WEST]))
    np.testing.assert_array_equal(fields(engine)[:, :2], [[x0, y], [x1, y]])


def test_open_edges_in_the_walled_rows_let_the_taxi_through():
    # Row 0: 0 <-> 1 and 2 <-> 3 <-> 4 are open; row 3: 1 <-> 2 and 3 <-> 4 are open.
    engine = vecenv.make("taxi", num_envs=4, seed=0)
    put(engine, [[0, 0, 0, 0], [2, 0, 0, 0], [1, 3, 0, 0], [4, 3, 0, 0]])
    engine.step(np.array([EAST, EAST, EAST, WEST]))
    np.testing.assert_array_equal(fields(engine)[:, :2], [[1, 0], [3, 0], [2, 3], [3, 3]])


def test_driving_round_the_walls():
    """From Red to Blue: south twice, east three times, south twice (csuite's test route)."""
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    put(engine, [0, 0, 0, 3])
    route = [PICKUP] + [SOUTH] * 2 + [EAST] * 3 + [SOUTH] * 2
    path = []
    for a in route:
        _, rewards, _, _ = engine.step(np.array([a]))
        assert rewards[0, 0] == 0.0
        path.append(tuple(fields(engine)[0, :2]))
    assert path == [(0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (3, 2), (3, 3), (3, 4)]
    _, rewards, _, _ = engine.step(np.array([DROPOFF]))
    assert rewards[0, 0] == 20.0


# -- pickup and drop-off ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "x,y,passenger,destination,action,reward,passenger_after",
    [
        # csuite's taxi_test.test_pickup_dropoff
        (0, 0, 0, 2, PICKUP, 0.0, IN_TAXI),
        (0, 1, 0, 2, PICKUP, -10.0, 0),
        (0, 1, 4, 2, PICKUP, -10.0, IN_TAXI),
        (2, 4, 4, 3, DROPOFF, -10.0, IN_TAXI),
        (3, 4, 3, 3, DROPOFF, -10.0, 3),
        # each coloured square picks up its own passenger only
        (4, 0, 1, 0, PICKUP, 0.0, IN_TAXI),
        (0, 4, 2, 1, PICKUP, 0.0, IN_TAXI),
        (3, 4, 3, 3, PICKUP, 0.0, IN_TAXI),
        (4, 0, 0, 0, PICKUP, -10.0, 0),
        (3, 4, 2, 0, PICKUP, -10.0, 2),
        # a pickup on the passenger's square with the passenger already aboard
        (0, 0, 4, 0, PICKUP, -10.0, IN_TAXI),
        # drop-off on a coloured square that is not the destination
        (0, 0, 4, 1, DROPOFF, -10.0, IN_TAXI),
        # drop-off at the destination with no passenger aboard (even standing on it)
        (0, 4, 2, 2, DROPOFF, -10.0, 2),
        (4, 0, 0, 1, DROPOFF, -10.0, 0),
    ],
)
def test_pickup_and_dropoff_rewards(x, y, passenger, destination, action, reward, passenger_after):
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    word = put(engine, [x, y, passenger, destination])["rng"][0]
    obs, rewards, terminated, _ = engine.step(np.array([action]))
    assert rewards[0, 0] == reward and not terminated[0]
    want = [x, y, passenger_after, destination]
    np.testing.assert_array_equal(fields(engine)[0], want)
    assert obs["observation"][0, 0] == index(*want)
    assert engine.get_state(0)["rng"] == word  # no draw without a delivery


@pytest.mark.parametrize("destination", range(4))
def test_delivery_pays_20_and_draws_a_new_passenger_and_destination(destination):
    x, y = SQUARES[destination]
    engine = vecenv.make("taxi", num_envs=64, seed=destination)
    words = put(engine, [[x, y, IN_TAXI, destination]] * 64)["rng"]
    obs, rewards, terminated, _ = engine.step(np.full(64, DROPOFF))
    assert (rewards == 20.0).all() and not terminated.any()
    after = engine.get_state()
    assert (after["taxi_x"] == x).all() and (after["taxi_y"] == y).all()
    assert ((after["passenger_loc"] >= 0) & (after["passenger_loc"] <= 3)).all()
    assert ((after["destination"] >= 0) & (after["destination"] <= 3)).all()
    # Exactly two draws: the passenger, then the destination.
    np.testing.assert_array_equal(after["rng"], advanced(words, 2))
    np.testing.assert_array_equal(obs["observation"][:, 0], index(*fields(engine).T))


def test_passenger_picked_up_at_its_destination_can_be_delivered_there():
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    put(engine, [3, 4, 3, 3])
    assert engine.step(np.array([PICKUP]))[1][0, 0] == 0.0
    assert engine.step(np.array([DROPOFF]))[1][0, 0] == 20.0


def test_respawns_are_uniform_and_independent():
    """4000 deliveries: (passenger, destination) uniform over the 16 pairs (chi-square, 15
    degrees of freedom, exceeded with probability < 1e-4); the passenger is never aboard."""
    n = 4000
    engine = vecenv.make("taxi", num_envs=n, seed=11)
    put(engine, [[3, 4, IN_TAXI, 3]] * n)
    engine.step(np.full(n, DROPOFF))
    s = engine.get_state()
    pairs = np.bincount(s["passenger_loc"] * 4 + s["destination"], minlength=16)
    assert pairs.size == 16
    assert chi_square_sf(chi_square(pairs), 15) > 1e-4
    assert chi_square_sf(chi_square(np.bincount(s["passenger_loc"], minlength=4)), 3) > 1e-4
    assert chi_square_sf(chi_square(np.bincount(s["destination"], minlength=4)), 3) > 1e-4
    # About a quarter of the new passengers wait where their destination is.
    same = (s["passenger_loc"] == s["destination"]).mean()
    assert abs(same - 0.25) < 4.5 * math.sqrt(0.25 * 0.75 / n)


def test_chi_square_helper():
    assert abs(chi_square_sf(7.814727903251178, 3) - 0.05) < 1e-9
    assert abs(chi_square_sf(30.577914166892498, 15) - 0.01) < 1e-9


# -- start -----------------------------------------------------------------------------------


def test_start_states_are_uniform():
    """Taxi uniform over 25 squares, passenger and destination over the 4 coloured squares."""
    n = 5000
    engine = vecenv.make("taxi", num_envs=n, seed=5)
    s = engine.get_state()
    squares = np.bincount(s["taxi_x"] * 5 + s["taxi_y"], minlength=25)
    assert squares.size == 25 and chi_square_sf(chi_square(squares), 24) > 1e-4
    for name in ("passenger_loc", "destination"):
        counts = np.bincount(s[name], minlength=4)
        assert counts.size == 4 and chi_square_sf(chi_square(counts), 3) > 1e-4
    pairs = np.bincount(s["passenger_loc"] * 4 + s["destination"], minlength=16)
    assert chi_square_sf(chi_square(pairs), 15) > 1e-4
    assert (s["step"] == 0).all()
    np.testing.assert_array_equal(engine.obs["observation"][:, 0], index(*fields(engine).T))
    # Four draws per start: a reset restarts from the next ones.
    words = s["rng"]
    engine.reset()
    np.testing.assert_array_equal(engine.get_state()["rng"], advanced(words, 4))


# -- observation -----------------------------------------------------------------------------


def test_observation_index_of_every_state():
    states = list(itertools.product(range(5), range(5), range(5), range(4)))
    engine = vecenv.make("taxi", num_envs=len(states), seed=0)
    put(engine, states)
    obs = engine.obs["observation"][:, 0]
    assert obs.dtype == np.int64
    np.testing.assert_array_equal(obs, np.arange(500))  # csuite's enumeration order
    assert index(1, 0, 0, 0) == 100 and index(0, 1, 0, 0) == 20 and index(0, 0, 1, 0) == 4
    assert index(4, 4, 4, 3) == 499


# -- long runs and random input --------------------------------------------------------------


def test_random_play_follows_the_rules_and_never_terminates():
    """A batch under random actions against the hand-written rules, respawns taken from the
    engine (their values are random). Half the taxis start on Blue carrying a passenger bound
    there, and every tenth step is a drop-off, so deliveries happen."""
    n = 32
    engine = vecenv.make("taxi", num_envs=n, seed=3)
    put(engine, [[3, 4, IN_TAXI, 3]] * (n // 2), np.arange(n // 2))
    rng = np.random.default_rng(0)
    delivered = 0
    for _ in range(400):
        before = fields(engine)
        actions = rng.integers(0, 6, size=n)
        if engine.states["step"][0] % 10 == 0:
            actions[:] = DROPOFF
        obs, rewards, terminated, truncated = engine.step(actions)
        after = fields(engine)
        assert not terminated.any() and not truncated.any()
        for i in range(n):
            x, y, p, d = before[i]
            a = actions[i]
            if a in MOVES:
                want, reward = (*expected_move(x, y, a), p, d), 0.0
            elif a == PICKUP:
                ok = p != IN_TAXI and SQUARES[p] == (x, y)
                want, reward = (x, y, IN_TAXI if ok else p, d), 0.0 if ok else -10.0
            else:
                ok = p == IN_TAXI and SQUARES[d] == (x, y)
                if ok:
                    delivered += 1
                    assert after[i, 2] != IN_TAXI
                    want, reward = (x, y, after[i, 2], after[i, 3]), 20.0
                else:
                    want, reward = (x, y, p, d), -10.0
            assert tuple(after[i]) == tuple(want)
            assert rewards[i, 0] == reward
            assert obs["observation"][i, 0] == index(*after[i])
    assert (engine.states["step"] == 400).all()
    assert delivered >= n // 2


@FUZZ
@given(seed=st.integers(0, 2**64 - 1), actions=st.lists(st.integers(0, 5), max_size=60))
def test_random_action_sequences_never_crash(seed, actions):
    engine = vecenv.make("taxi", num_envs=2, seed=seed)
    for a in actions:
        obs, rewards, terminated, truncated = engine.step(np.array([a, 5 - a]))
        assert ((obs["observation"] >= 0) & (obs["observation"] <= 499)).all()
        assert np.isin(rewards, (-10.0, 0.0, 20.0)).all()
        assert not terminated.any() and not truncated.any()
    np.testing.assert_array_equal(engine.obs["observation"][:, 0], index(*fields(engine).T))


@FUZZ
@given(
    state=st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.integers(0, 3)),
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 5), max_size=20),
)
def test_random_valid_states_are_accepted_and_run(state, word, actions):
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    record = engine.get_state(0)
    for name, value in zip(FIELDS, state, strict=True):
        record[name] = value
    record["rng"] = word
    engine.set_state(record, 0)
    assert engine.obs["observation"][0, 0] == index(*state)
    for a in actions:
        engine.step(np.array([a]))
        assert engine.check_state(engine.get_state()) is None


@FUZZ
@given(
    field=st.sampled_from(FIELDS),
    value=st.one_of(st.integers(-(2**63), -1), st.integers(4, 2**63 - 1)),
    row=st.integers(0, 2),
)
def test_random_invalid_states_raise_value_error_and_change_nothing(field, value, row):
    limit = 3 if field == "destination" else 4
    if 0 <= value <= limit:
        value = limit + 1
    engine = vecenv.make("taxi", num_envs=3, seed=1)
    engine.step(np.array([0, 1, 2]))
    state = engine.get_state()
    state[field][row] = value
    assert_refused(engine, state, match="Invalid state")


def test_invalid_state_messages_are_csuites():
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    cases = [
        ("taxi_x", 5, "taxi coordinates in range \\[0,4\\]"),
        ("taxi_y", -1, "taxi coordinates in range \\[0,4\\]"),
        ("passenger_loc", 5, "passenger location as an integerin \\[0,4\\]"),
        ("destination", 4, "destination location as an integerin \\[0,3\\]"),
    ]
    for field, value, message in cases:
        state = engine.get_state(0)
        state[field] = value
        with pytest.raises(ValueError, match=message):
            engine.set_state(state, 0)


# -- faces and rendering ---------------------------------------------------------------------


def test_gymnasium_vector_env_is_continuing():
    space = gymnasium.spaces.Box(0, 499, (), np.int64)
    _, rewards = run_vector_env("vecenv/Taxi-v0", space, gymnasium.spaces.Discrete(6))
    assert np.isin(rewards, (-10.0, 0.0, 20.0)).all()
    run_single_env("vecenv/Taxi-v0", 50)


GREY, PURPLE, GREEN = (0x8F, 0x8F, 0x8F), (0xD4, 0x00, 0xFF), (0x00, 0x8C, 0x21)
RED_SQUARE, GREEN_SQUARE = (0xFF, 0x99, 0x99), (0x9C, 0xFF, 0x9C)


def test_render_frames():
    """csuite's picture: 50-pixel squares inside a 50-pixel margin, the coloured squares, thick
    walls, the taxi a disc (grey when empty, purple with the passenger), the waiting passenger's
    square outlined in purple and the destination's in dark green."""
    engine = vecenv.make("taxi", num_envs=1, seed=0)
    put(engine, [2, 2, 1, 3])
    frame = engine.render()
    assert frame.dtype == np.uint8 and frame.shape == (350, 350, 3)
    assert tuple(frame[175, 175]) == GREY  # the taxi's centre, square (2, 2)
    assert tuple(frame[75, 75]) == RED_SQUARE  # Red's inside
    assert tuple(frame[52, 252]) == PURPLE  # Green's border: the waiting passenger
    assert tuple(frame[75, 275]) == GREEN_SQUARE  # Green's inside
    assert tuple(frame[298, 225]) == GREEN  # Blue's border: the destination
    # The wall between x = 1 and x = 2 in rows 0 and 1: five pixels wide round x = 150.
    assert [tuple(frame[120, c]) for c in (147, 148, 152, 153)] == [
        (255, 255, 255),
        (0, 0, 0),
        (0, 0, 0),
        (255, 255, 255),
    ]
    assert tuple(frame[10, 10]) == (255, 255, 255)  # the margin
    put(engine, [0, 4, IN_TAXI, 0])
    frame = engine.render()
    assert tuple(frame[275, 75]) == PURPLE  # the taxi on Yellow, carrying the passenger
    assert tuple(frame[52, 75]) == GREEN  # Red's border: the destination
    assert tuple(frame[52, 252]) == (0, 0, 0)  # Green no longer outlined (top grid edge)
    assert tuple(frame[60, 260]) == GREEN_SQUARE
    text = engine.render(mode="ansi")
    assert "T" in text.split("\n")[5] and "passenger: taxi" in text
