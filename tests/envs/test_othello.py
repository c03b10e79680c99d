"""Othello beside OpenSpiel's ``othello``: the same legal actions, boards, passes and outcomes.

Random legal games are played in both, ply by ply. The rules are Pgx's, where a player without a
move passes (a ply) and two passes end the game; OpenSpiel ends the game at once when neither
player can move, so there ours must play exactly those two passes and end with OpenSpiel's
outcome. OpenSpiel comes with the test extra (kaggle-environments needs it too); outside CI the
tests skip without it.
"""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need
from vecenv import selfplay
from vecenv.kernels.turns import ACTIVE, DONE, INVALID

PASS = 64


def _pyspiel():
    return need("pyspiel", "OpenSpiel")


def their_board(state):
    """OpenSpiel's board as our 64 values (0 empty, 1 black, 2 white)."""
    rows = str(state).splitlines()[2:10]
    cells = [c for row in rows for c in row.split()[1:9]]
    return np.array([{"-": 0, "x": 1, "o": 2}[c] for c in cells], dtype=np.int8)


def play_both(seed, n=1):
    """One random legal game in OpenSpiel and in ``n`` identical episodes of ours."""
    pyspiel = _pyspiel()
    rng = random.Random(seed)
    theirs = pyspiel.load_game("othello").new_initial_state()
    ours = vecenv.make("othello", num_envs=n, seed=seed, autoreset="disabled")
    plies = 0
    while not theirs.is_terminal():
        mover = theirs.current_player()
        assert ours.states["status"][0, mover] == ACTIVE
        assert np.flatnonzero(ours.obs["legal"][0]).tolist() == theirs.legal_actions()
        np.testing.assert_array_equal(ours.obs["board"][0], their_board(theirs))
        action = rng.choice(theirs.legal_actions())
        theirs.apply_action(action)
        actions = np.zeros((n, 2), dtype=np.int64)
        actions[:, mover] = action
        ours.step(actions)
        plies += 1
    np.testing.assert_array_equal(ours.obs["board"][0], their_board(theirs))
    if not ours.terminated[0]:
        # Neither can move: Pgx's rules play the two passes OpenSpiel skips.
        for _ in range(2):
            assert np.flatnonzero(ours.obs["legal"][0]).tolist() == [PASS]
            ours.step(np.full((n, 2), PASS, dtype=np.int64))
            plies += 1
    assert ours.terminated.all()
    assert (ours.states["status"] == DONE).all()
    np.testing.assert_array_equal(ours.states["reward"][0], theirs.returns())
    return ours, plies


@pytest.mark.parametrize("seed", range(12))
def test_random_games_are_openspiels(seed):
    ours, plies = play_both(seed)
    assert plies >= 9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31))
def test_any_random_game_is_openspiels(seed):
    play_both(seed, n=2)


def test_games_with_passes_and_early_ends_are_covered():
    """Among seeds, games where a player passes mid-game and games where neither can move
    before the board is full both occur (so the tests above see both rules)."""
    pyspiel = _pyspiel()
    passes = early = 0
    for seed in range(400):
        rng = random.Random(seed)
        state = pyspiel.load_game("othello").new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            passes += legal == [PASS]
            state.apply_action(rng.choice(legal))
        early += (their_board(state) == 0).any()
    assert passes > 0 and early > 0
    for seed in range(400):  # and ours agrees on the first games of each kind
        rng = random.Random(seed)
        state = pyspiel.load_game("othello").new_initial_state()
        has_pass = False
        while not state.is_terminal():
            legal = state.legal_actions()
            has_pass |= legal == [PASS]
            state.apply_action(rng.choice(legal))
        if has_pass or (their_board(state) == 0).any():
            play_both(seed)


def test_text_is_openspiels_board():
    pyspiel = _pyspiel()
    theirs = pyspiel.load_game("othello").new_initial_state()
    for action in (19, 18, 17):
        theirs.apply_action(action)
    ours = vecenv.make("othello", num_envs=1, seed=0)
    for k, action in enumerate((19, 18, 17)):
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, k % 2] = action
        ours.step(actions)
    assert ours.render(0, mode="ansi") == "\n".join(str(theirs).splitlines()[1:])


def test_illegal_actions_make_the_mover_invalid():
    e = vecenv.make("othello", num_envs=3, seed=0, autoreset="disabled")
    e.step(np.array([[0, 0], [PASS, 0], [19, 0]]))  # a1 is no move; nor is the pass
    np.testing.assert_array_equal(e.states["status"][:, 0], [INVALID, INVALID, 0])
    np.testing.assert_array_equal(e.states["status"][:2, 1], [DONE, DONE])
    np.testing.assert_array_equal(e.rewards[:2], [[-1, 0], [-1, 0]])  # Kaggle's: the other 0
    assert not e.obs["legal"][:2].any()


def test_a_player_without_a_move_only_passes_and_two_passes_end():
    board = np.zeros(64, dtype=np.int8)
    board[[0, 63]] = [1, 2]  # black a1, white h8: far apart, neither can ever move
    e = vecenv.make("othello", num_envs=1, seed=0, autoreset="disabled")
    e.reset(position={"observation": {"board": board}, "status": ["INACTIVE", "ACTIVE"]})
    assert np.flatnonzero(e.obs["legal"][0]).tolist() == [PASS]
    e.step(np.array([[0, PASS]]))
    assert np.flatnonzero(e.obs["legal"][0]).tolist() == [PASS]
    assert not e.terminated[0]
    e.step(np.array([[PASS, 0]]))
    assert e.terminated[0]
    np.testing.assert_array_equal(e.states["reward"][0], [0, 0])  # one disc each: a draw


def test_a_full_board_or_a_wiped_out_player_ends_the_game():
    board = np.full(64, 1, dtype=np.int8)
    board[[62, 63]] = [2, 0]  # black to play h8, turning g8 over: the board is full
    e = vecenv.make("othello", num_envs=1, seed=0, autoreset="disabled")
    e.reset(position={"observation": {"board": board}})
    e.step(np.array([[63, 0]]))
    assert e.terminated[0] and (e.obs["board"][0] == 1).all()
    np.testing.assert_array_equal(e.states["reward"][0], [1, -1])
    board = np.zeros(64, dtype=np.int8)
    board[[0, 1]] = [1, 2]  # black a1, white b1: black plays c1 and white has no disc left
    e.reset(position={"observation": {"board": board}})
    e.step(np.array([[2, 0]]))
    assert e.terminated[0]
    np.testing.assert_array_equal(e.states["reward"][0], [1, -1])


def test_greedy_turns_over_the_most_discs():
    pyspiel = _pyspiel()
    game = pyspiel.load_game("othello")
    engine = vecenv.make("othello", num_envs=1, seed=1, autoreset="disabled")
    seats = selfplay.Seats(engine)
    seats.assign("greedy", np.array([0]))
    seats.assign("greedy", np.array([1]))
    theirs = game.new_initial_state()
    actions = np.zeros((1, 2), dtype=np.int64)
    while not theirs.is_terminal():
        seats.moves(actions)
        mover = theirs.current_player()
        mine = int(actions[0, mover])
        gains = {}
        for a in theirs.legal_actions():
            child = theirs.child(a)
            gains[a] = int((their_board(child) == mover + 1).sum())
        best = max(gains.values())
        assert mine == min(a for a, g in gains.items() if g == best)
        theirs.apply_action(mine)
        engine.step(actions)
    # Where OpenSpiel ends, ours has ended too or passes twice (see play_both).
    assert engine.terminated[0] or engine.obs["legal"][0][PASS]


def test_random_self_play_is_deterministic_across_threads():
    runs = [
        selfplay.play("othello", ("random", "greedy"), 1100, seed=4, num_threads=t).rewards
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(*runs)
