"""Hex over one episode's record, with Pgx's rules and actions (``hex``).

Cells are row-major from the top-left; black (agent 0) joins row 0 to row ``size - 1``, white
(agent 1) column 0 to column ``size - 1``. Who has joined its sides is kept by a union-find over
the cells and four cells beyond them (``TOP``, ``BOTTOM``, ``LEFT``, ``RIGHT`` after the
board's): a stone joins its neighbours of its colour and the sides it lies on, and a player has
won when its two sides have one root. A union links the root of larger index under the smaller,
and a find halves the path it walks, so a ply costs a few steps, never a flood fill.

The swap (action ``size * size``, white's first move only, as Pgx's): black's one stone is taken
off and white gets the cell with its row and column exchanged. Statuses and rewards are
kaggle-environments' (``kernels/turns``); an illegal action makes its agent INVALID and the other
wins (+1), as Pgx rules it.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, require_marks, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    INVALID,
    any_active,
    begin_rewards,
    end_step,
    mover,
    to_move,
)

EMPTY = 0
BLACK = 1
WHITE = 2
SIDES = 4  # TOP, BOTTOM, LEFT and RIGHT follow the board's cells in ``parent``
# Pgx's six neighbours of (r, c): (r, c-1), (r+1, c-1), (r-1, c), (r+1, c), (r-1, c+1), (r, c+1).
DR = np.array([0, 1, -1, 1, -1, 0], dtype=np.int64)
DC = np.array([-1, -1, 0, 0, 1, 1], dtype=np.int64)


def layout(size):
    """The side a ``size`` game's record is laid out for: 11 up to 11x11, else 19. numba compiles
    the rules once per record layout, so every board of a class shares one compiled engine; a
    smaller board uses the start of each array (``size * size`` cells, then its four sides)."""
    return 11 if size <= 11 else 19


def FIELDS(config):  # noqa: N802 (the protocol's name)
    side = layout(config["size"])
    cells = side * side
    return [
        ("board", np.int8, (cells,)),
        ("status", np.int8, (2,)),
        ("reward", np.float64, (2,)),
        ("parent", np.int16, (cells + SIDES,)),  # the union-find's links (a root: itself)
        ("ply", np.int16),  # plies played (Pgx's step_count): the swap is legal at ply 1
    ]


STATE_BOUNDS = {
    "board": (EMPTY, WHITE),
    "status": (0, 5),
    "reward": (-1, 1),
    "ply": (0, 19 * 19 + 1),
}


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def find(parent, x):
    """The root of ``x``'s set, halving the path walked."""
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@nb.njit(cache=True, error_model="numpy", inline="always")
def union(parent, a, b):
    a = find(parent, a)
    b = find(parent, b)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b


@nb.njit(cache=True, error_model="numpy")
def place(s, p, colour, size):
    """A stone of ``colour`` on empty cell ``p``: joined to its neighbours of that colour and to
    the sides it lies on."""
    cells = size * size
    parent = s.parent
    s.board[p] = colour
    parent[p] = p
    r, c = p // size, p % size
    for d in range(6):
        nr, nc = r + DR[d], c + DC[d]
        if 0 <= nr < size and 0 <= nc < size and s.board[nr * size + nc] == colour:
            union(parent, p, nr * size + nc)
    if colour == BLACK:
        if r == 0:
            union(parent, p, cells)
        if r == size - 1:
            union(parent, p, cells + 1)
    else:
        if c == 0:
            union(parent, p, cells + 2)
        if c == size - 1:
            union(parent, p, cells + 3)


@nb.njit(cache=True, error_model="numpy", inline="always")
def joined(s, colour, size):
    """Whether ``colour`` has joined its two sides."""
    side = size * size + (0 if colour == BLACK else 2)
    return find(s.parent, side) == find(s.parent, side + 1)


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for q in range(s.board.shape[0]):
        s.board[q] = EMPTY
    for q in range(s.parent.shape[0]):  # beyond a smaller board's nodes too: all roots
        s.parent[q] = q
    s.ply = 0
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def is_legal(s, action, cells):
    if action == cells:
        return s.ply == 1
    return 0 <= action < cells and s.board[action] == EMPTY


@nb.njit(cache=True, error_model="numpy")
def swap(s, size):
    """White takes black's one stone, mirrored across the long diagonal."""
    cells = size * size
    stone = 0
    for q in range(cells):
        if s.board[q] != EMPTY:
            stone = q
    s.board[stone] = EMPTY
    for q in range(s.parent.shape[0]):
        s.parent[q] = q
    place(s, (stone % size) * size + stone // size, WHITE, size)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        size = cfg["size"]
        cells = size * size
        action = actions[a]
        if not is_legal(s, action, cells):
            s.status[a] = INVALID  # Pgx: an illegal action loses, the other wins
            s.status[1 - a] = DONE
            s.reward[1 - a] = 1.0
            return end_step(s, cfg, rewards)
        colour = a + 1
        if action == cells:
            swap(s, size)
        else:
            place(s, action, colour, size)
        s.ply += 1
        if action != cells and joined(s, colour, size):
            s.reward[a] = 1.0
            s.reward[1 - a] = -1.0
            s.status[0] = DONE
            s.status[1] = DONE
        else:
            s.status[a] = INACTIVE
            s.status[1 - a] = ACTIVE
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    cells = cfg["size"] * cfg["size"]
    running = any_active(s)
    board = obs[0][i]
    legal = obs[3][i]
    for q in range(cells):
        board[q] = s.board[q]
        legal[q] = running and s.board[q] == EMPTY
    legal[cells] = running and s.ply == 1
    obs[1][i, 0] = BLACK
    obs[1][i, 1] = WHITE
    obs[2][i] = to_move(s)


@nb.njit(cache=True, error_model="numpy")
def observe_step(s, cfg, obs, i):
    """After a step that went on: the stones (a swap moves one), the turn and the legal moves."""
    observe(s, cfg, obs, i)


# ---- outside the kernels: checks, positions and Pgx's planes ----------------------------------


@nb.njit(cache=True)
def _rebuild(board, size, parent):
    """The union-find of a board, built as play builds it (each stone joined in cell order)."""
    cells = size * size
    for q in range(parent.shape[0]):
        parent[q] = q
    for p in range(cells):
        colour = board[p]
        if colour == EMPTY:
            continue
        r, c = p // size, p % size
        for d in range(6):
            nr, nc = r + DR[d], c + DC[d]
            if 0 <= nr < size and 0 <= nc < size and board[nr * size + nc] == colour:
                union(parent, p, nr * size + nc)
        if colour == BLACK:
            if r == 0:
                union(parent, p, cells)
            if r == size - 1:
                union(parent, p, cells + 1)
        else:
            if c == 0:
                union(parent, p, cells + 2)
            if c == size - 1:
                union(parent, p, cells + 3)


def _sets(parent):
    """Each cell's (and side's) set as a canonical label (the roots, numbered in order)."""
    parent = parent.astype(np.int64)
    roots = parent.copy()
    for _ in range(len(parent)):  # every link points lower: this many rounds reach the roots
        roots = parent[roots]
    _, labels = np.unique(roots, return_inverse=True)
    return labels


def _joined(labels, cells, colour):
    side = cells + (0 if colour == BLACK else 2)
    return labels[side] == labels[side + 1]


def check_state(records, config):
    """The union-find links every node to a lower one (or itself: a root) and holds exactly the
    board's chains and the sides they touch, the ply count covers the board's stones, and a game
    still running has no winner yet."""
    size = config["size"]
    cells = size * size
    for record in np.atleast_1d(records):
        board, parent = record["board"][:cells], record["parent"][: cells + SIDES]
        if (record["board"][cells:] != EMPTY).any():
            return "invalid state: board must be empty beyond its cells"
        if ((parent < 0) | (parent > np.arange(cells + SIDES))).any():
            return "invalid state: parent must link each node to itself or a lower one"
        want = np.zeros(cells + SIDES, dtype=np.int16)
        _rebuild(board, size, want)
        labels = _sets(parent)
        if not np.array_equal(labels, _sets(want)):
            return "invalid state: parent must join exactly the board's chains and sides"
        extra = int(record["ply"]) - int((board != EMPTY).sum())
        if extra not in (0, 1) or (extra == 1 and record["ply"] < 2):
            return "invalid state: ply must count the stones played (and a swap after the first)"
        running = (record["status"] == ACTIVE).any()
        if running and any(_joined(labels, cells, colour) for colour in (BLACK, WHITE)):
            return "invalid state: a player joined its sides while the game runs"
    return None


def position(record, config, given):
    """A position from its board, the marks, statuses and rewards; the swap is over (plies count
    the stones, two at least where there are fewer)."""
    size = config["size"]
    cells = size * size
    board = np.asarray(observed(given, "board", np.zeros(cells, dtype=np.int8)))
    require_marks(observed(given, "mark", np.array([BLACK, WHITE])), (BLACK, WHITE))
    write_turns(record, given, (ACTIVE, INACTIVE))
    record["board"][:cells] = board
    record["parent"] = np.arange(len(record["parent"]))
    _rebuild(board, size, record["parent"][: cells + SIDES])
    record["ply"] = max(int((board != EMPTY).sum()), 2)
    status = record["status"]
    turn = given["observation"].get("turn")
    expected = BLACK if status[0] == ACTIVE else WHITE if status[1] == ACTIVE else 0
    if turn is not None and int(turn) != expected:
        raise PositionError("observation.turn", f"is {int(turn)}; the statuses say {expected}")
    labels = _sets(record["parent"][: cells + SIDES])
    if (status == ACTIVE).any() and any(_joined(labels, cells, c) for c in (BLACK, WHITE)):
        raise PositionError("observation.board", "a player has joined its sides: the game is over")


def planes(board, turn, swap):
    """Pgx's observation from observation fields: ``board`` (..., size * size), ``turn`` (...;
    the mark of the player seeing it) and ``swap`` (...; whether the swap is legal, the legal
    mask's last entry): (..., size, size, 4) bool, the player's stones, the other's, all true for
    white, all true while the swap is legal."""
    board = np.asarray(board)
    turn = np.asarray(turn)
    lead = board.shape[:-1]
    size = round(board.shape[-1] ** 0.5)
    cells = board.reshape(*lead, size, size)
    mark = turn[..., None, None]
    ones = np.ones_like(cells, dtype=bool)
    white = ones & (mark == WHITE)
    can_swap = ones & np.asarray(swap, dtype=bool)[..., None, None]
    return np.stack([cells == mark, (cells != mark) & (cells != EMPTY), white, can_swap], axis=-1)
