"""Kaggle's ConnectX over one episode's record.

The board is ``rows`` x ``columns`` cells, row-major with the top row first: 0 empty, 1 and 2 the
agents' marks. Agent 0 (mark 1) moves first; the mover drops a checker into a column, where it
falls to the lowest empty cell. Statuses and rewards are kaggle-environments' (``kernels/turns``):
a win sets +1/-1 and ends the episode, a full board ends it with 0/0, a move into a full column
(or off the board) makes the mover INVALID and the other agent DONE.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, require_marks, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    INACTIVE,
    any_active,
    begin_rewards,
    end_step,
    mover,
    refuse,
    settle,
)

EMPTY = 0


def FIELDS(config):
    return [
        ("board", np.int8, (config["rows"] * config["columns"],)),
        ("status", np.int8, (2,)),
        ("reward", np.float64, (2,)),
        # Derived from the board, kept so a move costs O(1): checkers per column, checkers in
        # all, and the column of the last checker dropped (-1 when the last step dropped none).
        ("height", np.int64, (config["columns"],)),
        ("filled", np.int64),
        ("last", np.int64),
        # Where the board fits 64 bits (columns * (rows + 1) <= 64), each mark's checkers as a
        # bitboard: column c's rows from the bottom up are bits c * (rows + 1) + 0 .. rows - 1,
        # and bit rows of each column stays clear, so a line never runs from one column's top
        # into the next column's bottom. Zero where the board does not fit.
        ("bits", np.uint64, (2,)),
    ]


@nb.njit(cache=True, error_model="numpy")
def fits_bits(rows, columns):
    """Whether a rows x columns board has its bitboards (see FIELDS)."""
    return columns * (rows + 1) <= 64


def bitboards(boards, rows, columns):
    """The bitboards of stacked boards (records, rows * columns): (records, 2) uint64."""
    out = np.zeros((boards.shape[0], 2), dtype=np.uint64)
    if not fits_bits(rows, columns):
        return out
    cells = boards.reshape(-1, rows * columns)
    # Cell (r, c)'s bit, row-major as the board: whole-array operations, as a search checks the
    # records it is given on every call.
    r, c = np.divmod(np.arange(rows * columns), columns)
    bits = np.uint64(1) << (c * (rows + 1) + rows - 1 - r).astype(np.uint64)
    for k in range(2):
        out[:, k] = np.bitwise_or.reduce(np.where(cells == k + 1, bits, np.uint64(0)), axis=1)
    return out


STATE_BOUNDS = {"board": (0, 2), "status": (0, 5)}


def check_state(records, config):
    """The board must be one play can reach (checkers stacked from the bottom; the counts as
    the board says): the kernels take a column's height instead of searching it."""
    rows, columns = config["rows"], config["columns"]
    boards = records["board"].reshape(-1, rows, columns)
    filled = boards != EMPTY
    height = filled.sum(axis=1)
    # Stacked: in each column the filled cells are exactly the bottom ``height`` ones.
    below = np.arange(rows)[None, :, None] >= rows - height[:, None, :]
    if (filled != below).any():
        return "invalid state: a checker floats above an empty cell"
    if (records["height"] != height).any() or (records["filled"] != height.sum(axis=1)).any():
        return "invalid state: height and filled must count the board's checkers"
    last = records["last"]
    if ((last < -1) | (last >= columns)).any():
        return "invalid state: last must be -1 or a column"
    played = np.take_along_axis(height, np.maximum(last, 0)[:, None], axis=1)[:, 0]
    if ((last >= 0) & (played == 0)).any():
        return "invalid state: last must be -1 or a column holding a checker"
    if (records["bits"] != bitboards(records["board"], rows, columns)).any():
        return "invalid state: bits must be the board's bitboards"
    return None


def position(record, config, given):
    """A position from its board (checkers stacked from the bottom), Kaggle's marks, statuses
    and rewards; the counts and bitboards follow from the board, and no checker was just
    dropped (``last`` -1)."""
    rows, columns = config["rows"], config["columns"]
    board = observed(given, "board", np.zeros(rows * columns, dtype=np.int8))
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    filled = board.reshape(rows, columns) != EMPTY
    height = filled.sum(axis=0)
    floating = filled & (np.arange(rows)[:, None] < rows - height[None, :])
    if floating.any():
        row, column = np.argwhere(floating)[0]
        raise PositionError(
            "observation.board",
            f"the checker at row {row}, column {column} floats above an empty cell",
        )
    record["board"] = board
    record["height"] = height
    record["filled"] = height.sum()
    record["last"] = -1
    record["bits"] = bitboards(board[None, :], rows, columns)[0]
    write_turns(record, given, (ACTIVE, INACTIVE))


@nb.njit(cache=True, error_model="numpy", inline="always")
def drop(s, rows, columns, column, mark):
    """Put ``mark`` on the lowest empty cell of ``column`` (whose top cell is empty); returns
    its row."""
    row = rows - 1 - s.height[column]
    s.board[column + row * columns] = mark
    if fits_bits(rows, columns):
        s.bits[mark - 1] |= np.uint64(1) << np.uint64(column * (rows + 1) + s.height[column])
    s.height[column] += 1
    s.filled += 1
    s.last = column
    return row


@nb.njit(cache=True, error_model="numpy", inline="always")
def line_through(mine, cell, shift, inarow):
    """Whether ``mine`` holds ``inarow`` bits in steps of ``shift`` through bit ``cell``.

    Shifts and ands on the whole bitboard, in as many steps as doublings of the line's length:
    following the run from the cell instead stops after a number of checkers that a branch
    predictor keeps missing, a few times a move."""
    if (inarow - 1) * shift >= 64:  # no room for the line; the same for every move of a game
        return False
    starts = _extend(mine, shift, inarow, False)  # the bits a full run starts at
    covered = _extend(starts, shift, inarow, True)  # the bits on a full run
    return (covered >> np.uint64(cell)) & np.uint64(1) != 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def _extend(bits, shift, inarow, spread):
    """``bits`` combined with itself shifted by 1 .. inarow - 1 steps of ``shift``, doubling the
    length covered each time: and-ed downwards, the bits that start a run of ``inarow``; or-ed
    upwards (``spread``), the bits on a run of ``inarow`` starting at one of ``bits``."""
    length = 1
    while length < inarow:
        by = np.uint64(min(length, inarow - length) * shift)
        bits = (bits | (bits << by)) if spread else (bits & (bits >> by))
        length += min(length, inarow - length)
    return bits


@nb.njit(cache=True, error_model="numpy", inline="always")
def wins_bits(mine, rows, inarow, row, column):
    """``wins`` on the mover's bitboard: a line of ``inarow`` through the same cell, down (the
    cell is its column's top checker), across or along either diagonal."""
    h = rows + 1
    cell = column * h + rows - 1 - row
    return (
        line_through(mine, cell, 1, inarow)
        | line_through(mine, cell, h, inarow)
        | line_through(mine, cell, h - 1, inarow)
        | line_through(mine, cell, h + 1, inarow)
    )


@nb.njit(cache=True, error_model="numpy", inline="always")
def run_length(board, rows, columns, row, column, d_row, d_column, mark, limit):
    """How many of ``mark``'s checkers follow (row, column) in direction (d_row, d_column), up to
    ``limit``."""
    for i in range(1, limit + 1):
        r = row + d_row * i
        c = column + d_column * i
        if r < 0 or r >= rows or c < 0 or c >= columns or board[c + r * columns] != mark:
            return i - 1
    return limit


@nb.njit(cache=True, error_model="numpy", inline="always")
def wins(board, rows, columns, inarow, row, column, mark):
    """Whether ``mark`` at (row, column) completes ``inarow`` in a line."""
    need = inarow - 1
    return (
        run_length(board, rows, columns, row, column, 1, 0, mark, need) >= need
        or run_length(board, rows, columns, row, column, 0, 1, mark, need)
        + run_length(board, rows, columns, row, column, 0, -1, mark, need)
        >= need
        or run_length(board, rows, columns, row, column, -1, -1, mark, need)
        + run_length(board, rows, columns, row, column, 1, 1, mark, need)
        >= need
        or run_length(board, rows, columns, row, column, -1, 1, mark, need)
        + run_length(board, rows, columns, row, column, 1, -1, mark, need)
        >= need
    )


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.board[:] = EMPTY
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[:] = 0.0
    s.height[:] = 0
    s.filled = 0
    s.last = -1
    s.bits[:] = 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def board_size(s):
    """(rows, columns) from the record's own shapes: constants of the compiled code, as each
    board size has a record type of its own, so index arithmetic folds."""
    columns = s.height.shape[0]
    return s.board.shape[0] // columns, columns


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    s.last = -1
    a = mover(s)
    if a >= 0:
        board = s.board
        rows, columns = board_size(s)
        column = actions[a]
        if column < 0 or column >= columns or board[column] != EMPTY:
            refuse(s, a)
        else:
            mark = a + 1
            # On a stacked board the checker dropped is the column's topmost of its mark: where
            # Kaggle looks for a line.
            row = drop(s, rows, columns, column, mark)
            if not fits_bits(rows, columns):
                won = wins(board, rows, columns, cfg.inarow, row, column, mark)
            elif cfg.inarow == 4:
                # Kaggle's default: with the length a constant, the line test unrolls.
                won = wins_bits(s.bits[a], rows, 4, row, column)
            else:
                won = wins_bits(s.bits[a], rows, cfg.inarow, row, column)
            settle(s, a, won, s.filled == board.shape[0])
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = s.board
    out = obs[0][i]
    for c in range(board.shape[0]):
        out[c] = board[c]
    obs[1][i, 0] = 1
    obs[1][i, 1] = 2
    legal = obs[2][i]
    running = any_active(s)
    _, columns = board_size(s)
    for c in range(columns):
        legal[c] = running and board[c] == EMPTY


@nb.njit(cache=True, error_model="numpy")
def observe_step(s, cfg, obs, i):
    """``observe`` after a step, when the arrays hold this episode's observation from before it:
    only the cell dropped into and its column's legality change, or every column when it ended."""
    column = s.last
    if column >= 0:
        rows, columns = board_size(s)
        cell = column + (rows - s.height[column]) * columns
        obs[0][i, cell] = s.board[cell]
        obs[2][i, column] = s.height[column] < rows
    if not any_active(s):
        obs[2][i, :] = False
