"""2048 over one episode's record, move for move as OpenSpiel's ``2048``.

The board holds each tile's exponent (0 empty, k for 2**k). A move treats the four lines in its
direction independently: each line's tiles slide towards the leading edge and two equal
neighbours merge, nearest the edge first, each tile merging at most once (OpenSpiel's traversal).
The record keeps the legal moves for the next step and the observation, and which tiles the
last move made by merging: OpenSpiel's legal moves leave those flags from the last move in place,
so a move whose only change would be a merge into such a tile is not legal there, nor here.
Where that leaves no legal move on a board OpenSpiel plays on (a full board whose only pairs were
just merged), OpenSpiel offers none and would be stuck: here every move that changes the board is
legal then.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed
from vecenv.kernels.rng import integer, uniform

SIDE = 4
CELLS = 16
MOVES = 4
MAX_EXPONENT = 17  # 2**17 = 131072, the largest tile a 4x4 board can hold
# LINES[move, line] lists the line's cells from the leading edge (where tiles slide to).
LINES = np.array(
    [
        [[c, c + 4, c + 8, c + 12] for c in range(4)],  # up
        [[4 * r + 3, 4 * r + 2, 4 * r + 1, 4 * r] for r in range(4)],  # right
        [[c + 12, c + 8, c + 4, c] for c in range(4)],  # down
        [[4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3] for r in range(4)],  # left
    ],
    dtype=np.int64,
)

# ``step`` draws from the episode's stream (the new tile and its cell): a search draws that
# chance from a stream of its own (the protocol's CHANCE).
CHANCE = True

FIELDS = [
    ("board", np.int8, (CELLS,)),
    ("legal", np.uint8, (MOVES,)),
    ("merged", np.uint8, (CELLS,)),
]

NO_MERGES = np.zeros(CELLS, dtype=np.uint8)

STATE_BOUNDS = {"board": (0, MAX_EXPONENT), "legal": (0, 1), "merged": (0, 1)}


@nb.njit(cache=True, error_model="numpy", inline="always")
def slides(board, merged, move):
    """Whether ``move`` changes ``board`` (as OpenSpiel judges it): a tile with a gap ahead, or
    an equal neighbour ahead that the last move did not make by merging."""
    for line in range(SIDE):
        cells = LINES[move, line]
        for k in range(1, SIDE):
            here = board[cells[k]]
            ahead = board[cells[k - 1]]
            if here != 0 and (ahead == 0 or (ahead == here and not merged[cells[k - 1]])):
                return True
    return False


@nb.njit(cache=True, error_model="numpy", inline="always")
def fill_legal(s, merged):
    any_legal = False
    for m in range(MOVES):
        s.legal[m] = slides(s.board, merged, m)
        any_legal |= s.legal[m] != 0
    return any_legal


@nb.njit(cache=True, error_model="numpy", inline="always")
def find_legal(s):
    """The legal moves into ``s.legal``; False when no move changes the board (the end)."""
    return fill_legal(s, s.merged) or fill_legal(s, NO_MERGES)


@nb.njit(cache=True, error_model="numpy", inline="always")
def spawn(s):
    """A 2 (probability 0.9) or a 4 on an empty cell chosen uniformly."""
    empty = 0
    for c in range(CELLS):
        empty += s.board[c] == 0
    pick = integer(s, empty)
    value = 1 if uniform(s) < 0.9 else 2
    for c in range(CELLS):
        if s.board[c] == 0:
            if pick == 0:
                s.board[c] = value
                return
            pick -= 1


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.board[:] = 0
    s.merged[:] = 0
    spawn(s)
    spawn(s)
    find_legal(s)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    move = actions[0]
    rewards[0] = 0.0
    if not s.legal[move]:
        return 0  # no move: the board stays, no tile appears
    board = s.board
    score = 0
    top = 0
    for line in range(SIDE):
        cells = LINES[move, line]
        out = 0  # where the next tile lands
        merged = False  # whether the tile at out - 1 came from a merge
        for k in range(SIDE):
            tile = board[cells[k]]
            s.merged[cells[k]] = 0
            if tile == 0:
                continue
            board[cells[k]] = 0
            if out > 0 and not merged and board[cells[out - 1]] == tile:
                board[cells[out - 1]] = tile + 1
                s.merged[cells[out - 1]] = 1
                score += 1 << (tile + 1)
                top = max(top, tile + 1)
                merged = True
            else:
                board[cells[out]] = tile
                out += 1
                merged = False
    rewards[0] = score
    if cfg.max_tile > 0 and top > 0 and (1 << top) == cfg.max_tile:
        s.legal[:] = 0
        return 1
    spawn(s)
    return 0 if find_legal(s) else 1


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[0][i, 0]
    for c in range(CELLS):
        board[c] = 0 if s.board[c] == 0 else 1 << s.board[c]
    legal = obs[1][i, 0]
    for m in range(MOVES):
        legal[m] = s.legal[m] != 0


def _legal(board, merged):
    for flags in (merged, NO_MERGES):
        legal = np.array([slides(board, flags, m) for m in range(MOVES)], dtype=np.uint8)
        if legal.any():
            return legal
    return legal


def check_state(records, config):
    """``legal`` holds the moves that change the board."""
    for record in np.atleast_1d(records):
        legal = _legal(record["board"], record["merged"])
        if (record["legal"] != legal).any() and record["legal"].any():
            return "invalid state: legal must be the moves that change the board"
    return None


def position(record, config, given):
    """A position from the tiles' values (0 or powers of two from 2)."""
    values = observed(given, "board", None)
    if values is None:
        raise PositionError("observation.board", "a 2048 position is its board")
    exponents = np.zeros(CELLS, dtype=np.int8)
    for c, value in enumerate(values.reshape(-1).tolist()):  # one agent: (1, 16)
        if value != 0 and (value < 2 or value & (value - 1)):
            raise PositionError(f"observation.board[{c}]", f"{value} is no tile (0, 2, 4, 8, ...)")
        exponents[c] = 0 if value == 0 else value.bit_length() - 1
    record["board"] = exponents
    record["merged"] = 0
    record["legal"] = _legal(exponents, record["merged"])
