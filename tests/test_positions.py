"""Episodes started from a given position: ``Engine.reset(position=...)``, the games' position
hooks, the Gymnasium faces' ``reset(options={"position": ...})`` and self-play from openings.

A position reached by play and the same position given must be the same game from there on; a
bad position is refused with ``PositionError`` before any episode changes.
"""

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from vecenv import registry, selfplay
from vecenv.kernels.position import PositionError
from vecenv.kernels.turns import ACTIVE, DONE, INACTIVE, STATUS_NAMES

BOARD_GAMES = ["connectx", "tictactoe", "rps"]
WITHOUT_POSITIONS = [g for g in registry.list_envs() if g not in BOARD_GAMES]


def observed_position(engine, i):
    """Episode ``i``'s position as its observation and statuses tell it."""
    observation = {}
    for f in engine.observation:
        if f.name != "legal":
            observation[f.name] = engine.obs[f.name][i].copy()
    states = engine.states[i]
    return {
        "observation": observation,
        "status": [STATUS_NAMES[c] for c in states["status"]],
        "reward": states["reward"].tolist(),
        "step": int(states["step"]),
    }


def game_state(engine):
    """What must agree between two engines in the same position: the game's fields without the
    stream and what was dropped last."""
    names = [n for n in engine.state_dtype.names if n not in ("rng", "last")]
    return {n: engine.states[n].copy() for n in names}


def assert_same(a, b):
    for name in a.obs:
        np.testing.assert_array_equal(a.obs[name], b.obs[name], err_msg=name)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    np.testing.assert_array_equal(a.terminated, b.terminated)
    for name, value in game_state(a).items():
        np.testing.assert_array_equal(value, game_state(b)[name], err_msg=name)


CONFIGS = {"connectx": {"rows": 4, "columns": 5, "inarow": 3}, "tictactoe": {}, "rps": {}}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.parametrize("game", BOARD_GAMES)
def test_a_position_reached_by_play_and_given_go_on_alike(game, data):
    config = dict(CONFIGS[game], episodeSteps=12) if game == "rps" else CONFIGS[game]
    n = 6
    played = vecenv.make(game, num_envs=n, seed=1, autoreset="disabled", **config)
    width = int(played.action.high[0]) + 1
    moves = st.lists(st.integers(0, width - 1), min_size=2 * n, max_size=2 * n)
    for _ in range(data.draw(st.integers(0, 8), label="plies before")):
        played.step(np.array(data.draw(moves), dtype=np.int64).reshape(n, 2))
    running = ~played.terminated & ~played.truncated & (played.states["done"] == 0)
    positions = [observed_position(played, i) for i in range(n)]
    placed = vecenv.make(game, num_envs=n, seed=2, autoreset="disabled", **config)
    placed.reset(position=positions)
    for name in placed.obs:
        np.testing.assert_array_equal(placed.obs[name], played.obs[name], err_msg=name)
    for _ in range(data.draw(st.integers(1, 8), label="plies after")):
        actions = np.array(data.draw(moves), dtype=np.int64).reshape(n, 2)
        before = played.states["done"].copy()
        played.step(actions)
        placed.step(actions)
        live = running & (before == 0)
        for name in placed.obs:
            np.testing.assert_array_equal(placed.obs[name][live], played.obs[name][live])
        np.testing.assert_array_equal(placed.rewards[live], played.rewards[live])
        np.testing.assert_array_equal(placed.terminated[live], played.terminated[live])


def test_only_the_masked_episodes_start_from_the_position():
    e = vecenv.make("connectx", num_envs=6, seed=0, rows=4, columns=5, inarow=3)
    e.step(np.full((6, 2), 2, dtype=np.int64))
    before = e.get_state()
    mask = np.array([True, False, True, False, False, True])
    board = [0] * 15 + [1, 2, 1, 2, 0]
    e.reset(mask=mask, position={"observation": {"board": board}, "status": [INACTIVE, ACTIVE]})
    assert (e.obs["board"][mask] == board).all()
    np.testing.assert_array_equal(e.get_state()[~mask], before[~mask])
    assert (e.states["status"][mask] == [INACTIVE, ACTIVE]).all()
    assert (e.states["step"][mask] == 0).all() and (e.states["done"][mask] == 0).all()
    np.testing.assert_array_equal(e.obs["legal"][mask], np.ones((3, 5), dtype=bool))
    # Agent 1 is to move: its checker lands on the one given in column 0.
    e.step(np.zeros((6, 2), dtype=np.int64))
    assert (e.obs["board"][mask][:, 10] == 2).all()


def test_a_list_gives_each_episode_its_own_position():
    e = vecenv.make("tictactoe", num_envs=4, seed=0)
    boards = [[0] * 9, [1] + [0] * 8, [1, 2] + [0] * 7, [1, 2, 1] + [0] * 6]
    statuses = [[ACTIVE, INACTIVE], [INACTIVE, ACTIVE], [ACTIVE, INACTIVE], [INACTIVE, ACTIVE]]
    e.reset(
        position=[
            {"observation": {"board": b}, "status": s}
            for b, s in zip(boards, statuses, strict=True)
        ]
    )
    np.testing.assert_array_equal(e.obs["board"], boards)
    with pytest.raises(PositionError, match="a list of 4 dicts"):
        e.reset(position=[{}] * 3)
    with pytest.raises(PositionError, match=r"position 2\)"):
        e.reset(position=[{}, {}, {"observation": {"board": [5] * 9}}, {}])


def test_a_step_count_brings_the_end_nearer():
    e = vecenv.make("rps", num_envs=2, seed=0, episodeSteps=10, tieRewardThreshold=1)
    e.reset(position={"step": 8, "reward": [2, -2], "observation": {"reward": [2, -2]}})
    obs, rewards, terminated, _ = e.step(np.array([[1, 0], [0, 0]]))
    assert terminated.all()
    assert (e.states["status"] == DONE).all()
    np.testing.assert_array_equal(e.states["reward"], [[3, -3], [2, -2]])
    with pytest.raises(PositionError, match="below the time limit 10"):
        e.reset(position={"step": 10})


def test_the_streams_go_on_or_restart_as_a_plain_reset():
    a = vecenv.make("rps", num_envs=3, seed=5)
    b = vecenv.make("rps", num_envs=3, seed=5)
    a.reset(seed=9, position={})
    b.reset(seed=9)
    np.testing.assert_array_equal(a.states["rng"], b.states["rng"])


BAD_POSITIONS = {
    "not-a-dict": ("connectx", [1, 2], "position"),
    "unknown-key": ("connectx", {"board": [0] * 42}, "board: is no part of a position"),
    "unknown-field": ("connectx", {"observation": {"cells": [0]}}, "observation.cells"),
    "legal-is-derived": ("connectx", {"observation": {"legal": [1] * 7}}, None),
    "too-short": ("connectx", {"observation": {"board": [0] * 41}}, "has 41 values"),
    "nested": ("connectx", {"observation": {"board": [[0] * 42]}}, "shape"),
    "strings": ("connectx", {"observation": {"board": ["x"] * 42}}, "must hold numbers"),
    "ragged": ("tictactoe", {"observation": {"board": [[0], [0, 0]]}}, "observation.board"),
    "fraction": ("tictactoe", {"observation": {"board": [0.5] + [0] * 8}}, "dtype int8"),
    "nan": ("tictactoe", {"observation": {"board": [np.nan] + [0] * 8}}, "finite"),
    "mark-outside": ("tictactoe", {"observation": {"board": [3] + [0] * 8}}, r"board\[0\]: 3"),
    "floating": ("connectx", {"observation": {"board": [1] + [0] * 41}}, "floats"),
    "marks-swapped": ("connectx", {"observation": {"mark": [2, 1]}}, "agent 0's"),
    "status-name": ("connectx", {"status": ["ACTIVE", "WAITING"]}, "agent 1's status"),
    "status-count": ("connectx", {"status": ["ACTIVE"]}, "one per agent"),
    "status-code": ("connectx", {"status": [1, 9]}, "agent 1's status"),
    "reward-nan": ("rps", {"reward": [0, float("nan")]}, "agent 1's reward"),
    "reward-string": ("rps", {"reward": "12"}, "one value per agent"),
    "reward-outside-enum": ("tictactoe", {"reward": [0.5, 0]}, "rules cannot run"),
    "step-negative": ("rps", {"step": -1}, "step"),
    "step-float": ("rps", {"step": 1.0}, "step"),
    "one-sign": ("rps", {"observation": {"lastOpponentAction": [1, -1]}}, "both agents"),
    "failed-in-a-running-match": ("rps", {"status": ["ERROR", "ACTIVE"]}, "while the match"),
}


@pytest.mark.parametrize("case", sorted(BAD_POSITIONS))
def test_a_bad_position_is_refused_by_name_and_changes_nothing(case):
    game, position, words = BAD_POSITIONS[case]
    e = vecenv.make(game, num_envs=3, seed=0)
    e.step(np.ones((3, 2), dtype=np.int64))
    states, obs = e.get_state(), {k: v.copy() for k, v in e.obs.items()}
    if words is None:  # accepted: the rules derive it
        e.reset(position=position)
        return
    with pytest.raises(PositionError, match=words):
        e.reset(position=position)
    np.testing.assert_array_equal(e.get_state(), states)
    for name, value in obs.items():
        np.testing.assert_array_equal(e.obs[name], value)


_garbage = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 50),
        st.floats(),
        st.text(max_size=4),
        st.sampled_from(["ACTIVE", "DONE", "board", "observation"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=43), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=60,
)
_positions = st.one_of(
    _garbage,
    st.fixed_dictionaries(
        {},
        optional={
            "observation": st.one_of(
                _garbage,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "board": st.one_of(_garbage, st.lists(st.integers(-1, 3), max_size=43)),
                        "mark": st.one_of(_garbage, st.lists(st.integers(0, 3), max_size=3)),
                    },
                ),
            ),
            "status": st.one_of(_garbage, st.lists(st.sampled_from(STATUS_NAMES), max_size=3)),
            "reward": st.one_of(_garbage, st.lists(st.floats(), max_size=3)),
            "step": _garbage,
        },
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(position=_positions)
def test_any_position_is_a_runnable_game_or_refused_untouched(position):
    e = vecenv.make("connectx", num_envs=2, seed=0, autoreset="same_step")
    e.step(np.array([[3, 0], [0, 0]]))
    states = e.get_state()
    try:
        e.reset(position=position, mask=np.array([False, True]))
    except PositionError:
        np.testing.assert_array_equal(e.get_state(), states)
        return
    e.check_state(e.get_state())  # what was accepted is a state the rules run
    np.testing.assert_array_equal(e.get_state()[0], states[0])
    for _ in range(3):
        e.step(np.array([[0, 0], [1, 1]]))
    e.check_state(e.get_state())


@pytest.mark.parametrize("game", WITHOUT_POSITIONS[:3] + ["cartpole"])
def test_games_without_positions_say_so(game):
    e = vecenv.make(game, num_envs=1, seed=0)
    with pytest.raises(ValueError, match="takes no starting positions"):
        e.reset(position={})


def test_positions_give_the_same_games_on_any_thread_count():
    n = 2048
    rng = np.random.default_rng(0)
    boards = np.zeros((n, 42), dtype=np.int8)
    boards[:, 35:38] = [1, 2, 1]  # an opening, then each game its own way
    positions = [{"observation": {"board": b}} for b in boards]
    runs = []
    for threads in (1, 2):
        e = vecenv.make("connectx", num_envs=n, seed=3, num_threads=threads, parallel=True)
        e.reset(position=positions)
        trace = []
        for _ in range(12):
            e.step(rng.integers(0, 7, size=(n, 2)))
            trace.append((e.obs["board"].copy(), e.rewards.copy()))
        rng = np.random.default_rng(0)
        runs.append(trace)
    for (board_a, reward_a), (board_b, reward_b) in zip(*runs, strict=True):
        np.testing.assert_array_equal(board_a, board_b)
        np.testing.assert_array_equal(reward_a, reward_b)


# ---- faces ---------------------------------------------------------------------------------------


def test_gymnasium_env_starts_from_a_position_and_the_opponent_replies():
    env = gymnasium.make("vecenv/ConnectX-v0", opponent="random", seat=0, rows=4, columns=5)
    board = [0] * 15 + [1, 0, 0, 0, 0]
    obs, _ = env.reset(
        seed=1, options={"position": {"observation": {"board": board}, "status": [0, 1]}}
    )
    # The opponent was to move: it has, before the agent's first observation.
    assert sum(obs["board"] == 2) == 1 and sum(obs["board"] == 1) == 1
    assert obs["board"][15] == 1
    obs, _ = env.reset(seed=1)  # without the option: the game's start
    assert not obs["board"].any()
    with pytest.raises(PositionError, match="floats"):
        env.reset(options={"position": {"observation": {"board": [1] + [0] * 19}}})


def test_gymnasium_vector_env_starts_masked_episodes_from_positions():
    envs = gymnasium.make_vec("vecenv/TicTacToe-v0", num_envs=3, opponent="random")
    envs.reset(seed=0)
    envs.step(np.array([4, 4, 4]))
    mask = np.array([True, False, True])
    openings = [{"observation": {"board": [1] + [0] * 8}, "status": ["INACTIVE", "ACTIVE"]}] * 2
    obs, _ = envs.reset(options={"reset_mask": mask, "position": openings})
    assert (obs["board"][mask][:, 0] == 1).all()
    assert ((obs["board"][mask] == 2).sum(axis=1) == 1).all()  # the opponent replied
    assert obs["board"][1][4] == 1  # untouched


def test_self_play_from_openings_replays_from_them():
    openings = [
        {
            "observation": {"board": [0] * 35 + [1, 1, 1, 0, 2, 2, 0]},
            "status": ["ACTIVE", "INACTIVE"],
        },
        {
            "observation": {"board": [0] * 35 + [2, 2, 2, 0, 1, 1, 0]},
            "status": ["INACTIVE", "ACTIVE"],
        },
    ]
    result = selfplay.play(
        "connectx",
        ("negamax", "negamax"),
        2,
        seed=0,
        keep_actions=True,
        alternate=False,
        position=openings,
    )
    # Whoever is to move completes the row of three: one ply each.
    np.testing.assert_array_equal(result.plies, [1, 1])
    np.testing.assert_array_equal(result.rewards, [[1, -1], [-1, 1]])
    for match, opening in enumerate(openings):
        env = result.replay(match)
        assert env.steps[0][0].observation.board == opening["observation"]["board"]
        assert env.steps[-1][0].observation.board[38] in (1, 2)
        assert env.done


def test_seats_play_on_from_positions_as_moves_and_steps():
    n = 64
    board = [0] * 35 + [1, 2, 1, 2, 0, 0, 0]
    engines = []
    for _ in range(2):
        e = vecenv.make("connectx", num_envs=n, seed=4, autoreset="same_step")
        seats = selfplay.Seats(e)
        seats.assign("random", np.zeros(n, dtype=int))
        seats.assign("negamax", np.ones(n, dtype=int))
        e.reset(position={"observation": {"board": board}})
        seats.new_matches(np.ones(n, dtype=bool))
        engines.append((e, seats))
    (a, seats_a), (b, seats_b) = engines
    seats_a.step(5)
    actions = np.zeros((n, 2), dtype=np.int64)
    for _ in range(5):
        seats_b.moves(actions)
        b.step(actions)
    assert_same(a, b)
