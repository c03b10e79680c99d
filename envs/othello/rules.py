"""Othello over one episode's record, with Pgx's rules and actions.

The board's 64 squares are row-major from the top-left (a1 = 0, h8 = 63): 0 empty, 1 black
(agent 0), 2 white (agent 1). Each colour is also a bitboard (bit = square), which the moves and
flips are computed on: a shift moves every disc one square in a direction, masked where it would
wrap onto the next row. The record keeps the legal squares of the agent to move (``moves``), found
once per ply and read by both the next step and the observation. Statuses and rewards are
kaggle-environments' (``kernels/turns``).
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, require_marks, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    any_active,
    begin_rewards,
    end_step,
    mover,
    refuse,
)

SQUARES = 64
PASS = 64
EMPTY = 0
NOT_A = np.uint64(0xFEFEFEFEFEFEFEFE)  # every square but column a
NOT_H = np.uint64(0x7F7F7F7F7F7F7F7F)  # every square but column h
FULL = np.uint64(0xFFFFFFFFFFFFFFFF)
# The start: white on d4 (27) and e5 (36), black on e4 (28) and d5 (35).
START = np.zeros(SQUARES, dtype=np.int8)
START[[28, 35]] = 1
START[[27, 36]] = 2

FIELDS = [
    ("board", np.int8, (SQUARES,)),
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("bits", np.uint64, (2,)),  # black's and white's discs
    ("moves", np.uint64),  # the legal squares of the agent to move (none: it must pass)
    ("passed", np.uint8),  # the last ply was a pass
]

STATE_BOUNDS = {"board": (0, 2), "status": (0, 5), "reward": (-1, 1), "passed": (0, 1)}


@nb.njit(cache=True, error_model="numpy", inline="always")
def shift(b, d):
    """Every disc of ``b`` one square in direction ``d`` (E, W, S, N, SE, SW, NE, NW)."""
    if d == 0:
        return (b << np.uint64(1)) & NOT_A
    if d == 1:
        return (b >> np.uint64(1)) & NOT_H
    if d == 2:
        return b << np.uint64(8)
    if d == 3:
        return b >> np.uint64(8)
    if d == 4:
        return (b << np.uint64(9)) & NOT_A
    if d == 5:
        return (b << np.uint64(7)) & NOT_H
    if d == 6:
        return (b >> np.uint64(7)) & NOT_A
    return (b >> np.uint64(9)) & NOT_H


@nb.njit(cache=True, error_model="numpy")
def legal_squares(mine, theirs):
    """The squares ``mine`` may play: empty, next to a line of ``theirs`` that one of ``mine``
    closes."""
    empty = ~(mine | theirs)
    found = np.uint64(0)
    for d in range(8):
        run = shift(mine, d) & theirs
        for _ in range(5):  # a line holds at most six of theirs
            run |= shift(run, d) & theirs
        found |= shift(run, d) & empty
    return found


@nb.njit(cache=True, error_model="numpy")
def flips(mine, theirs, square):
    """The discs of ``theirs`` that a disc of ``mine`` on ``square`` turns over."""
    turned = np.uint64(0)
    start = np.uint64(1) << np.uint64(square)
    for d in range(8):
        run = np.uint64(0)
        x = shift(start, d)
        while x & theirs:
            run |= x
            x = shift(x, d)
        if x & mine:
            turned |= run
    return turned


@nb.njit(cache=True, error_model="numpy", inline="always")
def count(b):
    """The discs of bitboard ``b``."""
    b = b - ((b >> np.uint64(1)) & np.uint64(0x5555555555555555))
    b = (b & np.uint64(0x3333333333333333)) + ((b >> np.uint64(2)) & np.uint64(0x3333333333333333))
    b = (b + (b >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((b * np.uint64(0x0101010101010101)) >> np.uint64(56))


@nb.njit(cache=True, error_model="numpy", inline="always")
def finish(s):
    """The game is over: more discs win, equal counts draw."""
    black, white = count(s.bits[0]), count(s.bits[1])
    if black != white:
        winner = 0 if black > white else 1
        s.reward[winner] = 1.0
        s.reward[1 - winner] = -1.0
    s.status[0] = DONE
    s.status[1] = DONE
    s.moves = 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def hand_over(s, a):
    """Agent ``a`` has moved; the other is to move, with its legal squares."""
    s.status[a] = INACTIVE
    s.status[1 - a] = ACTIVE
    s.moves = legal_squares(s.bits[1 - a], s.bits[a])


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(SQUARES):  # a loop: an array copy would need numba's runtime, which CUDA lacks
        s.board[k] = START[k]
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[:] = 0.0
    s.bits[0] = (np.uint64(1) << np.uint64(28)) | (np.uint64(1) << np.uint64(35))
    s.bits[1] = (np.uint64(1) << np.uint64(27)) | (np.uint64(1) << np.uint64(36))
    s.moves = legal_squares(s.bits[0], s.bits[1])
    s.passed = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        square = actions[a]
        if square == PASS and s.moves == 0:
            if s.passed:
                finish(s)  # two passes in a row
            else:
                s.passed = 1
                hand_over(s, a)
        elif 0 <= square < SQUARES and (s.moves >> np.uint64(square)) & np.uint64(1):
            mine, theirs = s.bits[a], s.bits[1 - a]
            turned = flips(mine, theirs, square)
            mine |= turned | (np.uint64(1) << np.uint64(square))
            theirs &= ~turned
            s.bits[a], s.bits[1 - a] = mine, theirs
            mark = a + 1
            s.board[square] = mark
            while turned:  # each turned disc, lowest square first
                low = turned & (~turned + np.uint64(1))
                s.board[count(low - np.uint64(1))] = mark
                turned ^= low
            s.passed = 0
            if (mine | theirs) == FULL or theirs == 0:
                finish(s)
            else:
                hand_over(s, a)
        else:
            refuse(s, a)
            s.moves = 0
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[0][i]
    for c in range(SQUARES):
        board[c] = s.board[c]
    obs[1][i, 0] = 1
    obs[1][i, 1] = 2
    legal = obs[2][i]
    running = any_active(s)
    moves = s.moves
    for c in range(SQUARES):
        legal[c] = running and (moves >> np.uint64(c)) & np.uint64(1) != 0
    legal[PASS] = running and moves == 0


# ---- outside the kernels: bitboards of whole boards, checks and positions ---------------------


def bitboards(boards):
    """(records, 2) uint64: each colour's squares of (records, 64) boards."""
    weights = np.uint64(1) << np.arange(SQUARES, dtype=np.uint64)
    return np.stack(
        [
            np.bitwise_or.reduce(np.where(boards == k, weights, np.uint64(0)), axis=1)
            for k in (1, 2)
        ],
        axis=1,
    )


def _moves_of(status, bits):
    """The legal squares of the agent to move (one ACTIVE, the other INACTIVE), else none."""
    if status[0] == ACTIVE and status[1] == INACTIVE:
        return legal_squares(bits[0], bits[1])
    if status[1] == ACTIVE and status[0] == INACTIVE:
        return legal_squares(bits[1], bits[0])
    return np.uint64(0)


def check_state(records, config):
    """The bitboards are the board's and ``moves`` the legal squares of the agent to move."""
    if (records["bits"] != bitboards(records["board"])).any():
        return "invalid state: bits must be the board's bitboards"
    for record in np.atleast_1d(records):
        if record["moves"] != _moves_of(record["status"], record["bits"]):
            return "invalid state: moves must be the legal squares of the agent to move"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


def position(record, config, given):
    """A position from its board (any discs), the marks, statuses and rewards; the last ply was
    no pass."""
    board = observed(given, "board", START)
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    if (board != EMPTY).sum() == 0:
        raise PositionError("observation.board", "holds no disc (a game starts with four)")
    record["board"] = board
    record["bits"] = bitboards(board[None, :])[0]
    write_turns(record, given, (ACTIVE, INACTIVE))
    record["moves"] = _moves_of(record["status"], record["bits"])
    record["passed"] = 0
