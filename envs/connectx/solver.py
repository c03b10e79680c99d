"""A perfect player of connect four: the game-theoretic value of any 6 x 7, four-in-a-row position.

Written from the published algorithm (John Tromp's and Victor Allis's solutions of the game, and
Pascal Pons' description of a solver: "Solving Connect 4: how to build a perfect AI", 2017):
negamax with alpha-beta over bitboards, a transposition table, moves ordered by the threats they
make, only moves that do not hand the opponent a win at once, and the exact score found by a
sequence of null-window searches narrowing its bounds.

**Scores** are for the player to move, as Pons counts them: 0 a draw; a win with the player's k-th
checker from here (counting the next as the first) scores ``22 - k - (checkers of the player on
the board)``, i.e. ``(43 - m) // 2`` where m is the number of checkers on the board when the
winning one is dropped; a loss the negative of the opponent's win. So a larger score is a sooner
win or a later loss; the empty board scores 1 (the first player wins with the last of its 21
checkers, dropping the first into the centre column), and scores lie in [-18, 18].
``outcome(score)`` gives the win/draw/loss and ``plies_left(score, moves)`` how many plies
perfect play takes to the end.

**The search** is Pons' negamax, its recursion run as a loop over an explicit stack (a row per ply
of two scratch arrays): numba's cache does not keep a recursive function and its callers whole
(loaded from the cache, they fail to link or crash), and the loop is as fast. ``Solver`` answers
exact scores, outcomes (one search of the window (-1, 1), cheaper), every column's score, the best
columns, and whether a given move keeps the value (``keeps_value``, ``move_keeps_value`` and
``moves_keep_value`` for strength reports). Late and middle positions take milliseconds to
seconds; the opening takes minutes (the empty board about seven on this project's 2-CPU machine
under load: docs/games/connectx.md, and ``benchmarks/connectx_solver.py``).

**Bitboards**: column c's cells from the bottom up are bits ``7 c .. 7 c + 5`` (bit ``7 c + 6``
stays clear, so a line never runs from one column's top into the next one's bottom): the layout of
the game's own record (``rules.FIELDS``'s ``bits``). A position is the mover's checkers and the
occupied cells; ``key = mine + occupied`` tells positions apart in 49 bits.

**The transposition table** is an array of uint64 words, one position each: its key above 15
bits saying how much work its search took, the move that cut it off and an upper or a lower bound
of its score (see ``LOWER``). A slot is a pair of words, the key modulo the number of pairs (a
prime); a word holds the whole key, so a lookup never mistakes one position for another, and
results never depend on what the table holds (only the time does). ``Solver`` keeps one between
calls.

Everything here is for the standard board: the constants unroll the line tests. Positions come as
connectx boards (``rows * columns`` cells, top row first, 0 empty and marks 1 and 2) that play
reaches and that are not over (``encode`` refuses the others with a ``PositionError``). The agent
``perfect`` that plays from it is in ``perfect``.
"""

import numba as nb
import numpy as np

ROWS, COLUMNS, INAROW = 6, 7, 4
CELLS = ROWS * COLUMNS
STRIDE = ROWS + 1
MIN_SCORE = -(CELLS // 2) + 3  # the opponent's fourth checker, the soonest loss
MAX_SCORE = (CELLS + 1) // 2 - 3  # the mover's fourth checker, the soonest win
TABLE_SIZE = 2**22  # words: 32 MiB
SMALL_TABLE = 2**16  # words: 512 KiB, for one late position
# The search tries the centre first: a checker there lies on more lines.
ORDER = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)

_U = np.uint64
ZERO = _U(0)
ONE = _U(1)
BOTTOM = _U(sum(1 << (c * STRIDE) for c in range(COLUMNS)))
FULL = _U(sum(((1 << ROWS) - 1) << (c * STRIDE) for c in range(COLUMNS)))
# A table word: the position's key (49 bits), then 5 bits of the work its search took (the bit
# length of its node count, held to 31), 3 bits of the move that cut it off (the column; 7 none)
# and 7 bits of bound: 0 empty, an upper bound u as u - MIN_SCORE + 1 (1 .. 37), a lower bound l
# as l - MIN_SCORE + 1 + LOWER (39 .. 75). A slot is a pair of words: the first keeps the
# position of more work (a larger subtree to search again), the second the latest.
LOWER = _U(MAX_SCORE - MIN_SCORE + 2)
_TAG = _U(127)
_KEY_SHIFT = _U(15)
_NONE = 7


class PositionError(ValueError):
    """A board the solver does not take: not 6 x 7, not one play reaches, or already over."""


@nb.njit(cache=True, inline="always")
def column_bits(c):
    return ((ONE << _U(ROWS)) - ONE) << _U(c * STRIDE)


@nb.njit(cache=True, inline="always")
def popcount(x):
    x = x - ((x >> _U(1)) & _U(0x5555555555555555))
    x = (x & _U(0x3333333333333333)) + ((x >> _U(2)) & _U(0x3333333333333333))
    x = (x + (x >> _U(4))) & _U(0x0F0F0F0F0F0F0F0F)
    return (x * _U(0x0101010101010101)) >> _U(56)


@nb.njit(cache=True, inline="always")
def winning_cells(mine, occupied):
    """The empty cells where a checker of ``mine`` would complete four in a line (some of them
    not yet playable: they have empty cells below)."""
    won = (mine << ONE) & (mine << _U(2)) & (mine << _U(3))  # three below
    for s in (STRIDE, STRIDE - 1, STRIDE + 1):  # across, and the two diagonals
        shift = _U(s)
        pair = (mine << shift) & (mine << (_U(2) * shift))
        won |= pair & (mine << (_U(3) * shift))
        won |= pair & (mine >> shift)
        pair = (mine >> shift) & (mine >> (_U(2) * shift))
        won |= pair & (mine << shift)
        won |= pair & (mine >> (_U(3) * shift))
    return won & (FULL ^ occupied)


@nb.njit(cache=True, inline="always")
def playable(occupied):
    """The lowest empty cell of every open column."""
    return (occupied + BOTTOM) & FULL


@nb.njit(cache=True, inline="always")
def can_win_now(mine, occupied):
    return (winning_cells(mine, occupied) & playable(occupied)) != ZERO


@nb.njit(cache=True, inline="always")
def safe_moves(mine, occupied):
    """The moves that do not let the opponent win at its next move (0: every move loses then):
    where it threatens a playable cell that cell is the only move (two such threats: none), and
    no move goes just below a cell where it would win."""
    possible = playable(occupied)
    threats = winning_cells(mine ^ occupied, occupied)
    forced = possible & threats
    if forced != ZERO:
        if (forced & (forced - ONE)) != ZERO:
            return ZERO
        possible = forced
    return possible & ~(threats >> ONE)


_FIELD = _U(0x7F)


@nb.njit(cache=True, inline="always")
def mirrored(key):
    """The key of the position mirrored left to right: its 7-bit columns in reverse order."""
    out = ZERO
    for c in range(COLUMNS):
        out |= ((key >> _U(STRIDE * c)) & _FIELD) << _U(STRIDE * (COLUMNS - 1 - c))
    return out


@nb.njit(cache=True, inline="always")
def canonical(mine, occupied):
    """(key, flipped): the key of the position or of its mirror image, whichever is smaller (the
    two have the same scores), and whether it is the mirror's."""
    key = mine + occupied
    other = mirrored(key)
    if other < key:
        return other, True
    return key, False


@nb.njit(cache=True, inline="always")
def probe(table, key):
    """The word of ``key`` in its slot's pair, or 0."""
    at = (key % _U(table.shape[0] >> 1)) << ONE
    word = table[at]
    if (word >> _KEY_SHIFT) == key and word != ZERO:
        return word
    word = table[at + 1]
    if (word >> _KEY_SHIFT) == key and word != ZERO:
        return word
    return ZERO


@nb.njit(cache=True, inline="always")
def store(table, key, nodes, column, tag):
    """Keep a bound of ``key``'s score: in the pair's first word where its search took at least
    as much work as the one there (which moves to the second), else in the second."""
    size = ZERO
    while nodes > 1 and size < _U(31):
        nodes >>= 1
        size += ONE
    word = (key << _KEY_SHIFT) | (size << _U(10)) | (_U(column) << _U(7)) | tag
    at = (key % _U(table.shape[0] >> 1)) << ONE
    first = table[at]
    if (first >> _KEY_SHIFT) == key or size >= ((first >> _U(10)) & _U(31)):
        if (first >> _KEY_SHIFT) != key:
            table[at + 1] = first
        table[at] = word
    else:
        table[at + 1] = word


# Columns of a ply's row of ``work`` past its move list (``2 * COLUMNS`` words: column, order).
_ALPHA, _BETA, _COUNT, _NEXT, _FLIPPED, _START = range(2 * COLUMNS, 2 * COLUMNS + 6)
WORK_COLUMNS = 2 * COLUMNS + 6
# Columns of a ply's row of ``boards``: the mover's checkers, the occupied cells, the moves to
# try (those not handing the opponent a win at once) and the table key.
_MINE, _OCCUPIED, _MOVES, _KEY = range(4)
BOARD_COLUMNS = 4


@nb.njit(cache=True)
def negamax(mine, occupied, moves, alpha, beta, table, work, boards, stats):
    """The score of the position (``mine`` the mover's checkers, ``moves`` checkers on the board)
    within (alpha, beta): exact inside it, an upper bound at or below alpha, a lower bound at or
    above beta. The mover must not be able to win at once (``solve_bits`` checks).

    The recursion of Pons' negamax runs as a loop over an explicit stack, a row per ply of
    ``work`` (int64, ``(CELLS + 1, WORK_COLUMNS)``: the move list and the node's window) and of
    ``boards`` (uint64, ``(CELLS + 1, BOARD_COLUMNS)``): numba's cache keeps no recursive
    function whole. ``stats[0]`` counts the nodes."""
    root = moves
    ply = moves
    boards[ply, _MINE] = mine
    boards[ply, _OCCUPIED] = occupied
    work[ply, _ALPHA] = alpha
    work[ply, _BETA] = beta
    entering = True
    value = np.int64(0)
    while True:
        if entering:
            # A new node: its bounds, the table's word, then its first move, or its value.
            stats[0] += 1
            work[ply, _START] = stats[0]
            mine = boards[ply, _MINE]
            occupied = boards[ply, _OCCUPIED]
            alpha = work[ply, _ALPHA]
            beta = work[ply, _BETA]
            safe = safe_moves(mine, occupied)
            count = 0
            if safe == ZERO:  # whatever it plays, the opponent wins next
                value = -((CELLS - ply) // 2)
            elif ply >= CELLS - 2:  # two cells left, neither a win for either: a draw
                value = np.int64(0)
            else:
                low = -((CELLS - 2 - ply) // 2)  # the opponent cannot win at its next move
                high = (CELLS - 1 - ply) // 2  # nor can the mover win at once
                if alpha < low:
                    alpha = low
                key, flipped = canonical(mine, occupied)
                first = -1  # the column that cut this position off before: searched first
                if alpha < beta:
                    word = probe(table, key)
                    if word != ZERO:
                        tag = word & _TAG
                        if tag >= LOWER:
                            bound = np.int64(tag - LOWER) + MIN_SCORE - 1
                            if alpha < bound:
                                alpha = bound
                        else:
                            bound = np.int64(tag) + MIN_SCORE - 1
                            if bound < high:
                                high = bound
                        first = np.int64((word >> _U(7)) & _U(7))
                        if first == _NONE:
                            first = -1
                        elif flipped:
                            first = COLUMNS - 1 - first
                if alpha >= beta:
                    value = alpha
                elif beta > high and alpha >= high:
                    value = high
                else:
                    if beta > high:
                        beta = high
                    # The moves: the one that cut this position off before, then those making
                    # the most new threats (the centre first among equals).
                    for k in range(COLUMNS):
                        column = ORDER[k]
                        move = safe & column_bits(column)
                        if move != ZERO:
                            if column == first:
                                threats = np.int64(1000)
                            else:
                                threats = np.int64(
                                    popcount(winning_cells(mine | move, occupied | move))
                                )
                            j = count
                            while j > 0 and work[ply, 2 * (j - 1) + 1] < threats:
                                work[ply, 2 * j] = work[ply, 2 * (j - 1)]
                                work[ply, 2 * j + 1] = work[ply, 2 * (j - 1) + 1]
                                j -= 1
                            work[ply, 2 * j] = column
                            work[ply, 2 * j + 1] = threats
                            count += 1
                    work[ply, _ALPHA] = alpha
                    work[ply, _BETA] = beta
                    work[ply, _COUNT] = count
                    work[ply, _NEXT] = 0
                    work[ply, _FLIPPED] = flipped
                    boards[ply, _MOVES] = safe
                    boards[ply, _KEY] = key
            if count == 0:
                entering = False  # ``value`` is the node's: back to its parent
            else:
                move = safe & column_bits(work[ply, 0])
                # The opponent moves next: its checkers are the occupied cells not the mover's.
                boards[ply + 1, _MINE] = mine ^ occupied
                boards[ply + 1, _OCCUPIED] = occupied | move
                work[ply + 1, _ALPHA] = -beta
                work[ply + 1, _BETA] = -alpha
                ply += 1
                continue
        # ``value`` is node ``ply``'s: its parent takes its negation as the move's score.
        if ply == root:
            return value
        ply -= 1
        score = -value
        alpha = work[ply, _ALPHA]
        beta = work[ply, _BETA]
        key = boards[ply, _KEY]
        nodes = _U(stats[0] - work[ply, _START])
        j = work[ply, _NEXT]
        if score >= beta:
            column = work[ply, 2 * j]
            cut = COLUMNS - 1 - column if work[ply, _FLIPPED] else column
            store(table, key, nodes, cut, _U(score - MIN_SCORE + 1) + LOWER)
            value = score
            continue
        if score > alpha:
            alpha = score
            work[ply, _ALPHA] = alpha
        j += 1
        if j < work[ply, _COUNT]:
            work[ply, _NEXT] = j
            move = boards[ply, _MOVES] & column_bits(work[ply, 2 * j])
            occupied = boards[ply, _OCCUPIED]
            boards[ply + 1, _MINE] = boards[ply, _MINE] ^ occupied
            boards[ply + 1, _OCCUPIED] = occupied | move
            work[ply + 1, _ALPHA] = -beta
            work[ply + 1, _BETA] = -alpha
            ply += 1
            entering = True
            continue
        store(table, key, nodes, _NONE, _U(alpha - MIN_SCORE + 1))
        value = alpha


@nb.njit(cache=True)
def solve_bits(mine, occupied, moves, table, work, boards, stats):
    """The exact score of the position (see the module): null-window searches halving the
    interval of possible scores, first towards 0 (a draw or a late result is the commonest)."""
    if can_win_now(mine, occupied):
        return (CELLS + 1 - moves) // 2
    low = -((CELLS - moves) // 2)
    high = (CELLS + 1 - moves) // 2
    while low < high:
        middle = low + (high - low) // 2
        if middle <= 0 and low // 2 < middle:
            middle = low // 2
        elif middle >= 0 and high // 2 > middle:
            middle = high // 2
        score = negamax(mine, occupied, moves, middle, middle + 1, table, work, boards, stats)
        if score <= middle:
            high = score
        else:
            low = score
    return low


@nb.njit(cache=True)
def sign_bits(mine, occupied, moves, table, work, boards, stats):
    """The position's outcome for the mover (1 win, 0 draw, -1 loss): one search of the window
    (-1, 1), cheaper than the exact score."""
    if can_win_now(mine, occupied):
        return 1
    score = negamax(mine, occupied, moves, -1, 1, table, work, boards, stats)
    return 1 if score > 0 else (-1 if score < 0 else 0)


@nb.njit(cache=True)
def column_scores_bits(mine, occupied, moves, table, work, boards, stats, exact, out):
    """Each column's score for the mover (the exact score, or with ``exact`` False its outcome
    -1, 0, 1) into ``out``; -100 for a full column."""
    wins = winning_cells(mine, occupied)
    possible = playable(occupied)
    for c in range(COLUMNS):
        move = possible & column_bits(c)
        if move == ZERO:
            out[c] = -100
        elif (move & wins) != ZERO:
            out[c] = (CELLS + 1 - moves) // 2 if exact else 1
        elif exact:
            out[c] = -solve_bits(
                mine ^ occupied, occupied | move, moves + 1, table, work, boards, stats
            )
        else:
            out[c] = -sign_bits(
                mine ^ occupied, occupied | move, moves + 1, table, work, boards, stats
            )


@nb.njit(cache=True)
def best_bits(mine, occupied, moves, table, work, boards, stats, out):
    """Which columns reach the position's exact score (``out[c]`` 1, else 0; all 0 on a full
    board); returns that score. One exact solve, then one null-window search per other column:
    a move is best when the opponent's score after it is at most minus the position's."""
    for c in range(COLUMNS):
        out[c] = 0
    possible = playable(occupied)
    if possible == ZERO:
        return 0
    wins = winning_cells(mine, occupied) & possible
    if wins != ZERO:
        for c in range(COLUMNS):
            out[c] = (wins & column_bits(c)) != ZERO
        return (CELLS + 1 - moves) // 2
    score = solve_bits(mine, occupied, moves, table, work, boards, stats)
    safe = safe_moves(mine, occupied)
    for c in range(COLUMNS):
        move = possible & column_bits(c)
        if move == ZERO:
            continue
        if (move & safe) == ZERO:
            # the opponent wins at once: the worst score, best only where every move is lost so
            out[c] = score == -((CELLS - moves) // 2)
            continue
        theirs = negamax(
            mine ^ occupied,
            occupied | move,
            moves + 1,
            -score,
            -score + 1,
            table,
            work,
            boards,
            stats,
        )
        out[c] = theirs <= -score
    return score


@nb.njit(cache=True)
def solve_many(mine, occupied, moves, table, work, boards, stats, out):
    for i in range(mine.shape[0]):
        out[i] = solve_bits(mine[i], occupied[i], moves[i], table, work, boards, stats)


@nb.njit(cache=True)
def signs_many(mine, occupied, moves, table, work, boards, stats, out):
    for i in range(mine.shape[0]):
        out[i] = sign_bits(mine[i], occupied[i], moves[i], table, work, boards, stats)


@nb.njit(cache=True)
def columns_many(mine, occupied, moves, table, work, boards, stats, exact, out):
    for i in range(mine.shape[0]):
        column_scores_bits(
            mine[i], occupied[i], moves[i], table, work, boards, stats, exact, out[i]
        )


@nb.njit(cache=True)
def best_many(mine, occupied, moves, table, work, boards, stats, scores, out):
    for i in range(mine.shape[0]):
        scores[i] = best_bits(mine[i], occupied[i], moves[i], table, work, boards, stats, out[i])


# -- boards and players ------------------------------------------------------------------------


def new_table(size=TABLE_SIZE):
    """An empty transposition table of about ``size`` words (8 bytes each): pairs of words, as
    many pairs as the largest prime at most ``size / 2`` (a prime spreads the keys, whose low
    bits are the first columns', over every slot)."""
    size = int(size)
    if not 4 <= size <= 2**32:
        raise ValueError(f"a table of 4 to 2**32 words, got {size}")
    pairs = size // 2
    while not _prime(pairs):
        pairs -= 1
    return np.zeros(2 * pairs, dtype=np.uint64)


def _prime(n):
    if n < 2:
        return False
    k = 2
    while k * k <= n:
        if n % k == 0:
            return False
        k += 1
    return True


def encode(boards, marks=None):
    """Connectx boards (B, 42) (or one, (42,)) as the solver's positions: ``(mine, occupied,
    moves)`` arrays, ``mine`` the checkers of the player to move. The player to move is the one
    play gives the turn: mark 1 where both have as many checkers, else mark 2; ``marks`` (one,
    or one per board), where given, must name that player. A PositionError names a board of
    another size, with other values than 0, 1 and 2, with a checker above an empty cell, with
    counts no play reaches (mark 1 moves first), with a mark not to move, with four in a line
    already, or full: a game that is over has no move to solve."""
    boards = np.asarray(boards)
    if boards.ndim == 1:
        boards = boards[None, :]
    if boards.ndim != 2 or boards.shape[1] != CELLS:
        raise PositionError(
            f"the solver takes connectx's standard board ({ROWS} x {COLUMNS}, {CELLS} cells), "
            f"got boards of shape {boards.shape}"
        )
    if boards.size and not np.isin(boards, (0, 1, 2)).all():
        raise PositionError("a board's cells are 0 (empty), 1 or 2")
    grid = boards.reshape(-1, ROWS, COLUMNS).astype(np.int64)
    filled = grid != 0
    height = filled.sum(axis=1)
    stacked = np.arange(ROWS)[None, :, None] >= ROWS - height[:, None, :]
    if (filled != stacked).any():
        first = int(np.flatnonzero((filled != stacked).any(axis=(1, 2)))[0])
        raise PositionError(f"board {first}: a checker floats above an empty cell")
    ones, twos = (grid == 1).sum(axis=(1, 2)), (grid == 2).sum(axis=(1, 2))
    wrong = (ones - twos < 0) | (ones - twos > 1)
    if wrong.any():
        first = int(np.flatnonzero(wrong)[0])
        raise PositionError(
            f"board {first} has {ones[first]} checkers of mark 1 and {twos[first]} of mark 2: "
            "mark 1 moves first, so it has as many as mark 2 or one more"
        )
    to_move = np.where(ones == twos, 1, 2)
    if marks is not None:
        marks = np.broadcast_to(np.asarray(marks), (grid.shape[0],))
        if not np.isin(marks, (1, 2)).all():
            raise PositionError("the mark to move is 1 or 2")
        if (marks != to_move).any():
            first = int(np.flatnonzero(marks != to_move)[0])
            raise PositionError(
                f"board {first}: mark {marks[first]} is not to move ({ones[first]} checkers of "
                f"mark 1, {twos[first]} of mark 2: mark {to_move[first]} moves)"
            )
    full = filled.all(axis=(1, 2))
    if full.any():
        raise PositionError(f"board {int(np.flatnonzero(full)[0])} is full: the game is over")
    # Cell (row r from the top, column c) is bit c * 7 + (5 - r).
    r, c = np.divmod(np.arange(CELLS), COLUMNS)
    bits = np.uint64(1) << (c * STRIDE + ROWS - 1 - r).astype(np.uint64)
    cells = grid.reshape(-1, CELLS)
    occupied = np.bitwise_or.reduce(np.where(cells != 0, bits, np.uint64(0)), axis=1)
    mine = np.bitwise_or.reduce(np.where(cells == to_move[:, None], bits, np.uint64(0)), axis=1)
    occupied = occupied.astype(np.uint64)
    mine = mine.astype(np.uint64)
    over = _lined_up(mine) | _lined_up(mine ^ occupied)
    if over.any():
        raise PositionError(
            f"board {int(np.flatnonzero(over)[0])} has four in a line already: the game is over"
        )
    return mine, occupied, filled.sum(axis=(1, 2)).astype(np.int64)


def _lined_up(bits):
    out = np.zeros(bits.shape, dtype=bool)
    for s in (1, STRIDE, STRIDE - 1, STRIDE + 1):
        s = np.uint64(s)
        out |= (bits & (bits >> s) & (bits >> (2 * s)) & (bits >> (3 * s))) != 0
    return out


def outcome(score):
    """1 (the mover wins), 0 (a draw) or -1 (it loses) from scores."""
    return np.sign(score).astype(np.int64)


def plies_left(score, moves):
    """The plies perfect play takes from a position of ``moves`` checkers with ``score`` to the
    game's end: to the winning checker (Pons' score counts the winner's checkers), or the board
    filled for a draw."""
    score, moves = np.asarray(score, dtype=np.int64), np.asarray(moves, dtype=np.int64)
    # The winner's checker is dropped onto a board of m checkers with (43 - m) // 2 = |score|:
    # m = 43 - 2 |score| or 42 - 2 |score|, the one of the winner's parity (the mover's where it
    # wins, else the other's).
    last = 43 - 2 * np.abs(score)
    winner_parity = np.where(score > 0, moves, moves + 1) % 2
    last = np.where(last % 2 == winner_parity, last, last - 1)
    return np.where(score == 0, CELLS - moves, last - moves + 1)


class Solver:
    """The solver with a transposition table of its own, kept between calls (it only saves
    time: answers never depend on it). Boards are connectx boards (see ``encode``); one
    ``Solver`` is not shared between threads. Pickled, it leaves its table behind (a fresh
    one where it loads)."""

    def __init__(self, table_size=TABLE_SIZE):
        self.table = new_table(table_size)
        self.work = np.zeros((CELLS + 1, WORK_COLUMNS), dtype=np.int64)
        self.boards = np.zeros((CELLS + 1, BOARD_COLUMNS), dtype=np.uint64)
        self.stats = np.zeros(1, dtype=np.int64)

    def __getstate__(self):
        return {"table_size": int(self.table.shape[0]), "nodes": self.nodes}

    def __setstate__(self, state):
        self.__init__(state["table_size"])
        self.stats[0] = state["nodes"]

    @property
    def nodes(self):
        """The nodes searched so far."""
        return int(self.stats[0])

    def _scratch(self):
        return self.table, self.work, self.boards, self.stats

    def score(self, boards, marks=None):
        """The exact score of each board for the player to move ((B,) int64; see the module)."""
        mine, occupied, moves = encode(boards, marks)
        out = np.zeros(mine.shape[0], dtype=np.int64)
        solve_many(mine, occupied, moves, *self._scratch(), out)
        return out

    def outcome(self, boards, marks=None):
        """Each board's outcome for the player to move: 1, 0, -1 ((B,) int64), from a search
        of the window (-1, 1), cheaper than the exact score."""
        mine, occupied, moves = encode(boards, marks)
        out = np.zeros(mine.shape[0], dtype=np.int64)
        signs_many(mine, occupied, moves, *self._scratch(), out)
        return out

    def column_scores(self, boards, marks=None, exact=True):
        """Each column's score for the player to move ((B, 7) int64; exact, or the outcome
        -1, 0, 1 with ``exact`` False); -100 for a full column."""
        mine, occupied, moves = encode(boards, marks)
        out = np.zeros((mine.shape[0], COLUMNS), dtype=np.int64)
        columns_many(mine, occupied, moves, *self._scratch(), bool(exact), out)
        return out

    def best_columns(self, boards, marks=None):
        """(scores (B,), best (B, 7) bool): each board's exact score and the columns that keep
        it (every best move)."""
        mine, occupied, moves = encode(boards, marks)
        scores = np.zeros(mine.shape[0], dtype=np.int64)
        best = np.zeros((mine.shape[0], COLUMNS), dtype=np.int64)
        best_many(mine, occupied, moves, *self._scratch(), scores, best)
        return scores, best.astype(bool)

    def keeps_value(self, boards, columns, marks=None, exact=False):
        """Whether each move ``columns[i]`` (the column the player to move in board i drops
        into) keeps the position's game-theoretic value ((B,) bool): the position after it is
        worth as much to the mover as the one before, by outcome (win, draw or loss) or, with
        ``exact``, by exact score (a win no later, a loss no sooner). A full column never does;
        a column outside 0-6 is a ValueError."""
        mine, occupied, moves = encode(boards, marks)
        columns = np.asarray(columns)
        if columns.ndim > 1 or (columns.size and not np.issubdtype(columns.dtype, np.integer)):
            raise ValueError(
                f"columns are integers, one per board, got {columns.dtype} {columns.shape}"
            )
        columns = columns.astype(np.int64).reshape(-1)
        if columns.shape != mine.shape:
            raise ValueError(
                f"one column per board: {mine.shape[0]} boards, {columns.shape[0]} columns"
            )
        if ((columns < 0) | (columns >= COLUMNS)).any():
            raise ValueError(
                f"columns are 0 to {COLUMNS - 1}, got {columns.min()}..{columns.max()}"
            )
        kept = np.zeros(mine.shape[0], dtype=np.bool_)
        keeps_many(mine, occupied, moves, columns, bool(exact), *self._scratch(), kept)
        return kept


@nb.njit(cache=True)
def keeps_bits(mine, occupied, moves, column, exact, table, work, boards, stats):
    """``Solver.keeps_value`` of one position and column."""
    move = playable(occupied) & column_bits(column)
    if move == ZERO:
        return False
    if (move & winning_cells(mine, occupied)) != ZERO:
        return True  # a win at once: the soonest, the best there is
    lost_at_once = -((CELLS - moves) // 2)  # the score of a move letting the opponent win next
    unsafe = (move & safe_moves(mine, occupied)) == ZERO
    if exact:
        score = solve_bits(mine, occupied, moves, table, work, boards, stats)
        if unsafe:
            return score == lost_at_once
        # The move keeps the score if the opponent's score after it is at most minus it (it
        # cannot be less): one null-window search. The opponent cannot win at once there.
        theirs = negamax(
            mine ^ occupied,
            occupied | move,
            moves + 1,
            -score,
            -score + 1,
            table,
            work,
            boards,
            stats,
        )
        return theirs <= -score
    value = sign_bits(mine, occupied, moves, table, work, boards, stats)
    if unsafe:
        return value == -1
    return (
        -sign_bits(mine ^ occupied, occupied | move, moves + 1, table, work, boards, stats) == value
    )


@nb.njit(cache=True)
def keeps_many(mine, occupied, moves, columns, exact, table, work, boards, stats, out):
    for i in range(mine.shape[0]):
        out[i] = keeps_bits(
            mine[i], occupied[i], moves[i], columns[i], exact, table, work, boards, stats
        )


def move_keeps_value(board, column, mark=None, exact=False, solver=None):
    """Whether dropping into ``column`` keeps the game-theoretic value of ``board`` (one connectx
    board, the player to move the one play gives the turn; see ``Solver.keeps_value``).
    ``solver``: a ``Solver`` to reuse (its table), else a fresh one with a small table."""
    board = np.asarray(board)
    if board.ndim != 1:
        raise PositionError(f"one board of {CELLS} cells, got shape {board.shape}")
    solver = Solver(SMALL_TABLE) if solver is None else solver
    marks = None if mark is None else [mark]
    return bool(solver.keeps_value(board[None, :], [column], marks, exact)[0])


def moves_keep_value(boards, columns, marks=None, exact=False, solver=None):
    """How often the moves ``columns`` (one per board: the column the player to move chose)
    keep the positions' game-theoretic value, for strength reports: ``(share, kept)``, the
    share in [0, 1] (nan for no boards) and ``kept`` (B,) bool (``Solver.keeps_value``).
    ``solver``: a ``Solver`` to reuse (its table), else a fresh one."""
    solver = Solver() if solver is None else solver
    kept = solver.keeps_value(boards, columns, marks, exact)
    share = float(kept.mean()) if kept.size else float("nan")
    return share, kept
