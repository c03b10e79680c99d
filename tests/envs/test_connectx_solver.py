"""Connect four's perfect solver (``envs/connectx/solver.py``) and the agent ``perfect``.

The solver is checked against positions whose values are worked out by hand (wins at once and in
three plies, a loss no move stops, draws on a nearly full board) and against a plain exhaustive
minimax written here, on boards of the connectx layout, for late positions (at least 30
checkers): every score, outcome, column score, best column, plies to the end and kept value.
Answers must not depend on the transposition table (fresh, shared, or so small that every
position collides). The agent plays wherever agents are named (``selfplay``, ``vecenv play``,
tournaments, the Kaggle face and kaggle-environments itself), never loses to ``negamax`` or
``random``, and against itself from a solved position ends the game as the score says.
"""

import functools
import pickle
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.kaggle import reference
from vecenv import kaggle as vk
from vecenv import selfplay, tournament
from vecenv.arena.client import kaggle_policy
from vecenv.envs.connectx import agents, perfect, solver
from vecenv.kaggle import agents as kaggle_agents
from vecenv.kernels.agents import AGENT_RNG
from vecenv.seats import Seats, builtin_names

ROWS, COLUMNS = 6, 7


# -- boards and a plain minimax ----------------------------------------------------------------


def board_of(columns):
    """The board after dropping into ``columns`` in turn (a string of digits 0-6, or a list),
    mark 1 first: row-major, the top row first, as connectx's observation."""
    board = [0] * (ROWS * COLUMNS)
    for ply, column in enumerate(int(c) for c in columns):
        row = lowest(board, column)
        assert row >= 0, f"column {column} is full"
        board[row * COLUMNS + column] = 1 + ply % 2
    return np.array(board, dtype=np.int8)


def lowest(board, column):
    """The lowest empty row of ``column``, -1 when it is full."""
    for row in range(ROWS - 1, -1, -1):
        if board[row * COLUMNS + column] == 0:
            return row
    return -1


def four_through(board, row, column, mark):
    """Whether ``mark`` at (row, column) lies on four of its checkers in a line."""
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, column + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLUMNS and board[r * COLUMNS + c] == mark:
                run += 1
                r, c = r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


def minimax(board):
    """(score, plies to the end) of ``board`` for the player to move, by trying every move to
    the end of the game: a win with the mover's checker dropped onto m checkers scores
    (43 - m) // 2, a draw 0, a loss the opponent's win negated; the winner ends the game as
    soon as it can, the loser as late as it can."""
    return _minimax(tuple(int(x) for x in board))


@functools.cache
def _minimax(cells):
    moves = sum(1 for x in cells if x)
    mark = 1 + moves % 2
    opens = [c for c in range(COLUMNS) if cells[c] == 0]
    for c in opens:
        row = lowest(cells, c)
        child = list(cells)
        child[row * COLUMNS + c] = mark
        if four_through(child, row, c, mark):
            return (43 - moves) // 2, 1
    if not opens:
        return 0, 0
    best = None
    for c in opens:
        child = list(cells)
        child[lowest(cells, c) * COLUMNS + c] = mark
        score, plies = _minimax(tuple(child))
        option = (-score, plies + 1)
        if (
            best is None
            or option[0] > best[0]
            or option[0] == best[0]
            and (option[1] < best[1] if option[0] > 0 else option[1] > best[1])
        ):
            best = option
    return best


def child_of(board, column):
    moves = int(np.count_nonzero(board))
    child = board.copy()
    child[lowest(board, column) * COLUMNS + column] = 1 + moves % 2
    return child


def is_over(board):
    return any(
        board[r * COLUMNS + c] and four_through(board, r, c, board[r * COLUMNS + c])
        for r in range(ROWS)
        for c in range(COLUMNS)
    )


def random_position(rng, plies):
    """A position of ``plies`` checkers that random play reaches with nobody having won."""
    while True:
        board = np.zeros(ROWS * COLUMNS, dtype=np.int8)
        for ply in range(plies):
            column = rng.choice([c for c in range(COLUMNS) if board[c] == 0])
            row = lowest(board, column)
            board[row * COLUMNS + column] = 1 + ply % 2
            if four_through(board, row, column, 1 + ply % 2):
                break
        else:
            return board


# One solver for the tests that share a table, and one of the smallest table there is: every
# position shares a slot of two words with most others, so the table forgets all the time.
SHARED = solver.Solver()
TINY = solver.Solver(table_size=4)


# -- positions worked out by hand ---------------------------------------------------------------

# mark 1 on the bottom row at 0, 1, 2, mark 2 stacked in 6 and one in 5: mark 1 wins at 3 now,
# dropping its checker onto 6 checkers: (43 - 6) // 2.
WIN_NOW = "061625"
# mark 1 on the bottom row at 2 and 3: dropping into 1 or 4 makes three with both ends open, one
# is blocked and the other wins with the checker dropped onto 6 checkers.
WIN_IN_THREE = "2636"
# mark 2 to move against mark 1's open three (1, 2, 3 on the bottom row): whatever it plays, mark
# 1 wins next onto 6 checkers, so mark 2 scores -(43 - 6) // 2 and every column is as good.
LOST = "16263"


@pytest.mark.parametrize(
    "moves,score,plies,best",
    [
        (WIN_NOW, 18, 1, {3}),
        (WIN_IN_THREE, 18, 3, {1, 4}),
        (LOST, -18, 2, set(range(7))),
    ],
)
def test_positions_worked_out_by_hand(moves, score, plies, best):
    board = board_of(moves)
    for s in (solver.Solver(), SHARED, TINY):
        assert s.score(board).tolist() == [score]
        assert s.outcome(board).tolist() == [np.sign(score)]
        scores, columns = s.best_columns(board)
        assert scores.tolist() == [score]
        assert set(np.flatnonzero(columns[0])) == best
    assert solver.plies_left(score, len(moves)) == plies
    assert score == solver.MAX_SCORE or score == solver.MIN_SCORE  # as soon as can be


def test_a_win_in_three_plies_takes_one_of_the_two_columns():
    board = board_of(WIN_IN_THREE)
    # 1 and 4 make three in a row with both ends open; 0 and 5 three with one end open and one
    # gap (blocked at once), 2, 3 and 6 no threat: no other column wins as soon.
    for column in range(COLUMNS):
        kept = solver.move_keeps_value(board, column, exact=True, solver=SHARED)
        assert kept == (column in (1, 4))


def nearly_full_draws():
    """Positions of 36-41 checkers that play reaches with nobody having won and whose value the
    minimax finds a draw, from seeded random play."""
    rng = random.Random(7)
    found = []
    while len(found) < 4:
        board = random_position(rng, rng.choice([36, 38, 40, 41]))
        if minimax(board)[0] == 0:
            found.append(board)
    return found


def test_draws_near_the_end_of_the_board():
    for board in nearly_full_draws():
        moves = int(np.count_nonzero(board))
        assert solver.Solver().score(board).tolist() == [0]
        assert TINY.outcome(board).tolist() == [0]
        assert solver.plies_left(0, moves) == 42 - moves == minimax(board)[1]
    # The last cell: a draw whatever the mover does, if it cannot make four there.
    board = nearly_full_draws()[0]
    while np.count_nonzero(board) < 41:
        board = child_of(board, int(np.flatnonzero(solver.Solver().best_columns(board)[1][0])[0]))
        assert not is_over(board) and solver.Solver().score(board).tolist() == [0]


# -- against the plain minimax ------------------------------------------------------------------


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(30, 41))
def test_late_positions_as_the_minimax_finds_them(seed, plies):
    board = random_position(random.Random(seed), plies)
    score, to_end = minimax(board)
    moves = int(np.count_nonzero(board))
    for s in (solver.Solver(solver.SMALL_TABLE), SHARED, TINY):
        assert s.score(board).tolist() == [score]
        assert s.outcome(board).tolist() == [np.sign(score)]
    assert solver.outcome(score) == np.sign(score)
    assert solver.plies_left(score, moves) == to_end
    # Every column's score, and which are best, and which keep the value.
    children = {}
    for c in range(COLUMNS):
        if board[c] == 0:
            child = child_of(board, c)
            children[c] = (43 - moves) // 2 if is_over(child) else -minimax(child)[0]
    column_scores = SHARED.column_scores(board)[0]
    outcomes = TINY.column_scores(board, exact=False)[0]
    for c in range(COLUMNS):
        expected = children.get(c, -100)
        assert column_scores[c] == expected
        assert outcomes[c] == (np.sign(expected) if c in children else -100)
    assert max(children.values()) == score
    scores, best = TINY.best_columns(board)
    assert scores.tolist() == [score]
    assert set(np.flatnonzero(best[0])) == {c for c, v in children.items() if v == score}
    for c in range(COLUMNS):
        kept_exact = c in children and children[c] == score
        kept = c in children and np.sign(children[c]) == np.sign(score)
        assert solver.move_keeps_value(board, c, exact=True) == kept_exact
        assert solver.move_keeps_value(board, c, solver=TINY) == kept


# -- the table never changes an answer ------------------------------------------------------------


def middle_positions(count, plies, seed):
    rng = random.Random(seed)
    return np.stack([random_position(rng, plies) for _ in range(count)])


def test_answers_do_not_depend_on_the_table():
    boards = middle_positions(12, 14, seed=3)
    fresh = np.array([solver.Solver().score(b)[0] for b in boards])
    assert SHARED.score(boards).tolist() == fresh.tolist()
    assert SHARED.score(boards[::-1]).tolist() == fresh[::-1].tolist()  # the table full now
    # The tiny table forgets nearly everything: later positions, where a search without a table
    # is short.
    boards = middle_positions(12, 22, seed=4)
    fresh = np.array([solver.Solver().score(b)[0] for b in boards])
    assert TINY.score(boards).tolist() == fresh.tolist()
    assert SHARED.score(boards).tolist() == fresh.tolist()
    best = solver.Solver().best_columns(boards)
    again = TINY.best_columns(boards)
    assert (best[0] == again[0]).all() and (best[1] == again[1]).all()
    # Each score is the best of its columns' scores (the solver agrees with itself one ply on).
    columns = SHARED.column_scores(boards)
    assert (columns.max(axis=1) == fresh).all()
    assert ((columns == fresh[:, None]) == best[1]).all()


def test_early_positions_solve_in_seconds():
    """Positions 10 and 12 plies in (seconds, cold tables): a mirrored board scores the same,
    and its best columns are the mirror images."""
    for plies, seed in ((10, 11), (12, 12)):
        boards = middle_positions(2, plies, seed)
        scores, best = solver.Solver().best_columns(boards)
        mirrored = boards.reshape(-1, ROWS, COLUMNS)[:, :, ::-1].reshape(-1, ROWS * COLUMNS)
        again, best_mirrored = solver.Solver().best_columns(mirrored)
        assert again.tolist() == scores.tolist()
        assert (best_mirrored == best[:, ::-1]).all()


# -- conventions and bad boards -----------------------------------------------------------------


def test_score_conventions():
    assert (solver.MIN_SCORE, solver.MAX_SCORE) == (-18, 18)
    assert solver.outcome([-3, 0, 5]).tolist() == [-1, 0, 1]
    # The empty board's value, a first-player win with its last checker (Allis, Tromp), is 1:
    # the winning checker is dropped onto 40 checkers, the 41st ply.
    assert solver.plies_left(1, 0) == 41
    # A win now, and a loss to the opponent's next checker.
    assert solver.plies_left(18, 6) == 1 and solver.plies_left(-18, 5) == 2
    assert solver.plies_left(0, 30) == 12
    # The mover's win with its second checker from here, and the opponent's with its second.
    assert solver.plies_left((43 - 12) // 2, 10) == 3
    assert solver.plies_left(-((43 - 13) // 2), 10) == 4


def bad(board, match, marks=None):
    with pytest.raises(solver.PositionError, match=match):
        solver.Solver(solver.SMALL_TABLE).score(board, marks)


def test_boards_the_solver_refuses():
    bad(np.zeros(41, dtype=np.int8), "standard board")
    bad(np.zeros((2, 48), dtype=np.int8), "standard board")
    bad(np.zeros((1, 6, 7), dtype=np.int8), "standard board")
    three = board_of("3")
    three[0] = 3
    bad(three, "0 \\(empty\\), 1 or 2")
    floating = np.zeros(42, dtype=np.int8)
    floating[3] = 1  # the top row
    bad(floating, "floats above an empty cell")
    second = board_of("3")
    second[38] = 2  # mark 2 first
    bad(np.stack([board_of("3"), second]), "board 1 has 0 checkers of mark 1 and 1 of mark 2")
    twice = board_of("3")
    twice[40] = 1  # two of mark 1, none of mark 2
    bad(twice, "2 checkers of mark 1 and 0 of mark 2")
    bad(board_of("34"), "mark 2 is not to move", marks=2)
    bad(board_of("3"), "the mark to move is 1 or 2", marks=3)
    bad(board_of("0102030"), "four in a line already")  # mark 1 down column 0
    bad(board_of("10203050"), "four in a line already")  # mark 2 down column 0
    shift = [0, 0, 1, 1, 0, 1]  # rows alternate marks, in pairs: no four, 21 checkers each
    full = np.array([1 + (c + shift[r]) % 2 for r in range(6) for c in range(7)], dtype=np.int8)
    assert not is_over(full)
    bad(full, "full: the game is over")
    with pytest.raises(ValueError, match="one column per board"):
        SHARED.keeps_value(np.stack([board_of("3")] * 2), [3])
    with pytest.raises(ValueError, match="columns are 0 to 6"):
        solver.move_keeps_value(board_of("3"), 7)
    assert not solver.move_keeps_value(board_of("333333"), 3)  # a full column


def test_marks_may_say_who_moves():
    board = board_of(WIN_IN_THREE)
    assert SHARED.score(board, marks=1).tolist() == [18]
    assert SHARED.score(np.stack([board, board_of(LOST)]), marks=[1, 2]).tolist() == [18, -18]


def test_the_share_of_moves_keeping_the_value():
    """Random moves in late positions, judged by the minimax."""
    rng = random.Random(5)
    boards = middle_positions(16, 32, seed=5)
    columns = [rng.choice(np.flatnonzero(b[:COLUMNS] == 0).tolist()) for b in boards]
    truth = []
    for board, c in zip(boards, columns, strict=True):
        child = child_of(board, c)
        value = (43 - int(np.count_nonzero(board))) // 2 if is_over(child) else -minimax(child)[0]
        truth.append((value == minimax(board)[0], np.sign(value) == np.sign(minimax(board)[0])))
    exact, kept = np.array(truth).T
    share, got = solver.moves_keep_value(boards, columns, solver=SHARED)
    assert got.tolist() == kept.tolist() and share == pytest.approx(kept.mean())
    share, got = solver.moves_keep_value(boards, columns, exact=True)
    assert got.tolist() == exact.tolist() and share == pytest.approx(exact.mean())
    assert 0 < exact.mean() < 1  # both kinds of move are there
    # By hand: in WIN_IN_THREE, 1 and 4 keep the soonest win; in LOST every move loses as soon.
    boards = np.stack([board_of(WIN_IN_THREE)] * 2 + [board_of(LOST)] * 2)
    share, got = solver.moves_keep_value(boards, [1, 4, 0, 6], exact=True, solver=SHARED)
    assert got.tolist() == [True] * 4 and share == 1.0
    assert np.isnan(solver.moves_keep_value(np.zeros((0, 42), dtype=np.int8), [])[0])


def test_a_solver_pickles_without_its_table():
    s = solver.Solver(solver.SMALL_TABLE)
    s.score(board_of(WIN_IN_THREE))
    again = pickle.loads(pickle.dumps(s))
    assert len(pickle.dumps(s)) < 10_000 and again.table.shape == s.table.shape
    assert again.score(board_of(WIN_IN_THREE)).tolist() == [18]


# -- the agent "perfect" ------------------------------------------------------------------------


def rates(result):
    s = result.summary
    return s.wins, s.draws, s.losses


def test_perfect_is_named_with_the_built_in_agents():
    assert builtin_names("connectx")[:3] == ("random", "negamax", "perfect")
    assert kaggle_agents.host_names("connectx") == ("perfect",)
    assert "perfect" not in builtin_names("tictactoe")


@pytest.mark.parametrize(
    "config", [{"rows": 5}, {"columns": 8}, {"inarow": 3}], ids=["rows", "columns", "inarow"]
)
def test_perfect_refuses_other_boards(config):
    full = {"rows": 6, "columns": 7, "inarow": 4, **config}
    with pytest.raises(ValueError, match="standard board only .*rows=6, columns=7, inarow=4"):
        agents.host_agent("perfect", full)
    with pytest.raises(ValueError, match="standard board only"):
        selfplay.play("connectx", ("perfect", "random"), 2, seed=0, **config)
    with pytest.raises(ValueError, match="standard board only"):
        kaggle_agents.host_callable("connectx", "perfect")({"board": [0] * 42, "mark": 1}, full)
    with pytest.raises(ValueError, match="standard board only"):
        vk.make("connectx", configuration=config).run(["perfect", "random"])
    with pytest.raises(ValueError, match="no host agent"):
        agents.host_agent("perfekt", full)


def test_perfect_never_loses_to_negamax_or_random_and_wins_moving_first():
    for opponent in ("negamax", "random"):
        result = selfplay.play("connectx", ("perfect", opponent), 3, seed=1)
        assert rates(result)[2] == 0, opponent
        first = result.seats == 0
        assert (result.rewards[first, 0] == 1).all(), opponent


def test_perfect_plays_the_same_moves_from_the_same_seed():
    """Ties are broken from each seat's own stream: the same seed, the same matches, even
    with another number of matches beside them (match i depends on the seed and i only)."""
    one = selfplay.play("connectx", ("perfect", "random"), 2, seed=4, keep_actions=True)
    wider = selfplay.play("connectx", ("perfect", "random"), 3, seed=4, keep_actions=True)
    plies = min(one.actions.shape[0], wider.actions.shape[0])
    assert np.array_equal(one.actions[:plies], wider.actions[:plies, :2])
    assert one.plies.tolist() == wider.plies[:2].tolist()


def test_perfect_against_itself_ends_as_the_score_says():
    """From solved positions 12 plies in, perfect play by both sides ends the game in the
    plies the score says, with its winner (or a full board)."""
    boards = middle_positions(3, 12, seed=21)
    scores = SHARED.score(boards)
    openings = [
        {"observation": {"board": b.tolist()}, "status": ["ACTIVE", "INACTIVE"]} for b in boards
    ]
    result = selfplay.play(
        "connectx", ("perfect", "perfect"), 3, seed=0, alternate=False, position=openings
    )
    assert result.plies.tolist() == solver.plies_left(scores, 12).tolist()
    assert result.rewards[:, 0].tolist() == np.sign(scores).tolist()  # mark 1 was to move


def test_perfect_in_the_command_line_and_a_tournament(capsys):
    from tests.test_cli import run

    code, out, _ = run(
        capsys, "play", "connectx", "--agents", "perfect", "negamax", "--matches", "2"
    )
    assert code == 0 and "perfect vs negamax" in out
    played = tournament.round_robin("connectx", ["perfect", "negamax", "random"], 2, seed=0)
    assert played.names == ["perfect", "negamax", "random"]
    wins, draws, losses = played.table[0].sum(axis=0)
    assert losses == 0 and wins + draws == 4


def test_perfect_seats_pickle_without_the_table():
    engine = vecenv.make("connectx", num_envs=2, seed=0, autoreset="disabled")
    seats = Seats(engine)
    seats.assign("perfect", np.array([0, 1]))
    seats.assign("random", np.array([1, 0]))
    assert len(pickle.dumps(seats)) < 100_000
    copy = pickle.loads(pickle.dumps(seats))
    seats.step()
    copy.step()
    assert np.array_equal(seats.actions, copy.actions)


def test_perfect_in_the_kaggle_face_and_in_kaggle_environments():
    random.seed(3)
    env = vk.make("connectx")
    env.run(["perfect", "negamax"])
    assert [s.reward for s in env.state] == [1, -1]
    first = [s[0].action for s in env.steps]
    random.seed(3)
    env.run(["perfect", "negamax"])
    assert [s[0].action for s in env.steps] == first
    # kaggle-environments itself runs it as a callable
    theirs = reference.make("connectx", debug=True)
    theirs.run(["negamax", kaggle_agents.host_callable("connectx", "perfect")])
    assert [s.status for s in theirs.state] == ["DONE", "DONE"]
    assert theirs.state[1].reward in (0, 1)
    # the arena client's policy of the same name
    policy = kaggle_policy("connectx", "perfect")
    board = board_of(WIN_IN_THREE).tolist()
    assert policy({"observation": {"board": board, "mark": 1}, "configuration": {}}) in (1, 4)


def test_perfect_as_the_aisysproj_opponent_continues_a_run_identically():
    """Its moves depend on the position and its seat's stream only (never on its table): a run
    continued from its state alone, in a fresh environment, gets the same replies."""
    from vecenv import aisys
    from vecenv.aisys import EnvInfo, RunData

    def make():
        info = EnvInfo(display_name="c4", identifier="c4")
        return aisys.ConnectX(info, {"opponent": "perfect", "seat": 1})

    def data(state):
        return RunData(action_history=[], state=state, outcome=None, run_id=1, agent_name="a")

    live = make()
    state = live.new_run(seed=5)
    assert state["steps"][0][0] is not None  # perfect moved first
    rng = random.Random(0)
    while True:
        request = live.get_action_request(data(state))
        move = rng.choice(request.content["legal"])
        answer = live.act(move, data(state))
        assert make().act(move, data(state)) == answer  # played again from the state alone
        if answer.outcome is not None:
            break
        state = answer.new_state


def test_perfect_in_the_opening_sees_wins_and_losses_forced_within_its_horizon():
    agent = perfect.Perfect(table_size=solver.SMALL_TABLE)

    def moves(board, mark, count=64):
        rngs = np.zeros(count, dtype=AGENT_RNG)
        rngs["rng"] = np.arange(1, count + 1, dtype=np.uint64) * 0x9E3779B97F4A7C15
        obs = {"board": np.stack([board] * count), "mark": np.full(count, mark)}
        return set(agent.act(obs, rngs).tolist())

    # Mark 1 forces a win in three plies by 1 or 4 (both ends of three open): it takes it.
    assert moves(board_of(WIN_IN_THREE), 1) == {1, 4}
    # Mark 2 to move against 2 and 3 on the bottom row: anywhere but 1 or 4 lets mark 1 make
    # three with both ends open, and win two plies later. The centre (3) is not safe; of 1 and
    # 4, 4 is nearer the centre.
    board = board_of("263")
    assert moves(board, 2) == {4}
    for column in (0, 2, 3, 5, 6):
        assert SHARED.score(child_of(board, column))[0] >= (43 - 7) // 2  # mark 1 wins soon
    # Every move loses at once: all are as good, the latest loss.
    assert moves(board_of(LOST), 2) == set(range(7))
    # Nothing forced: the centre.
    assert moves(board_of(""), 1) == {3}
