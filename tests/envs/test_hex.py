"""Hex beside Pgx's ``hex``: the same legal masks (the swap included), boards, observation planes,
ends and rewards.

Random games are played in Pgx and in ours side by side, ply by ply, the moves drawn among the
legal ones (the swap taken in half the games where it is legal, and in some games an action drawn
among all, so that illegal ones end them as Pgx rules), on 11x11 and on small boards where games
end sooner. Pgx (with jax) is a test extra: its ``init`` and ``step`` are jitted over the batch
once per size.
"""

import functools
from collections import Counter

import numpy as np
import pytest

import vecenv
from tests.envs.reference import need
from vecenv import selfplay
from vecenv.envs.hex.rules import planes
from vecenv.kernels.turns import DONE, INVALID


@functools.cache
def pgx_hex(size):
    """jax, and Pgx's Hex ``init`` and ``step`` jitted over a batch."""
    jax = need("jax", "jax (Pgx's)")
    hex_ = need("pgx.hex", "Pgx")
    env = hex_.Hex(size=size)
    return jax, jax.jit(jax.vmap(env.init)), jax.jit(jax.vmap(env.step))


def colours(board, colour):
    """Pgx's board (chain ids: positive the player to move's, ``colour`` 0 black or 1 white) as
    ours: 0 empty, 1 black, 2 white."""
    mine = np.where(colour[:, None] == 0, 1, 2)
    return np.where(board > 0, mine, np.where(board < 0, 3 - mine, 0)).astype(np.int8)


def play_both(size, games, seed, illegal=0.0):
    """``games`` random games in Pgx and ours, compared after every ply; returns what they went
    through."""
    jax, init, step = pgx_hex(size)
    cells = size * size
    theirs = init(jax.random.split(jax.random.key(seed), games))
    order = np.asarray(theirs._player_order)  # Pgx's player id of black and of white
    ours = vecenv.make("hex", num_envs=games, seed=seed, autoreset="disabled", size=size)
    rng = np.random.default_rng(seed)
    rows = np.arange(games)
    live = np.ones(games, dtype=bool)
    seen = Counter()
    for ply in range(cells + 2):
        legal = ours.obs["legal"].copy()
        actions = np.zeros(games, dtype=np.int32)
        for g in np.flatnonzero(live):
            if rng.random() < illegal:
                actions[g] = rng.integers(cells + 1)
            elif legal[g, cells] and rng.random() < 0.5:
                actions[g] = cells
            else:
                actions[g] = rng.choice(np.flatnonzero(legal[g]))
        was_legal = legal[rows, actions]
        seen["swaps"] += int((live & was_legal & (actions == cells)).sum())
        theirs = step(theirs, actions)
        board, colour, mask, rewards, terminated, observation = jax.device_get(
            (
                theirs._x.board,
                theirs._x.color,
                theirs.legal_action_mask,
                theirs.rewards,
                theirs.terminated,
                theirs.observation,
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
            ours.obs["board"][placed], colours(board, colour)[placed], err_msg=where
        )
        going = live & ~terminated
        np.testing.assert_array_equal(ours.obs["legal"][going], mask[going], err_msg=where)
        np.testing.assert_array_equal(ours.obs["turn"][going], colour[going] + 1, err_msg=where)
        mine = planes(ours.obs["board"], ours.obs["turn"], ours.obs["legal"][:, cells])
        np.testing.assert_array_equal(mine[going], observation[going], err_msg=where)
        for g in np.flatnonzero(live & terminated):
            seen[
                "illegal" if not was_legal[g] else "black won" if ply % 2 == 0 else "white won"
            ] += 1
        seen["games"] += int((live & terminated).sum())
        live &= ~terminated
        if not live.any():
            break
    assert not live.any()
    return seen


def test_random_11x11_games_are_pgxs():
    seen = play_both(11, 48, seed=1, illegal=0.004)
    assert seen["games"] == 48 and seen["swaps"] > 0
    for end in ("illegal", "black won", "white won"):
        assert seen[end] > 0, (end, seen)


def test_more_11x11_games_are_pgxs():
    seen = play_both(11, 32, seed=2)
    assert seen["games"] == 32 and seen["swaps"] > 0


# ---- other sizes: Pgx plays 11x11 only (its state's board has 121 cells); boards up to 11x11
# share one compiled engine, larger ones another -------------------------------------------------


def plain_winner(board, size):
    """The mark that has joined its sides on ``board`` (by a flood fill), or 0."""
    steps = ((0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1))
    for mark in (1, 2):
        start = [(0, c) for c in range(size)] if mark == 1 else [(r, 0) for r in range(size)]
        todo = [p for p in start if board[p[0] * size + p[1]] == mark]
        seen = set(todo)
        while todo:
            r, c = todo.pop()
            if (r if mark == 1 else c) == size - 1:
                return mark
            for dr, dc in steps:
                n = (r + dr, c + dc)
                inside = 0 <= n[0] < size and 0 <= n[1] < size
                if inside and n not in seen and board[n[0] * size + n[1]] == mark:
                    seen.add(n)
                    todo.append(n)
    return 0


@pytest.mark.parametrize("size", [2, 3, 5, 19])
def test_other_sizes_end_when_a_flood_fill_finds_a_winner(size):
    games = 64 if size < 19 else 4
    e = vecenv.make("hex", num_envs=games, seed=size, autoreset="disabled", size=size)
    rng = np.random.default_rng(size)
    cells = size * size
    swaps = 0
    while not e.terminated.all():
        actions = np.zeros((games, 2), dtype=np.int64)
        mover = (e.obs["turn"] - 1).clip(0)
        for g in range(games):
            legal = np.flatnonzero(e.obs["legal"][g])
            if legal.size:
                swap = legal[-1] == cells and rng.random() < 0.5
                actions[g, mover[g]] = cells if swap else rng.choice(legal)
                swaps += bool(swap)
        was = e.terminated.copy()
        e.step(actions)
        for g in np.flatnonzero(~was):
            winner = plain_winner(e.obs["board"][g], size)
            assert e.terminated[g] == (winner != 0)
            if winner:
                assert e.states["reward"][g, winner - 1] == 1
    assert swaps > 0 or size == 19
    assert (e.obs["board"] == 0).any()  # the games ended before the board filled


def test_the_swap_gives_white_the_mirrored_cell_and_black_the_move():
    e = vecenv.make("hex", num_envs=1, seed=0, autoreset="disabled")
    e.step(np.array([[3, 0]]))  # black at row 0, column 3
    assert e.obs["legal"][0, 121] and e.obs["turn"][0] == 2
    e.step(np.array([[0, 121]]))
    board = e.obs["board"][0]
    assert board[3] == 0 and board[3 * 11] == 2 and (board != 0).sum() == 1
    assert e.obs["turn"][0] == 1 and not e.obs["legal"][0, 121]


def test_a_chain_across_the_board_wins_for_its_sides_only():
    e = vecenv.make("hex", num_envs=2, seed=0, autoreset="disabled", size=3)
    # Black down column 0 (rows 0-2) joins top and bottom; white's moves stay apart.
    for black, white in ((0, 2), (3, 8), (6, 0)):
        e.step(np.array([[black, 0]] * 2))
        if e.terminated.all():
            break
        e.step(np.array([[0, white]] * 2))
    assert e.terminated.all()
    np.testing.assert_array_equal(e.states["reward"], [[1, -1]] * 2)
    assert (e.states["status"] == DONE).all()


def test_an_occupied_cell_makes_the_mover_invalid():
    e = vecenv.make("hex", num_envs=1, seed=0, autoreset="disabled")
    e.step(np.array([[5, 0]]))
    e.step(np.array([[0, 5]]))
    np.testing.assert_array_equal(e.states["status"][0], [DONE, INVALID])
    np.testing.assert_array_equal(e.rewards[0], [1, -1])


def test_random_self_play_is_deterministic_across_threads():
    runs = [
        selfplay.play("hex", ("random", "random"), 1100, seed=4, num_threads=t).rewards
        for t in (1, 2)
    ]
    np.testing.assert_array_equal(*runs)
