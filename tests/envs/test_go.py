"""Go beside Pgx's ``go``: the same legal masks, boards, observation planes, rewards and ends.

Random games are played in Pgx and in ours side by side, ply by ply, the moves drawn by Python's
``random`` among the legal ones (and, in some games, among all actions, so illegal ones end them as
Pgx rules), on 9x9, 13x13 and 19x19 with komi 7.5 and on 2x2 with komi 0, where positional superko
and ties come often. Pgx (with jax) is a test extra: its ``init`` and ``step`` are jitted over the
batch once per size and komi. Where Pgx cannot start (a given position), a plain transcription of
its rules (``PlainGo``: flood fills and a list of past positions, no bookkeeping) is the reference,
under hypothesis.
"""

import functools
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import vecenv
from tests.envs.reference import need
from vecenv import selfplay
from vecenv.envs.go.rules import planes
from vecenv.kernels.position import PositionError
from vecenv.kernels.turns import DONE, INVALID

# ---- Pgx --------------------------------------------------------------------------------------


@functools.cache
def pgx_go(size, komi):
    """jax, and Pgx's Go ``init`` and ``step`` jitted over a batch."""
    jax = need("jax", "jax (Pgx's)")
    go = need("pgx.go", "Pgx")
    env = go.Go(size=size, komi=komi)
    return jax, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def colours(pgx_board):
    """Pgx's board (chain ids, black positive, white negative) as ours: 0, 1 black, 2 white."""
    return np.where(pgx_board > 0, 1, np.where(pgx_board < 0, 2, 0)).astype(np.int8)


def play_both(size, games, seed, komi=7.5, illegal=()):
    """``games`` random games in Pgx and in ours, compared after every ply; game ``g`` draws any
    action (legal or not) with probability ``illegal[g]`` (0 where not given). Returns counts of
    what the games went through."""
    jax, init, step = pgx_go(size, komi)
    points = size * size
    chance = np.zeros(games)
    chance[: len(illegal)] = illegal
    theirs = init(jax.random.split(jax.random.key(seed), games))
    order = np.asarray(theirs._player_order)  # Pgx seats black at random: its players by colour
    ours = vecenv.make("go", num_envs=games, seed=seed, autoreset="disabled", size=size, komi=komi)
    rng = random.Random(seed)
    live = np.ones(games, dtype=bool)
    seen = Counter()
    rows = np.arange(games)
    for ply in range(2 * points):
        legal = ours.obs["legal"].copy()
        actions = np.zeros(games, dtype=np.int32)
        for g in np.flatnonzero(live):
            if rng.random() < chance[g]:
                actions[g] = rng.randrange(points + 1)
            else:
                actions[g] = rng.choice(np.flatnonzero(legal[g]).tolist())
        was_legal = legal[rows, actions]
        stones = (ours.obs["board"] != 0).sum(axis=1)
        theirs = step(theirs, actions)
        board, mask, rewards, terminated, observation, colour = jax.device_get(
            (
                theirs._x.board,
                theirs.legal_action_mask,
                theirs.rewards,
                theirs.terminated,
                theirs.observation,
                theirs._x.color,
            )
        )
        both = np.zeros((games, 2), dtype=np.int64)
        both[:, ply % 2] = actions
        ours.step(both)
        where = f"size {size}, seed {seed}, ply {ply}"
        np.testing.assert_array_equal(ours.terminated[live], terminated[live], err_msg=where)
        np.testing.assert_array_equal(
            ours.rewards[live], rewards[rows[:, None], order][live], err_msg=where
        )
        placed = live & was_legal
        np.testing.assert_array_equal(
            ours.obs["board"][placed], colours(board[placed]), err_msg=where
        )
        going = live & ~terminated
        np.testing.assert_array_equal(ours.obs["legal"][going], mask[going], err_msg=where)
        np.testing.assert_array_equal(ours.obs["turn"][going], colour[going] + 1, err_msg=where)
        np.testing.assert_array_equal(
            planes(ours.obs["history"][going], ours.obs["turn"][going]),
            observation[going].astype(bool),
            err_msg=where,
        )
        # What the games went through, for the coverage checks.
        after = (ours.obs["board"] != 0).sum(axis=1)
        point = placed & (actions < points)
        seen["captures"] += int((point & (after <= stones)).sum())
        seen["chains of several taken"] += int((point & (after < stones)).sum())
        ko = ours.states["ko"] >= 0
        seen["kos"] += int((going & ko).sum())
        empty_illegal = ((ours.obs["board"] == 0) & ~ours.obs["legal"][:, :points]).sum(axis=1)
        seen["suicides refused"] += int((going & (empty_illegal > ko)).sum())
        for g in np.flatnonzero(live & terminated):
            if not was_legal[g]:
                seen["illegal"] += 1
            elif actions[g] == points and ours.states["passes"][g] == 2:
                seen["two passes"] += 1
            elif ply + 1 == 2 * points:
                seen["time over"] += 1
            else:
                seen["superko"] += 1
                continue
            black, white = PlainGo(size, ours.obs["board"][g].tolist(), 1).score()
            seen["area ties"] += int(was_legal[g] and black == white)
        seen["games"] += int((live & terminated).sum())
        live &= ~terminated
        if not live.any():
            break
    assert not live.any()
    return seen


def test_random_9x9_games_are_pgxs():
    seen = play_both(9, 96, seed=1, illegal=[0.03] * 24)
    assert seen["games"] == 96
    for event in ("captures", "chains of several taken", "kos", "suicides refused"):
        assert seen[event] > 0, (event, seen)
    for end in ("illegal", "two passes", "time over"):
        assert seen[end] > 0, (end, seen)


def test_random_13x13_games_are_pgxs():
    """13x13, Pgx's Go(size=13) (EnvPool's Go13x13), in records laid out for 13x13."""
    seen = play_both(13, 6, seed=4, illegal=[0.01] * 2)
    assert seen["games"] == 6 and seen["captures"] > 0 and seen["kos"] > 0
    e = vecenv.make("go", num_envs=1, size=13)
    assert e.states["board"].shape == (1, 15 * 14) and e.obs["legal"].shape == (1, 170)


def test_random_19x19_games_are_pgxs():
    seen = play_both(19, 3, seed=2)
    assert seen["games"] == 3 and seen["captures"] > 0 and seen["kos"] > 0


def test_tiny_boards_reach_superko_and_ties_as_pgx():
    """On 2x2 random games often repeat a position; with komi 0 area ties (white's) are common."""
    seen = play_both(2, 64, seed=3, komi=0.0)
    assert seen["superko"] > 0 and seen["two passes"] > 0 and seen["area ties"] > 0, seen


# ---- Pgx's rules, plainly ----------------------------------------------------------------------


class PlainGo:
    """Pgx's Go rules without bookkeeping: chains by flood fill, superko by a list of every
    position after a ply, the score by flood fills of the empty regions."""

    def __init__(self, size, board, turn, komi=7.5):
        self.size, self.komi = size, komi
        self.points = size * size
        self.board = list(board)
        self.turn = turn
        self.ko = -1
        self.passes = 0
        self.ply = 0
        self.past = []
        self.history = [list(board)] + [[0] * self.points] * 7
        self.rewards = [0.0, 0.0]
        self.over = False

    def neighbours(self, p):
        r, c = divmod(p, self.size)
        steps = ((-1, 0), (1, 0), (0, -1), (0, 1))
        return [
            (r + dr) * self.size + c + dc
            for dr, dc in steps
            if 0 <= r + dr < self.size and 0 <= c + dc < self.size
        ]

    def chain(self, p):
        """The stones of ``p``'s chain and its liberties."""
        stones, todo, liberties = {p}, [p], set()
        while todo:
            for n in self.neighbours(todo.pop()):
                if self.board[n] == 0:
                    liberties.add(n)
                elif self.board[n] == self.board[p] and n not in stones:
                    stones.add(n)
                    todo.append(n)
        return stones, liberties

    def liberties(self):
        """Each stone's chain's liberty count (one flood fill per chain)."""
        count = {}
        for p in range(self.points):
            if self.board[p] and p not in count:
                stones, liberties = self.chain(p)
                count.update(dict.fromkeys(stones, len(liberties)))
        return count

    def legal(self):
        if self.over:
            return [False] * (self.points + 1)
        free = self.liberties()
        mask = []
        for p in range(self.points):
            ok = False
            if self.board[p] == 0 and p != self.ko:
                for n in self.neighbours(p):
                    v = self.board[n]
                    mine, theirs = v == self.turn, v == 3 - self.turn
                    ok |= v == 0 or (mine and free[n] > 1) or (theirs and free[n] == 1)
            mask.append(ok)
        return mask + [True]

    def score(self):
        area = [self.board.count(1), self.board.count(2)]
        seen = set()
        for p in range(self.points):
            if self.board[p] or p in seen:
                continue
            region, todo, reaches = {p}, [p], set()
            while todo:
                for n in self.neighbours(todo.pop()):
                    if self.board[n]:
                        reaches.add(self.board[n])
                    elif n not in region:
                        region.add(n)
                        todo.append(n)
            seen |= region
            for colour in (1, 2):
                if 3 - colour not in reaches:
                    area[colour - 1] += len(region)
        return area

    def play(self, action):
        mover = self.turn - 1
        if action != self.points and not (0 <= action < self.points and self.legal()[action]):
            self.rewards = [1.0, 1.0]
            self.rewards[mover] = -1.0
            self.over = True
            return
        if action == self.points:
            self.passes += 1
            self.ko = -1
        else:
            self.passes = 0
            around = self.neighbours(action)
            surrounded = all(self.board[n] == 3 - self.turn for n in around)
            self.board[action] = self.turn
            taken = []
            for n in around:
                if self.board[n] == 3 - self.turn:
                    stones, liberties = self.chain(n)
                    if not liberties:
                        taken += stones
                        for x in stones:
                            self.board[x] = 0
            self.ko = taken[0] if len(taken) == 1 and surrounded else -1
        repeated = action != self.points and tuple(self.board) in self.past
        self.past.append(tuple(self.board))
        self.history = [list(self.board)] + self.history[:7]
        self.ply += 1
        if repeated:
            self.rewards = [1.0, 1.0]
            self.rewards[mover] = -1.0
        elif self.passes >= 2 or self.ply >= 2 * self.points:
            black, white = self.score()
            black_wins = np.float32(black) - np.float32(self.komi) > np.float32(white)
            self.rewards = [1.0, -1.0] if black_wins else [-1.0, 1.0]
        self.over = repeated or self.passes >= 2 or self.ply >= 2 * self.points
        self.turn = 3 - self.turn


def without_dead_chains(size, board):
    """``board`` with every chain that has no liberty taken off (a board play can reach)."""
    plain = PlainGo(size, board, 1)
    for p in range(plain.points):
        if board[p] and not plain.chain(p)[1]:
            board = list(board)
            board[p] = 0
            return without_dead_chains(size, board)
    return board


@pytest.fixture(scope="module")
def engine():
    return vecenv.make("go", num_envs=1, seed=0, autoreset="disabled")


def assert_plain(engine, plain, where):
    np.testing.assert_array_equal(engine.obs["board"][0], plain.board, err_msg=where)
    np.testing.assert_array_equal(engine.obs["legal"][0], plain.legal(), err_msg=where)
    np.testing.assert_array_equal(engine.obs["history"][0], plain.history, err_msg=where)
    assert engine.terminated[0] == plain.over, where
    # The engine's outcome: Kaggle's reward, or -1 for the INVALID agent (Kaggle's None).
    outcome = np.where(engine.states["status"][0] == INVALID, -1.0, engine.states["reward"][0])
    np.testing.assert_array_equal(outcome, plain.rewards, err_msg=where)
    assert engine.obs["turn"][0] == (0 if plain.over else plain.turn), where


BOARDS = st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=81, max_size=81)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=BOARDS, white=st.booleans(), moves=st.lists(st.integers(0, 10**6), max_size=30))
def test_positions_play_on_as_the_plain_rules(engine, board, white, moves):
    """From any reachable 9x9 position, random plies (a legal one chosen, or now and then any
    action) go as the plain rules go."""
    board = without_dead_chains(9, board)
    status = ["INACTIVE", "ACTIVE"] if white else ["ACTIVE", "INACTIVE"]
    engine.reset(position={"observation": {"board": np.array(board, np.int8)}, "status": status})
    plain = PlainGo(9, board, 2 if white else 1)
    assert_plain(engine, plain, "the position")
    for k, draw in enumerate(moves):
        if plain.over:
            break
        legal = np.flatnonzero(plain.legal())
        action = draw % 82 if draw % 7 == 0 else int(legal[draw % len(legal)])
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, plain.turn - 1] = action
        engine.step(actions)
        plain.play(action)
        assert_plain(engine, plain, f"ply {k}: {action}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=st.lists(st.sampled_from([0, 1, 2]), min_size=81, max_size=81))
def test_a_board_with_a_chain_without_liberties_is_refused(engine, board):
    before = engine.states.copy()
    reachable = without_dead_chains(9, board) == board
    position = {"observation": {"board": np.array(board, np.int8)}}
    if reachable:
        engine.reset(position=position)
        np.testing.assert_array_equal(engine.obs["board"][0], board)
    else:
        with pytest.raises(PositionError, match="without a liberty"):
            engine.reset(position=position)
        np.testing.assert_array_equal(engine.states, before)


# ---- the rules, position by position ----------------------------------------------------------


def go_from(corner, white=False, **config):
    """An engine of one 9x9 game with ``corner`` (rows of ``.XO``) in its top-left corner, the
    rest empty; black to move unless ``white``."""
    board = np.zeros((9, 9), dtype=np.int8)
    rows = [[".XO".index(v) for v in row.split()] for row in corner.strip().splitlines()]
    board[: len(rows), : len(rows[0])] = rows
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", **config)
    status = ["INACTIVE", "ACTIVE"] if white else ["ACTIVE", "INACTIVE"]
    e.reset(position={"observation": {"board": board.ravel()}, "status": status})
    return e


def at(row, column):
    return row * 9 + column


def play(e, *moves):
    """Play ``moves`` (points, or "pass") in turn from the mover."""
    for move in moves:
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, e.obs["turn"][0] - 1] = e.action.high[0] if move == "pass" else move
        e.step(actions)


def test_a_ko_is_not_retaken_at_once_but_after_a_move_elsewhere():
    e = go_from(
        """
. X O .
X O . O
. X O .
"""
    )
    play(e, at(1, 2))  # black takes the white stone at (1, 1), surrounded: a ko
    assert e.obs["board"][0][at(1, 1)] == 0 and e.states["ko"][0] >= 0
    assert not e.obs["legal"][0][at(1, 1)]  # white may not take back at once
    play(e, at(8, 8), at(8, 0))  # white and black play elsewhere
    assert e.obs["legal"][0][at(1, 1)]
    play(e, at(1, 1))  # now white takes back
    assert e.obs["board"][0][at(1, 2)] == 0 and e.obs["board"][0][at(1, 1)] == 2


def test_suicide_is_illegal_unless_it_takes_stones():
    e = go_from(
        """
. X
X .
""",
        white=True,
    )
    assert not e.obs["legal"][0][0]  # white in the corner would have no liberty
    e = go_from(
        """
. X O
X O .
O . .
""",
        white=True,
    )
    assert e.obs["legal"][0][0]  # it takes both black stones
    play(e, 0)
    assert e.obs["board"][0][at(0, 1)] == 0 and e.obs["board"][0][at(1, 0)] == 0


def test_a_stone_that_brings_back_an_earlier_position_loses():
    # 2x2, points 0 1 / 2 3. White's 3 takes black's 0 and 2, black plays 0 again, white's 2
    # takes it, and black's 0 takes white's three stones: the board after black's first 0.
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", size=2)
    play(e, 0, 1, 2, 3, 0, 2)
    np.testing.assert_array_equal(e.obs["board"][0], [0, 2, 2, 2])
    assert e.obs["legal"][0][0]  # the superko is no part of the legal mask, as in Pgx
    play(e, 0)
    np.testing.assert_array_equal(e.obs["board"][0], [1, 0, 0, 0])
    assert e.terminated[0]
    np.testing.assert_array_equal(e.rewards[0], [-1, 1])


def test_the_game_ends_after_twice_the_points_in_plies_by_the_score():
    # 2x2: 8 plies, no two passes in a row, no position repeated; black 2 points, white 1.
    for komi, rewards in ((7.5, [-1, 1]), (0.5, [1, -1])):
        e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", size=2, komi=komi)
        play(e, 0, 1, 2, 3, 0, "pass", 2)
        assert not e.terminated[0]
        play(e, 3)
        np.testing.assert_array_equal(e.obs["board"][0], [1, 0, 1, 2])
        assert e.terminated[0]
        np.testing.assert_array_equal(e.rewards[0], rewards)


def test_a_repeated_position_at_the_last_ply_loses_whatever_the_score():
    # As above, but white's last stone brings back the board after ply 3: white loses, though
    # white wins on the score (2 - 7.5 < 1).
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", size=2)
    play(e, 0, 1, 2, 3, 0, "pass", 2, 1)
    np.testing.assert_array_equal(e.obs["board"][0], [1, 2, 1, 0])
    assert e.terminated[0]
    np.testing.assert_array_equal(e.rewards[0], [1, -1])


def test_two_passes_on_an_empty_board_give_white_the_komi():
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled")
    play(e, "pass", "pass")
    assert e.terminated[0]
    np.testing.assert_array_equal(e.states["reward"][0], [-1, 1])  # 81 - 7.5 < 81


@pytest.mark.parametrize(
    ("komi", "rewards"),
    [(0.0, [-1, 1]), (-1e-9, [-1, 1]), (-0.5, [1, -1]), (1e-9, [-1, 1])],
)
def test_an_area_tie_goes_to_white_and_komi_counts_in_float32(komi, rewards):
    """Black 81 less komi against white 81, compared in float32 as Pgx compares: a komi too
    small for float32 (-1e-9) still ties, and ties are white's."""
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", komi=komi)
    play(e, "pass", "pass")
    np.testing.assert_array_equal(e.states["reward"][0], rewards)


def test_area_counts_stones_and_regions_reaching_one_colour():
    corner = """
. X O
. X O
X X O
O O O
"""
    # Black: 4 stones and the 2 points they enclose; white: 6 stones and the 69 points beyond.
    for komi, rewards in ((0.5, [-1, 1]), (-68.5, [-1, 1]), (-69.5, [1, -1])):
        e = go_from(corner, komi=komi)
        play(e, "pass", "pass")
        np.testing.assert_array_equal(e.states["reward"][0], rewards, err_msg=str(komi))


def test_an_illegal_action_loses_and_the_other_wins():
    e = vecenv.make("go", num_envs=3, seed=0, autoreset="disabled")
    e.step(np.array([[10, 0], [10, 0], [10, 0]]))
    e.step(np.array([[0, 10], [0, 11], [0, 10]]))  # 10 is taken: white loses
    np.testing.assert_array_equal(e.terminated, [True, False, True])
    np.testing.assert_array_equal(e.states["status"][[0, 2]], [[DONE, INVALID]] * 2)
    np.testing.assert_array_equal(e.rewards[[0, 2]], [[1, -1], [1, -1]])  # Pgx's: -1 and +1
    assert not e.obs["legal"][0].any() and e.obs["turn"][0] == 0


# ---- the observation planes -------------------------------------------------------------------


def test_planes_split_the_history_by_the_viewers_colour():
    history = np.zeros((8, 4), dtype=np.int8)
    history[0] = [1, 2, 0, 1]
    history[1] = [1, 0, 0, 0]
    black = planes(history, 1)
    assert black.shape == (2, 2, 17) and black.dtype == bool
    np.testing.assert_array_equal(black[..., 0].ravel(), [1, 0, 0, 1])
    np.testing.assert_array_equal(black[..., 1].ravel(), [0, 1, 0, 0])
    np.testing.assert_array_equal(black[..., 2].ravel(), [1, 0, 0, 0])
    assert not black[..., 3:16].any() and not black[..., 16].any()
    white = planes(history, 2)
    np.testing.assert_array_equal(white[..., 0], black[..., 1])
    assert white[..., 16].all()
    with pytest.raises(ValueError, match="mark"):
        planes(history, 0)


# ---- the state, determinism ------------------------------------------------------------------


def played(n=4, plies=30, seed=5):
    e = vecenv.make("go", num_envs=n, seed=seed, autoreset="disabled")
    seats = selfplay.Seats(e)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))
    seats.step(plies)
    return e


CORRUPTIONS = {
    "a border cell emptied": ("board", 0, 0),
    "a stone's chain head moved": ("chain", None, 1),
    "a chain's pseudo-liberties off by one": ("pseudo", None, 1),
    "a chain's liberty sums off": ("lsum", None, 1),
    "a chain's stone count off": ("stones", None, 1),
    "a link out of its chain": ("link", None, 1),
    "the hash": ("hash", None, 1),
    "the plies past the limit": ("ply", None, 200),
    "a third pass": ("passes", None, 2),
    "the ko on a stone": ("ko", None, None),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_a_corrupted_state_is_refused_and_changes_nothing(case):
    e = played()
    field, at, change = CORRUPTIONS[case]
    records = e.get_state()
    running = np.flatnonzero(~e.terminated)[0]
    record = records[running : running + 1].copy()
    stone = int(np.flatnonzero(record["board"][0] == 1)[0])
    if field == "board":
        record["board"][0, at] = change
    elif field in ("chain", "pseudo", "lsum", "stones", "link"):
        head = int(record["chain"][0, stone])
        target = stone if field in ("chain", "link") else head
        record[field][0, target] += change
    elif field == "ko":
        record["ko"] = stone
    elif field == "passes":
        record["passes"] = change
    else:
        record[field] += change
    before = e.states.copy()
    with pytest.raises(ValueError, match="invalid state"):
        e.set_state(record, idx=[running])
    np.testing.assert_array_equal(e.states, before)


GAME_FIELDS = ("board", "chain", "link", "stones", "pseudo", "lsum", "lsq", "ko", "passes")
GAME_FIELDS += ("ply", "hash", "hashes", "history", "newest", "work")


@pytest.fixture(scope="module")
def midgame():
    return played(n=3, plies=40, seed=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(GAME_FIELDS),
    spot=st.integers(0, 10**6),
    value=st.integers(-(2**15), 2**15 - 1),
)
def test_any_corrupted_field_is_refused_or_plays_on_safely(midgame, field, spot, value):
    """A record with one value changed is refused (ValueError, nothing changed), or it is one the
    rules run: random legal play goes on with every observation inside its bounds."""
    e = midgame
    records = e.get_state()
    flat = records[field].reshape(len(records), -1)
    row, column = spot % len(records), spot // len(records) % flat.shape[1]
    dtype = records[field].dtype
    info = np.iinfo(dtype)
    flat[row, column] = np.array(min(max(value, info.min), info.max)).astype(dtype)
    records[field] = flat.reshape(records[field].shape)
    before = e.states.copy()
    try:
        e.set_state(records)
    except ValueError:
        np.testing.assert_array_equal(e.states, before)
        return
    seats = selfplay.Seats(e)
    seats.assign("random", np.zeros(3, dtype=np.int64))
    seats.assign("random", np.ones(3, dtype=np.int64))
    for _ in range(10):
        seats.step(1)
        for f in e.observation:
            assert ((e.obs[f.name] >= f.low) & (e.obs[f.name] <= f.high)).all(), f.name
    e.set_state(before)


def test_a_state_round_trip_plays_on_alike():
    a, b = played(), played(seed=9)
    b.set_state(a.get_state())
    seats = [selfplay.Seats(e) for e in (a, b)]
    for s in seats:
        s.assign("random", np.zeros(4, dtype=np.int64))
        s.assign("random", np.ones(4, dtype=np.int64))
    # The agents' streams differ (another seed): play the same moves instead.
    actions = np.zeros((4, 2), dtype=np.int64)
    for _ in range(40):
        seats[0].moves(actions)
        for e in (a, b):
            e.step(actions)
        for name in a.obs:
            np.testing.assert_array_equal(a.obs[name], b.obs[name], err_msg=name)
        np.testing.assert_array_equal(a.rewards, b.rewards)
