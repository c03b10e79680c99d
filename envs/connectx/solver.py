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

**Bitboards**: column c's cells from the bottom up are bits ``7 c .. 7 c + 5`` (bit ``7 c + 6``
stays clear, so a line never runs from one column's top into the next one's bottom): the layout of
the game's own record (``rules.FIELDS``'s ``bits``). A position is the mover's checkers and the
occupied cells; ``key = mine + occupied`` tells positions apart in 49 bits.

**The transposition table** is an array of uint64 words, one position each: its key above 8 bits
saying an upper or a lower bound of its score. A slot is the key modulo the table's length (a prime
by default); a word holds the whole key, so a lookup never mistakes one position for another, and
results never depend on what the table holds (only the time does). ``Solver`` keeps one between
calls.

Everything here is for the standard board: the constants unroll the line tests. Positions come as
connectx boards (``rows * columns`` cells, top row first, 0 empty and marks 1 and 2).
"""

import numba as nb
import numpy as np

from vecenv.kernels.agents import uniform_choice

ROWS, COLUMNS, INAROW = 6, 7, 4
CELLS = ROWS * COLUMNS
STRIDE = ROWS + 1
MIN_SCORE = -(CELLS // 2) + 3  # the opponent's fourth checker, the soonest loss
MAX_SCORE = (CELLS + 1) // 2 - 3  # the mover's fourth checker, the soonest win
TABLE_SIZE = 2**22  # words: 32 MiB
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


@nb.njit(cache=True)
def negamax(mine, occupied, moves, alpha, beta, table, work, stats):
    """The score of the position (``mine`` the mover's checkers) within (alpha, beta): exact
    inside it, an upper bound at or below alpha, a lower bound at or above beta. The mover must
    not be able to win at once (``solve`` checks). ``work`` is scratch for the move lists, a row
    per ply; ``stats[0]`` counts the nodes."""
    stats[0] += 1
    start = stats[0]
    moves_left = safe_moves(mine, occupied)
    if moves_left == ZERO:  # whatever it plays, the opponent wins next
        return -((CELLS - moves) // 2)
    if moves >= CELLS - 2:  # two cells left, neither a win for either: a draw
        return 0
    low = -((CELLS - 2 - moves) // 2)  # the opponent cannot win at its next move
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (CELLS - 1 - moves) // 2  # nor can the mover win at once
    key, flipped = canonical(mine, occupied)
    word = probe(table, key)
    first = -1  # the column that cut this position off before: searched first
    if word != ZERO:
        tag = word & _TAG
        if tag >= LOWER:
            bound = np.int64(tag - LOWER) + MIN_SCORE - 1
            if alpha < bound:
                alpha = bound
                if alpha >= beta:
                    return alpha
        else:
            bound = np.int64(tag) + MIN_SCORE - 1
            if bound < high:
                high = bound
        first = np.int64((word >> _U(7)) & _U(7))
        if first == _NONE:
            first = -1
        elif flipped:
            first = COLUMNS - 1 - first
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    # The moves: the one that cut off before, then those making the most new threats (the
    # centre first among equals).
    count = 0
    for k in range(COLUMNS):
        column = ORDER[k]
        move = moves_left & column_bits(column)
        if move != ZERO:
            if column == first:
                threats = np.int64(1000)
            else:
                threats = np.int64(popcount(winning_cells(mine | move, occupied | move)))
            j = count
            while j > 0 and work[moves, 2 * (j - 1) + 1] < threats:
                work[moves, 2 * j] = work[moves, 2 * (j - 1)]
                work[moves, 2 * j + 1] = work[moves, 2 * (j - 1) + 1]
                j -= 1
            work[moves, 2 * j] = column
            work[moves, 2 * j + 1] = threats
            count += 1
    for j in range(count):
        column = work[moves, 2 * j]
        move = moves_left & column_bits(column)
        # The opponent moves next: its checkers are the unoccupied part of ``occupied ^ mine``.
        score = -negamax(
            mine ^ occupied, occupied | move, moves + 1, -beta, -alpha, table, work, stats
        )
        if score >= beta:
            cut = COLUMNS - 1 - column if flipped else column
            store(table, key, _U(stats[0] - start), cut, _U(score - MIN_SCORE + 1) + LOWER)
            return score
        if score > alpha:
            alpha = score
    store(table, key, _U(stats[0] - start), _NONE, _U(alpha - MIN_SCORE + 1))
    return alpha


@nb.njit(cache=True)
def solve_bits(mine, occupied, moves, table, work, stats):
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
        score = negamax(mine, occupied, moves, middle, middle + 1, table, work, stats)
        if score <= middle:
            high = score
        else:
            low = score
    return low


@nb.njit(cache=True)
def sign_bits(mine, occupied, moves, table, work, stats):
    """The position's outcome for the mover (1 win, 0 draw, -1 loss): one search of the window
    (-1, 1), cheaper than the exact score."""
    if can_win_now(mine, occupied):
        return 1
    score = negamax(mine, occupied, moves, -1, 1, table, work, stats)
    return 1 if score > 0 else (-1 if score < 0 else 0)


@nb.njit(cache=True)
def column_scores_bits(mine, occupied, moves, table, work, stats, exact, out):
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
            out[c] = -solve_bits(mine ^ occupied, occupied | move, moves + 1, table, work, stats)
        else:
            out[c] = -sign_bits(mine ^ occupied, occupied | move, moves + 1, table, work, stats)


@nb.njit(cache=True)
def best_bits(mine, occupied, moves, table, work, stats, out):
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
    score = solve_bits(mine, occupied, moves, table, work, stats)
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
            mine ^ occupied, occupied | move, moves + 1, -score, -score + 1, table, work, stats
        )
        out[c] = theirs <= -score
    return score


@nb.njit(cache=True)
def solve_many(mine, occupied, moves, table, work, stats, out):
    for i in range(mine.shape[0]):
        out[i] = solve_bits(mine[i], occupied[i], moves[i], table, work, stats)


@nb.njit(cache=True)
def signs_many(mine, occupied, moves, table, work, stats, out):
    for i in range(mine.shape[0]):
        out[i] = sign_bits(mine[i], occupied[i], moves[i], table, work, stats)


@nb.njit(cache=True)
def columns_many(mine, occupied, moves, table, work, stats, exact, out):
    for i in range(mine.shape[0]):
        column_scores_bits(mine[i], occupied[i], moves[i], table, work, stats, exact, out[i])


@nb.njit(cache=True)
def best_many(mine, occupied, moves, table, work, stats, scores, out):
    for i in range(mine.shape[0]):
        scores[i] = best_bits(mine[i], occupied[i], moves[i], table, work, stats, out[i])


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
    moves)`` arrays, ``mine`` the checkers of the player to move. Without ``marks`` the player
    to move is the one play gives the turn (mark 1 where both have as many checkers); with
    them, ``marks[i]`` moves in board i. A PositionError names a board of another size, with
    other values than 0, 1 and 2, with a checker above an empty cell, with counts no play
    reaches, or with four in a line already."""
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
        raise PositionError("a checker floats above an empty cell")
    ones, twos = (grid == 1).sum(axis=(1, 2)), (grid == 2).sum(axis=(1, 2))
    if marks is None:
        if ((ones - twos < 0) | (ones - twos > 1)).any():
            raise PositionError(
                "mark 1 moves first: it has as many checkers as mark 2, or one more"
            )
        marks = np.where(ones == twos, 1, 2)
    marks = np.broadcast_to(np.asarray(marks), (grid.shape[0],))
    if not np.isin(marks, (1, 2)).all():
        raise PositionError("the mark to move is 1 or 2")
    # Cell (row r from the top, column c) is bit c * 7 + (5 - r).
    r, c = np.divmod(np.arange(CELLS), COLUMNS)
    bits = np.uint64(1) << (c * STRIDE + ROWS - 1 - r).astype(np.uint64)
    cells = grid.reshape(-1, CELLS)
    occupied = np.bitwise_or.reduce(np.where(cells != 0, bits, np.uint64(0)), axis=1)
    mine = np.bitwise_or.reduce(np.where(cells == marks[:, None], bits, np.uint64(0)), axis=1)
    occupied = occupied.astype(np.uint64)
    mine = mine.astype(np.uint64)
    over = _lined_up(mine) | _lined_up(mine ^ occupied)
    if over.any():
        raise PositionError(f"board {int(np.flatnonzero(over)[0])} has four in a line already")
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
    # The winner's checker is dropped onto a board of m = 43 - 2 |score| or 44 - 2 |score|
    # checkers: the one of the winner's parity (the mover's where it wins, else the other's).
    last = 43 - 2 * np.abs(score)
    winner_parity = np.where(score > 0, moves, moves + 1) % 2
    last = np.where(last % 2 == winner_parity, last, last + 1)
    return np.where(score == 0, CELLS - moves, last - moves + 1)


class Solver:
    """The solver with a transposition table of its own, kept between calls (it only saves
    time: answers never depend on it). Boards are connectx boards (see ``encode``); one
    ``Solver`` is not shared between threads."""

    def __init__(self, table_size=TABLE_SIZE):
        self.table = new_table(table_size)
        self.work = np.zeros((CELLS + 1, 2 * COLUMNS), dtype=np.int64)
        self.stats = np.zeros(1, dtype=np.int64)

    @property
    def nodes(self):
        """The nodes searched so far."""
        return int(self.stats[0])

    def _encoded(self, boards, marks):
        return encode(boards, marks)

    def score(self, boards, marks=None):
        """The exact score of each board for the player to move ((B,) int64; see the module)."""
        mine, occupied, moves = self._encoded(boards, marks)
        out = np.zeros(mine.shape[0], dtype=np.int64)
        solve_many(mine, occupied, moves, self.table, self.work, self.stats, out)
        return out

    def outcome(self, boards, marks=None):
        """Each board's outcome for the player to move: 1, 0, -1 ((B,) int64)."""
        mine, occupied, moves = self._encoded(boards, marks)
        out = np.zeros(mine.shape[0], dtype=np.int64)
        signs_many(mine, occupied, moves, self.table, self.work, self.stats, out)
        return out

    def column_scores(self, boards, marks=None, exact=True):
        """Each column's score for the player to move ((B, 7) int64; exact, or the outcome
        -1, 0, 1 with ``exact`` False); -100 for a full column."""
        mine, occupied, moves = self._encoded(boards, marks)
        out = np.zeros((mine.shape[0], COLUMNS), dtype=np.int64)
        columns_many(mine, occupied, moves, self.table, self.work, self.stats, exact, out)
        return out

    def best_columns(self, boards, marks=None):
        """(scores (B,), best (B, 7) bool): each board's exact score and the columns that keep
        it (every best move; none on a full board)."""
        mine, occupied, moves = self._encoded(boards, marks)
        scores = np.zeros(mine.shape[0], dtype=np.int64)
        best = np.zeros((mine.shape[0], COLUMNS), dtype=np.int64)
        best_many(mine, occupied, moves, self.table, self.work, self.stats, scores, best)
        return scores, best.astype(bool)


# -- the agent "perfect" ---------------------------------------------------------------------


@nb.njit(cache=True)
def opening_columns(mine, occupied, out):
    """The opening's choice (before ``exact_from`` checkers): of the moves that do not let the
    opponent win at once (every legal move where all do), the ones nearest the centre, into
    ``out`` (1 or 0 per column)."""
    allowed = safe_moves(mine, occupied)
    if allowed == ZERO:
        allowed = playable(occupied)
    nearest = COLUMNS
    for c in range(COLUMNS):
        if (allowed & column_bits(c)) != ZERO:
            nearest = min(nearest, abs(c - COLUMNS // 2))
    for c in range(COLUMNS):
        out[c] = (allowed & column_bits(c)) != ZERO and abs(c - COLUMNS // 2) == nearest


@nb.njit(cache=True)
def perfect_moves(mine, occupied, moves, exact_from, table, work, stats, rngs, best, out):
    """The agent's column in each position: uniform (from the position's stream ``rngs[i]``)
    among the best ones, by exact score from ``exact_from`` checkers on, else the opening's."""
    for i in range(mine.shape[0]):
        row = best[i]
        if moves[i] >= exact_from:
            best_bits(mine[i], occupied[i], moves[i], table, work, stats, row)
        else:
            opening_columns(mine[i], occupied[i], row)
        out[i] = uniform_choice(rngs[i], row != 0)


EXACT_FROM = 8  # the agent's exact search from this many checkers on (see ``Perfect``)


class Perfect:
    """The agent ``perfect`` (connectx's built-in host agent): in a position of at least
    ``exact_from`` checkers it plays a column of the best exact score (the soonest win, a draw,
    or the latest loss), uniform among equals from the seat's own stream; in the opening, where
    the exact search takes minutes (the empty board's outcome alone about three on this
    project's machine, its exact score far longer), it plays the column nearest the centre
    among those that do not let the opponent win at once (the centre first, as perfect play
    opens). ``exact_from=0`` plays perfectly from the first move, as slowly as that takes.

    Its transposition table (``table_size`` words) is kept from move to move and match to
    match: later searches are faster, never different."""

    def __init__(self, table_size=TABLE_SIZE, exact_from=EXACT_FROM):
        if not isinstance(exact_from, (int, np.integer)) or not 0 <= exact_from <= CELLS:
            raise ValueError(f"exact_from must be an integer in [0, {CELLS}], got {exact_from!r}")
        self.solver = Solver(table_size)
        self.exact_from = int(exact_from)

    def act(self, obs, rngs):
        """Columns for the positions ``obs`` ({"board": (K, 42), "mark": (K,)}, the mover's
        view) drawing from the records ``rngs`` ((K,) with an ``rng`` word, advanced)."""
        mine, occupied, moves = encode(obs["board"], np.asarray(obs["mark"]).reshape(-1))
        k = mine.shape[0]
        out = np.zeros(k, dtype=np.int64)
        best = np.zeros((k, COLUMNS), dtype=np.int64)
        s = self.solver
        perfect_moves(
            mine, occupied, moves, self.exact_from, s.table, s.work, s.stats, rngs, best, out
        )
        return out


@nb.njit(cache=True)
def keeps_many(mine, occupied, moves, columns, exact, table, work, stats, out):
    for i in range(mine.shape[0]):
        move = playable(occupied[i]) & column_bits(columns[i])
        if move == ZERO:
            out[i] = False
            continue
        if exact:
            value = solve_bits(mine[i], occupied[i], moves[i], table, work, stats)
        else:
            value = sign_bits(mine[i], occupied[i], moves[i], table, work, stats)
        if (move & winning_cells(mine[i], occupied[i])) != ZERO:
            out[i] = value > 0 and (not exact or value == (CELLS + 1 - moves[i]) // 2)
            continue
        child_mine, child = mine[i] ^ occupied[i], occupied[i] | move
        if exact:
            theirs = solve_bits(child_mine, child, moves[i] + 1, table, work, stats)
        else:
            theirs = sign_bits(child_mine, child, moves[i] + 1, table, work, stats)
        out[i] = -theirs == value


def perfect_share(boards, columns, marks=None, exact=False, solver=None):
    """How often the moves ``columns`` (one per board, the column the player to move chose)
    keep the position's game-theoretic value: ``(share, kept)``, ``kept`` (B,) bool. A move
    keeps it when the position after it is worth as much for the mover as the position before
    (its outcome, win, draw or loss; with ``exact`` its exact score too); a full column never
    does. ``solver``: a ``Solver`` to reuse (its table)."""
    mine, occupied, moves = encode(boards, marks)
    columns = np.asarray(columns, dtype=np.int64).reshape(-1)
    if columns.shape != mine.shape:
        raise ValueError(f"one column per board: {mine.shape[0]} boards, {columns.shape} columns")
    if ((columns < 0) | (columns >= COLUMNS)).any():
        raise ValueError(f"columns are 0 to {COLUMNS - 1}")
    solver = Solver() if solver is None else solver
    kept = np.zeros(mine.shape[0], dtype=np.bool_)
    keeps_many(
        mine, occupied, moves, columns, bool(exact), solver.table, solver.work, solver.stats, kept
    )
    share = float(kept.mean()) if kept.size else float("nan")
    return share, kept
