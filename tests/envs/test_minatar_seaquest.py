"""MinAtar Seaquest beside the ``minatar`` package's own Seaquest, step for step.

Both draw the same randomness (``tests.envs.minatar_side_by_side``): whole episodes start from
MinAtar's reset state and play the same actions with sticky actions on (random ones, and a player
that rescues six divers and surfaces, ramping the difficulty up), and hypothesis injects arbitrary
states (crowded rows, equal enemies that MinAtar's ``list.remove`` mistakes for each other,
torpedoes meeting enemies, six divers, the oxygen running out, spawns due) into both and steps
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

GAME = "minatar_seaquest"
WARM = [(GAME, {})]  # compiled beside the tests before they start (tests/warmup.py)
SCALARS = (
    "oxygen",
    "diver_count",
    "sub_x",
    "sub_y",
    "sub_or",
    "e_spawn_speed",
    "e_spawn_timer",
    "d_spawn_timer",
    "move_speed",
    "ramp_index",
    "shot_timer",
    "surface",
)
LISTS = {  # ours: MinAtar's
    "f_bullets": "f_bullets",
    "e_bullets": "e_bullets",
    "fish": "e_fish",
    "subs": "e_subs",
    "divers": "divers",
}


def same(record, env):
    for name in SCALARS:
        assert record[name] == getattr(env, name), name
    for ours, theirs in LISTS.items():
        rows = record[ours][: record["n_" + ours]].tolist()
        assert rows == [[int(v) for v in item] for item in getattr(env, theirs)], ours


def inject(engine, env, word):
    """Our episode 0 set to MinAtar's game ``env``, our stream at ``word``."""
    state = engine.get_state(0)
    for name in SCALARS:
        state[name] = getattr(env, name)
    for ours, theirs in LISTS.items():
        items = getattr(env, theirs)
        state["n_" + ours] = len(items)
        state[ours] = 0
        if items:
            state[ours][: len(items)] = np.array(items, dtype=np.int64)
    state["last_action"] = 0
    running(engine, state, word)


@pytest.fixture(scope="module")
def engines():
    return injection_engines(GAME)  # Seaquest has the full action set only


@pytest.mark.parametrize("seed", range(6))
def test_episodes_are_minatars(seed):
    steps, _ = play_both(GAME, same, seed, full=True, ramping=seed != 4)
    assert steps >= 2


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), sticky=st.sampled_from([0.0, 0.1, 0.5]))
def test_any_episode_is_minatars(seed, sticky):
    play_both(GAME, same, seed, full=True, sticky=sticky)


def safe(game, action, horizon=3):
    """Whether MinAtar's game survives ``action`` and ``horizon`` no-ops (on a copy)."""
    copy = object.__new__(type(game))
    copy.__dict__ = {
        k: [list(item) for item in v] if isinstance(v, list) else v for k, v in vars(game).items()
    }
    copy.random = np.random.RandomState(0)
    for a in (action,) + (0,) * horizon:
        if copy.terminal:
            return False
        copy.act(a)
    return not copy.terminal


def diver_rescuer(game):
    """A full-set action for MinAtar's game: to the nearest diver, up to breathe or with six,
    firing at enemies ahead, the first of those that is safe for a few steps."""
    wanted = []
    if game.diver_count > 0 and (game.oxygen < 12 * game.sub_y + 25 or game.diver_count == 6):
        wanted.append(2)
    elif game.divers and game.diver_count < 6:
        x, y = min(game.divers, key=lambda d: abs(d[0] - game.sub_x) + abs(d[1] - game.sub_y))[:2]
        wanted += [4] * (y > game.sub_y) + [2] * (y < game.sub_y)
        wanted += [3] * (x > game.sub_x) + [1] * (x < game.sub_x)
    elif game.sub_y < 4:
        wanted.append(4)
    ahead = [
        e
        for e in game.e_fish + game.e_subs
        if e[1] == game.sub_y and (e[0] > game.sub_x) == game.sub_or
    ]
    if ahead and game.shot_timer == 0:
        wanted.insert(0, 5)
    for action in wanted + [0, 1, 3, 4, 2, 5]:
        surfacing_empty = action == 2 and game.sub_y == 1 and game.diver_count == 0
        if not surfacing_empty and safe(game, action):
            return action
    return 0


def test_rescuing_six_divers_is_minatars():
    # Six divers brought up: the oxygen bonus, MinAtar's diver count of -1, the ramp (sticky
    # actions off: the player looks ahead only for the actions it picks).
    ours, theirs = start_both(GAME, same, seed=SIX_DIVERS_SEED, sticky=0.0)
    total = 0.0
    for _ in range(1000):
        _, reward = step_both(ours, theirs, same, [diver_rescuer(theirs.env)])
        total += reward
        if ours.terminated[0] or ours.get_state(0)["diver_count"] < 0:
            break
    state = ours.get_state(0)
    assert state["diver_count"] == -1 and state["ramp_index"] >= 1 and total >= 1


SIX_DIVERS_SEED = 8  # a seed whose rescuer brings up six divers


def items(*columns, most):
    """Lists of up to ``most`` items of the given columns' values, sometimes with an item
    repeated (equal items are where ``list.remove`` takes an earlier one)."""
    item = st.tuples(*columns).map(list)
    repeated = st.lists(item, min_size=1, max_size=most - 1).map(lambda v: v + [list(v[0])])
    return st.one_of(st.lists(item, max_size=most), repeated)


X = st.integers(0, 9)
ROW = st.integers(1, 8)
RIGHT = st.booleans()
SOON = st.integers(0, 2)  # timers mostly about to fire


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sub=st.tuples(X, st.integers(0, 8), RIGHT).filter(
        lambda s: not (s[0] == 0 and s[2]) and not (s[0] == 9 and not s[2])
    ),
    oxygen=st.integers(-1, 200) | st.integers(0, 3),
    diver_count=st.integers(-2, 6) | st.just(6),
    surface=st.booleans(),
    speeds=st.tuples(st.integers(1, 20), st.integers(2, 5)),
    timers=st.tuples(SOON | st.integers(0, 20), SOON | st.integers(0, 30), st.integers(0, 5)),
    ramp_index=st.integers(0, 20),
    f_bullets=items(X, st.integers(0, 8), RIGHT, most=3),
    e_bullets=items(X, ROW, RIGHT, most=6),
    fish=items(X, ROW, RIGHT, SOON | st.integers(0, 5), most=6),
    subs=items(X, ROW, RIGHT, SOON | st.integers(0, 5), SOON | st.integers(0, 10), most=6),
    divers=items(X, ROW, RIGHT, SOON | st.integers(0, 5), most=3),
    ramping=st.booleans(),
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 5), min_size=8, max_size=16),
)
def test_steps_from_any_state_are_minatars(
    engines,
    sub,
    oxygen,
    diver_count,
    surface,
    speeds,
    timers,
    ramp_index,
    f_bullets,
    e_bullets,
    fish,
    subs,
    divers,
    ramping,
    word,
    actions,
):
    """Injected states, stepped in both until the episode ends (sticky actions off)."""
    env = minatar("seaquest", word, ramping=ramping)
    game = env.env
    game.sub_x, game.sub_y, game.sub_or = sub
    game.oxygen, game.diver_count, game.surface = oxygen, diver_count, surface
    game.e_spawn_speed, game.move_speed = speeds
    game.e_spawn_timer = min(timers[0], speeds[0])
    game.d_spawn_timer, game.shot_timer = timers[1:]
    game.ramp_index = ramp_index
    game.f_bullets, game.e_bullets, game.divers = f_bullets, e_bullets, divers
    game.e_fish, game.e_subs = fish, subs
    ours = engines[ramping]
    inject(ours, game, word)
    step_both(ours, env, same, actions)


def test_a_torpedo_removed_by_value_is_minatars(engines):
    # The last torpedo moves onto a fish, and onto the values of the first torpedo (which shares
    # the fish's cell): MinAtar's list.remove takes the first, and the walk meets the last again.
    env = minatar("seaquest", 1)
    game = env.env
    game.sub_y = 0
    game.f_bullets = [[6, 3, True], [1, 7, False], [5, 3, True]]
    game.e_fish = [[6, 3, True, 4]]
    ours = engines[True]
    inject(ours, game, 1)
    assert step_both(ours, env, same, [0]) == (1, 1.0)
    assert game.f_bullets == [[0, 7, False], [7, 3, True]]  # not [[7, 3, True], [0, 7, False]]


def test_states_that_could_overflow_or_turn_the_submarine_round_are_refused(engines):
    engine = engines[True]
    for field, value, message in (
        ("n_fish", 40, "'n_fish' \\+ 'n_subs' must be at most 63"),
        ("n_e_bullets", 64, "'n_e_bullets' \\+ 'n_subs' must be at most 64"),
        ("sub_or", 1, "the submarine's back must be on the board"),
    ):
        state = engine.get_state(0)
        state["n_subs"], state["sub_x"], state["sub_or"] = 24, 0, 0
        state[field] = value
        with pytest.raises(ValueError, match=message):
            engine.set_state(state, 0)
    state = engine.get_state(0)
    state["subs"][0, 3] = 6  # a move timer past the slowest speed
    with pytest.raises(ValueError, match="'subs': column 3 must be in \\[0, 5\\]"):
        engine.set_state(state, 0)
