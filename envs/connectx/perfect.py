"""The agent "perfect" (connectx's built-in host agent): the solver's (``solver``) best moves
from ``EXACT_FROM`` checkers on, and in the opening, where an exact search takes minutes, a search
``HORIZON`` plies deep for wins and losses forced that soon."""

import numba as nb
import numpy as np

from vecenv.kernels.agents import uniform_choice

from .solver import (
    CELLS,
    COLUMNS,
    TABLE_SIZE,
    ZERO,
    PositionError,
    Solver,
    best_bits,
    column_bits,
    encode,
    negamax,
    playable,
    safe_moves,
    winning_cells,
)

HORIZON = 8  # plies: the opening's search for wins and losses forced this soon


@nb.njit(cache=True)
def opening_columns(mine, occupied, moves, horizon, table, work, boards, stats, out):
    """The opening's choice (before ``exact_from`` checkers), into ``out`` (1 or 0 per column).
    Where a win or a loss is forced within ``horizon`` plies (the mover's win, or every move
    losing that soon), the exact search's best columns: such a score is found by searches that
    stop at the horizon, as the bounds of a score that soon cut every longer line. Else, of the
    moves that do not let the opponent force a win within the horizon, the ones nearest the
    centre. Each verdict is a null-window search's, exact whatever the table holds: the choice
    never depends on the table."""
    for c in range(COLUMNS):
        out[c] = 0
    possible = playable(occupied)
    safe = safe_moves(mine, occupied)
    if (winning_cells(mine, occupied) & possible) != ZERO or safe == ZERO:
        best_bits(mine, occupied, moves, table, work, boards, stats, out)
        return
    # A score of at least ``soon_win`` wins with a checker dropped within the horizon; the
    # opponent's score of at least ``soon_loss`` after a move, likewise for the opponent.
    soon_win = (CELLS + 1 - (moves + horizon - 2)) // 2
    soon_loss = (CELLS + 1 - (moves + horizon - 1)) // 2
    allowed = ZERO
    for c in range(COLUMNS):
        move = safe & column_bits(c)
        if move == ZERO:
            continue
        child_mine, child = mine ^ occupied, occupied | move
        theirs = negamax(
            child_mine, child, moves + 1, -soon_win, -soon_win + 1, table, work, boards, stats
        )
        if theirs <= -soon_win:  # this move forces a win within the horizon
            best_bits(mine, occupied, moves, table, work, boards, stats, out)
            return
        theirs = negamax(
            child_mine, child, moves + 1, soon_loss - 1, soon_loss, table, work, boards, stats
        )
        if theirs < soon_loss:  # the opponent cannot force a win within the horizon
            allowed |= move
    if allowed == ZERO:  # every move loses within the horizon
        best_bits(mine, occupied, moves, table, work, boards, stats, out)
        return
    nearest = COLUMNS
    for c in range(COLUMNS):
        if (allowed & column_bits(c)) != ZERO:
            nearest = min(nearest, abs(c - COLUMNS // 2))
    for c in range(COLUMNS):
        out[c] = (allowed & column_bits(c)) != ZERO and abs(c - COLUMNS // 2) == nearest


@nb.njit(cache=True)
def perfect_moves(
    mine, occupied, moves, exact_from, horizon, table, work, boards, stats, rngs, best, out
):
    """The agent's column in each position: uniform (from the position's stream ``rngs[i]``)
    among the best ones, by exact score from ``exact_from`` checkers on, else the opening's."""
    for i in range(mine.shape[0]):
        row = best[i]
        if moves[i] >= exact_from:
            best_bits(mine[i], occupied[i], moves[i], table, work, boards, stats, row)
        else:
            opening_columns(
                mine[i], occupied[i], moves[i], horizon, table, work, boards, stats, row
            )
        out[i] = uniform_choice(rngs[i], row != 0)


EXACT_FROM = 8  # the agent's exact search from this many checkers on (see ``Perfect``)


class Perfect:
    """The agent ``perfect`` (connectx's built-in host agent): in a position of at least
    ``exact_from`` checkers it plays a column of the best exact score (the soonest win, a draw,
    or the latest loss), uniform among equals from the seat's own stream. In the opening, where
    an exact search takes minutes (docs/games/connectx.md has the times), it looks
    ``HORIZON`` plies ahead (``opening_columns``): a win forced that soon it plays exactly (the
    soonest), a move letting the opponent force one that soon it never plays (unless all do),
    and of the others it plays the one nearest the centre (the centre first, as perfect play
    opens). Beyond the horizon the opening is a heuristic, not a solver. ``exact_from=0`` plays
    perfectly from the first move, as slowly as that takes.

    Its transposition table (``table_size`` words) is kept from move to move and match to
    match: later searches are faster, never different."""

    def __init__(self, table_size=TABLE_SIZE, exact_from=EXACT_FROM):
        if isinstance(exact_from, bool) or not isinstance(exact_from, (int, np.integer)):
            raise ValueError(f"exact_from must be an integer in [0, {CELLS}], got {exact_from!r}")
        if not 0 <= exact_from <= CELLS:
            raise ValueError(f"exact_from must be an integer in [0, {CELLS}], got {exact_from!r}")
        self.solver = Solver(table_size)
        self.exact_from = int(exact_from)

    def act(self, obs, rngs):
        """Columns for the positions ``obs`` ({"board": (K, 42), "mark": (K,)}, the mover's
        view) drawing from the records ``rngs`` ((K,) with an ``rng`` word, advanced)."""
        try:
            mine, occupied, moves = encode(obs["board"], np.asarray(obs["mark"]).reshape(-1))
        except PositionError as exc:
            raise PositionError(f"perfect plays positions play reaches: {exc}") from None
        k = mine.shape[0]
        out = np.zeros(k, dtype=np.int64)
        best = np.zeros((k, COLUMNS), dtype=np.int64)
        perfect_moves(
            mine,
            occupied,
            moves,
            self.exact_from,
            HORIZON,
            *self.solver._scratch(),
            rngs,
            best,
            out,
        )
        return out
