"""ConnectX's built-in agents, "random" and "negamax", as numba policies (``kernels/agents``), and
"perfect", a host agent (``HOST_AGENTS``: it moves from Python, batched, keeping a solver's table).

"random" drops into a uniform column among those whose top cell is empty.

"negamax" is Kaggle's negamax agent: a depth-4 negamax over the moves, where a node
- scores 0 on a full board;
- else, if the mover can win at once, scores ``(size + 1 - moves) / 2`` (``size`` the number of
  cells, ``moves`` the checkers on the board), the first such column (in column order) its move;
- else scores each open column, the best score its own: at depth 0 (four moves below the root)
  a column scores ``(size + 1 - moves) / 2`` plus one for each of the mover's checkers left of,
  right of, above and below the cell the checker would land on (below only while that cell's row
  is less than ``rows - 2``, as Kaggle counts it), above depth 0 the child node's negated score.
A node's best score starts at ``-size``; a column scoring more replaces it and one scoring the same
replaces it on a fair coin (drawn from the agent's stream). Only the root's choice of column is
played, so coins are drawn there only: the inner nodes' scores do not depend on their coins, and
the chosen column has the same distribution as Kaggle's. When no column was chosen the agent plays
a uniform open column.

The search runs on bitboards when the board fits 64 bits (``columns * (rows + 1) <= 64``, at least
two columns; 6 x 7 takes 49 bits) and holds as play reaches it (checkers stacked from the bottom,
marks 1 and 2 only): a column is ``rows + 1`` bits from the bottom up, the top one always clear,
so a shift along a line steps off the board onto a clear bit, never onto another cell. The cells
where the mover's checker would complete a line are then a few shifts and ands of its checkers
(the runs of its checkers ending next to a cell on either side, whose lengths add up to
``inarow - 1``, vertically only the run below as Kaggle counts it), the cells a checker would land
on are ``(occupied + bottom row) & board``, and the proximity bonus is the most neighbours any of
those cells has. The cells where a player completes a line depend on that player's checkers only,
so a node finds its opponent's once for all its children. Other boards take the same search on
the board array itself: same scores, same columns, same coins.

The board array search plays and takes back checkers on one scratch board (the agent's
``memory``), the bitboard one keeps its positions in registers, so a call allocates nothing.
``MEMORY`` is therefore a function of the configuration, as a game's ``FIELDS`` may be:
``MEMORY(config)`` is ``rows * columns`` words. Given a shorter ``memory`` (never from the engine),
negamax plays a uniform open column.

``negamax_column`` and ``negamax_scores`` are the search itself, for other callers and tests:
``negamax_column`` takes a coin mode (random, or Python's ``random.choice`` always returning the
first or always the last option); ``negamax_scores`` writes the root's score of every column.
Both take ``bits``: False keeps them on the board array search, whatever the board.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer

from .rules import EMPTY, wins
from .rules import fits_bits as rules_fit_bits

NAMES = ("random", "negamax")
RANDOM = 0
NEGAMAX = 1
# Agents that move from Python: "perfect" keeps a transposition table of megabytes between moves,
# more than an agent's per-match words hold (``perfect.Perfect``).
HOST_AGENTS = ("perfect",)
STANDARD = {"rows": 6, "columns": 7, "inarow": 4}

# Kaggle's search depth.
DEPTH = 4

# How the search breaks ties: a fair coin from the agent's stream, or as Python's random.choice
# would were it to return always the first option (the coin says True; the fallback column is the
# first open one) or always the last (the coin says False; the last open column).
COIN_RANDOM = 0
COIN_FIRST = 1
COIN_LAST = 2


def MEMORY(config):
    """The words one agent keeps: negamax's scratch board."""
    return int(config["rows"]) * int(config["columns"])


@nb.njit(cache=True, error_model="numpy", inline="always")
def lowest_empty(board, rows, columns, column):
    """The lowest empty row of ``column``, whose top cell is empty."""
    row = rows - 1
    while board[column + row * columns] != EMPTY:
        row -= 1
    return row


@nb.njit(cache=True, error_model="numpy")
def winning_column(board, rows, columns, inarow, mark):
    """The first open column where ``mark`` would complete a line, or -1."""
    for column in range(columns):
        if board[column] == EMPTY:
            row = lowest_empty(board, rows, columns, column)
            if wins(board, rows, columns, inarow, row, column, mark):
                return column
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def leaf_score(board, rows, columns, mark, moves, column):
    """The score of open ``column`` below depth 0: the base plus the proximity bonus."""
    size = rows * columns
    row = lowest_empty(board, rows, columns, column)
    score = (size + 1 - moves) / 2.0
    if column > 0 and board[row * columns + column - 1] == mark:
        score += 1.0
    if column < columns - 1 and board[row * columns + column + 1] == mark:
        score += 1.0
    if row > 0 and board[(row - 1) * columns + column] == mark:
        score += 1.0
    if row < rows - 2 and board[(row + 1) * columns + column] == mark:
        score += 1.0
    return score


@nb.njit(cache=True, error_model="numpy")
def node_score(board, rows, columns, inarow, mark, depth, moves):
    """A node's score for ``mark`` to move with ``moves`` checkers on ``board`` (restored on
    return)."""
    size = rows * columns
    if moves == size:
        return 0.0
    if winning_column(board, rows, columns, inarow, mark) >= 0:
        return (size + 1 - moves) / 2.0
    best = -1.0 * size
    other = 1 if mark == 2 else 2
    for column in range(columns):
        if board[column] == EMPTY:
            if depth <= 0:
                score = leaf_score(board, rows, columns, mark, moves, column)
            else:
                row = lowest_empty(board, rows, columns, column)
                board[column + row * columns] = mark
                score = -node_score(board, rows, columns, inarow, other, depth - 1, moves + 1)
                board[column + row * columns] = EMPTY
            if score > best:
                best = score
    return best


@nb.njit(cache=True, error_model="numpy", inline="always")
def column_score(board, rows, columns, inarow, mark, depth, moves, column):
    """The root's score of open ``column``."""
    if depth <= 0:
        return leaf_score(board, rows, columns, mark, moves, column)
    row = lowest_empty(board, rows, columns, column)
    board[column + row * columns] = mark
    other = 1 if mark == 2 else 2
    score = -node_score(board, rows, columns, inarow, other, depth - 1, moves + 1)
    board[column + row * columns] = EMPTY
    return score


# -- the bitboard search ------------------------------------------------------------------------

ZERO = np.uint64(0)
ONE = np.uint64(1)
ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, error_model="numpy")
def fits_bits(rows, columns):
    """Whether the bitboard search takes a ``rows`` x ``columns`` board: one with the rules'
    bitboards, of two columns or more."""
    return columns >= 2 and rows >= 1 and rules_fit_bits(rows, columns)


@nb.njit(cache=True, error_model="numpy")
def bitboards(board, rows, columns, mark):
    """``(ok, mine, theirs)``: the checkers of ``mark`` and of the other mark as bitboards, ``ok``
    False (and the search left to the board array) unless the board fits, ``mark`` is 1 or 2 and
    every column is stacked from the bottom with those two marks."""
    mine = ZERO
    theirs = ZERO
    if not fits_bits(rows, columns) or (mark != 1 and mark != 2):
        return False, mine, theirs
    other = 1 if mark == 2 else 2
    for column in range(columns):
        bit = ONE << (column * (rows + 1))
        empty_below = False
        for row in range(rows - 1, -1, -1):
            value = board[column + row * columns]
            if value == EMPTY:
                empty_below = True
            elif empty_below:
                return False, mine, theirs
            elif value == mark:
                mine |= bit
            elif value == other:
                theirs |= bit
            else:
                return False, mine, theirs
            bit <<= 1
    return True, mine, theirs


@nb.njit(cache=True, error_model="numpy")
def geometry(rows, columns, inarow):
    """The bitboard search's constants: the column stride, the board's cells, its bottom row, the
    cells two or more above the bottom (whose checker below counts for the proximity bonus),
    ``inarow - 1`` and which lines can hold ``inarow`` checkers (vertical, horizontal,
    diagonal)."""
    stride = rows + 1
    board = ZERO
    bottom = ZERO
    if fits_bits(rows, columns):  # else unused, and the shifts could pass 63
        for column in range(columns):
            board |= ((ONE << rows) - ONE) << (column * stride)
            bottom |= ONE << (column * stride)
    high = board & ~(bottom | (bottom << 1))
    need = inarow - 1
    return (
        stride,
        board,
        bottom,
        high,
        need,
        need < rows,
        need < columns,
        need < min(rows, columns),
    )


@nb.njit(cache=True, error_model="numpy", inline="always")
def line_cells(mine, shift, need):
    """The cells with ``need`` of ``mine`` beside them on the line through them in direction
    ``shift``: ``a`` just before and ``need - a`` just after, for some ``a``. Every shift stays
    below 64: the line holds ``need + 1`` cells on the board."""
    cells = ZERO
    before = ALL
    for a in range(need + 1):
        if a > 0:
            before &= mine << (a * shift)
        after = before
        for b in range(1, need - a + 1):
            after &= mine >> (b * shift)
        cells |= after
    return cells


@nb.njit(cache=True, error_model="numpy", inline="always")
def winning_cells(mine, geo):
    """The cells where a checker completes a line of ``mine`` (some off the board, or taken)."""
    stride, _, _, _, need, vertical, horizontal, diagonal = geo
    if need <= 0:
        return ALL
    cells = ZERO
    if vertical:
        below = ALL
        for k in range(1, need + 1):
            below &= mine << k
        cells |= below
    if horizontal:
        cells |= line_cells(mine, stride, need)
    if diagonal:
        cells |= line_cells(mine, stride + 1, need) | line_cells(mine, stride - 1, need)
    return cells


@nb.njit(cache=True, error_model="numpy", inline="always")
def landing_cells(occupied, geo):
    """The lowest empty cell of every open column."""
    return (occupied + geo[2]) & geo[1]


@nb.njit(cache=True, error_model="numpy", inline="always")
def bonus(mine, cells, geo):
    """The most checkers of ``mine`` beside any of ``cells``: left, right, and below (two or
    more rows above the bottom). The cell above one that a checker lands on is empty."""
    stride = geo[0]
    left = (mine << stride) & cells
    right = (mine >> stride) & cells
    below = (mine << 1) & cells & geo[3]
    if (left & right) | (left & below) | (right & below):
        return 3.0 if left & right & below else 2.0
    return 1.0 if left | right | below else 0.0


@nb.njit(cache=True, error_model="numpy")
def bits_node(mine, theirs, wins_mine, depth, moves, size, geo):
    """``node_score`` on bitboards, ``wins_mine`` the cells where the mover completes a line."""
    if moves == size:
        return 0.0
    occupied = mine | theirs
    cells = landing_cells(occupied, geo)
    if cells & wins_mine:
        return (size + 1 - moves) / 2.0
    if depth <= 0:
        return (size + 1 - moves) / 2.0 + bonus(mine, cells, geo)
    wins_theirs = winning_cells(theirs, geo)
    best = -1.0 * size
    rest = cells
    while rest:
        cell = rest & (ZERO - rest)
        rest ^= cell
        if depth == 1:  # the child's leaf score, here
            if moves + 1 == size:
                score = -0.0
            else:
                below = landing_cells(occupied | cell, geo)
                score = -(size - moves) / 2.0
                if not below & wins_theirs:
                    score -= bonus(theirs, below, geo)
        else:
            score = -bits_node(theirs, mine | cell, wins_theirs, depth - 1, moves + 1, size, geo)
        if score > best:
            best = score
    return best


@nb.njit(cache=True, error_model="numpy", inline="always")
def bits_column_score(mine, theirs, depth, moves, size, geo, cell):
    """``column_score`` on bitboards: the root's score of the column ``cell`` lands in."""
    if depth <= 0:
        return (size + 1 - moves) / 2.0 + bonus(mine, cell, geo)
    wins_theirs = winning_cells(theirs, geo)
    return -bits_node(theirs, mine | cell, wins_theirs, depth - 1, moves + 1, size, geo)


@nb.njit(cache=True, error_model="numpy", inline="always")
def column_cell(cells, column, rows):
    """The one of ``cells`` in ``column``."""
    return cells & (((ONE << rows) - ONE) << (column * (rows + 1)))


@nb.njit(cache=True, error_model="numpy", inline="always")
def bits_winning_column(mine, theirs, rows, columns, geo):
    """``winning_column`` on bitboards."""
    cells = landing_cells(mine | theirs, geo) & winning_cells(mine, geo)
    for column in range(columns):
        if column_cell(cells, column, rows):
            return column
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def count_moves(board):
    moves = 0
    for k in range(board.shape[0]):
        if board[k] != EMPTY:
            moves += 1
    return moves


@nb.njit(cache=True, error_model="numpy", inline="always")
def coin(r, coin_mode):
    if coin_mode == COIN_FIRST:
        return True
    if coin_mode == COIN_LAST:
        return False
    return integer(r, 2) == 0


@nb.njit(cache=True, error_model="numpy")
def open_column(board, columns, r, coin_mode):
    """The fallback: an open column (uniform, the first or the last one), or -1 if none."""
    if coin_mode == COIN_RANDOM:
        return random_column(r, board, columns)
    found = -1
    for column in range(columns):
        if board[column] == EMPTY:
            found = column
            if coin_mode == COIN_FIRST:
                return found
    return found


@nb.njit(cache=True, error_model="numpy", inline="always")
def root(board, rows, columns, inarow, mark, bits):
    """What the root's search starts from: ``(ok, mine, theirs, geo, found)``, the bitboards
    (``ok`` False: the search runs on the board array), the search's constants and the "can win
    next" column (-1 when none)."""
    ok, mine, theirs = bitboards(board, rows, columns, mark)
    ok = ok and bits
    geo = geometry(rows, columns, inarow)
    if ok:
        found = bits_winning_column(mine, theirs, rows, columns, geo)
    else:
        found = winning_column(board, rows, columns, inarow, mark)
    return ok, mine, theirs, geo, found


@nb.njit(cache=True, error_model="numpy", inline="always")
def root_score(board, rows, columns, inarow, mark, depth, moves, column, ok, mine, theirs, geo):
    """The root's score of open ``column``, on the bitboards where ``ok``."""
    if ok:
        cell = column_cell(landing_cells(mine | theirs, geo), column, rows)
        return bits_column_score(mine, theirs, depth, moves, rows * columns, geo, cell)
    return column_score(board, rows, columns, inarow, mark, depth, moves, column)


@nb.njit(cache=True, error_model="numpy")
def negamax_column(board, rows, columns, inarow, mark, depth, r, coin_mode, bits=True):
    """Kaggle's negamax move for ``mark`` on ``board`` (a scratch copy of the rows * columns
    board, restored on return), or -1 when no column is open. Ties at the root break by
    ``coin_mode``, drawing from ``r`` when it is ``COIN_RANDOM``."""
    size = rows * columns
    moves = count_moves(board)
    best_column = -1
    if moves != size:
        ok, mine, theirs, geo, best_column = root(board, rows, columns, inarow, mark, bits)
        if best_column < 0:
            best = -1.0 * size
            for column in range(columns):
                if board[column] == EMPTY:
                    score = root_score(
                        board,
                        rows,
                        columns,
                        inarow,
                        mark,
                        depth,
                        moves,
                        column,
                        ok,
                        mine,
                        theirs,
                        geo,
                    )
                    if score > best or (score == best and coin(r, coin_mode)):
                        best = score
                        best_column = column
    if best_column < 0:
        best_column = open_column(board, columns, r, coin_mode)
    return best_column


@nb.njit(cache=True, error_model="numpy")
def negamax_scores(board, rows, columns, inarow, mark, depth, scores, bits=True):
    """The root's search without its choice: returns the column the "can win next" scan picks
    (-1 when none, or when the board is full), else writes each open column's score into
    ``scores`` (``columns`` floats; -inf for a full column) and returns -1."""
    size = rows * columns
    moves = count_moves(board)
    scores[:] = -np.inf
    if moves == size:
        return -1
    ok, mine, theirs, geo, found = root(board, rows, columns, inarow, mark, bits)
    if found >= 0:
        return found
    for column in range(columns):
        if board[column] == EMPTY:
            scores[column] = root_score(
                board, rows, columns, inarow, mark, depth, moves, column, ok, mine, theirs, geo
            )
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def random_column(r, board, columns):
    """A uniform column among those whose top cell is empty (-1 when none), found from the board
    itself: agents read only what Kaggle's observation holds, which has no ``legal`` mask."""
    count = 0
    for c in range(columns):
        count += board[c] == EMPTY
    if count == 0:
        return -1
    pick = integer(r, count)
    # The open column numbered ``pick`` is the number of columns with at most ``pick`` open ones
    # up to and including them: a count, where a search would exit at a random column, a branch
    # the processor mispredicts about every other call.
    seen = 0
    column = 0
    for c in range(columns):
        seen += board[c] == EMPTY
        column += seen <= pick
    return column


@nb.njit(cache=True, error_model="numpy")
def negamax_act(obs, i, player, cfg, memory, r):
    """Negamax on a copy of the board in ``memory``; with a ``memory`` shorter than the board
    (the engine's agents always have ``MEMORY`` words) a uniform open column. Nothing here
    allocates or copies arrays whole: the same code runs as CUDA code, which has neither."""
    view = obs[0][i]
    size = view.shape[0]
    if memory.shape[0] < size:
        return random_column(r, view, cfg.columns)
    board = memory[:size]
    for c in range(size):
        board[c] = view[c]
    return negamax_column(
        board, cfg.rows, cfg.columns, cfg.inarow, obs[1][i, player], DEPTH, r, COIN_RANDOM
    )


@nb.njit(cache=True, error_model="numpy", inline="always")
def act(kind, obs, i, player, step, cfg, memory, r):
    columns = cfg.columns
    if kind == NEGAMAX:
        # Apart, so the random agent's call stays small enough to inline into batch loops.
        column = negamax_act(obs, i, player, cfg, memory, r)
    elif columns == 7:  # Kaggle's default: with the width a constant, the counts unroll
        column = random_column(r, obs[0][i], 7)
    else:
        column = random_column(r, obs[0][i], columns)
    # Called only for an ACTIVE seat, whose board has an open column; a column in range anyway.
    return column if column >= 0 else 0


def host_agent(name, config):
    """The host agent ``name`` for a game of configuration ``config``: "perfect", the solver's
    player (``perfect.Perfect``), for the standard board only (ValueError for any other)."""
    if name not in HOST_AGENTS:
        raise ValueError(f"connectx has no host agent {name!r}; it has {', '.join(HOST_AGENTS)}")
    board = {k: int(config[k]) for k in STANDARD}
    if board != STANDARD:
        raise ValueError(
            "perfect plays connectx's standard board only (rows=6, columns=7, inarow=4), "
            f"not rows={board['rows']}, columns={board['columns']}, inarow={board['inarow']}: "
            "its solver is written for that board"
        )
    from .perfect import Perfect  # compiled where first played

    return Perfect()
