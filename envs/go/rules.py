"""Go over one episode's record, with Pgx's rules and actions (``go_9x9``, ``go_19x19``, and
Pgx's ``Go(size=13)``, the 13x13 game).

The board is kept with a border: ``size + 2`` rows of ``size + 1`` cells, where row 0, row
``size + 1`` and column 0 are off the board (``EDGE``), so the neighbours of a point ``q`` are
``q - 1``, ``q + 1``, ``q - width`` and ``q + width`` without a bounds check (column 0 of the next
row is the right edge of a row). Point ``p`` of the actions (row-major, ``size`` a row) is cell
``(p // size + 1) * width + p % size + 1``.

Each chain of stones is a cycle through ``link``; every stone's ``chain`` names the chain's head,
which holds the chain's ``stones`` and its pseudo-liberties: ``pseudo`` counts (stone, empty
neighbour) pairs, ``lsum`` and ``lsq`` add up those neighbours' cells and their squares. All three
add up when chains merge, so a move costs the stones it relabels or takes, never a flood fill. A
chain is in atari when all its pseudo-liberties are one point: ``lsum**2 == lsq * pseudo``
(Cauchy-Schwarz holds with equality only for equal terms), Pgx's own test.

The kernels read the configuration's ``size`` as ``cfg["size"]``, not ``cfg.size``: under numba's
CUDA simulator the configuration is a numpy record, whose attribute ``size`` is numpy's own (its
element count), not the field.

Pgx's positional superko compares each position with every earlier one through hashes; ours are
64-bit Zobrist hashes (``hash``, and ``hashes`` after each ply). Statuses and rewards are
kaggle-environments' (``kernels/turns``); an illegal action loses to the other agent's win, as
Pgx rules it.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    INVALID,
    begin_rewards,
    end_step,
    mover,
    to_move,
)

EMPTY = 0
BLACK = 1
WHITE = 2
EDGE = 3
SEEN = 4  # an empty cell the scoring's flood fill has reached (only inside ``score``)
HISTORY = 8  # boards in the observation, as Pgx's history_length
MAX_SIZE = 19


def cells_of(size):
    """Cells of the bordered board of a ``size`` x ``size`` game."""
    return (size + 2) * (size + 1)


def layout(size):
    """The side a ``size`` game's record is laid out for: 9 up to 9x9, 13 up to 13x13, else 19.
    numba compiles the rules once per record layout, so every board of a class shares one
    compiled engine; a smaller board uses the start of each array (its bordered board the first
    ``cells_of(size)`` cells, the rest off the board; the first ``size * size`` points of a
    history row). 13x13 has a layout of its own: in 19x19's records its steps copied and scanned
    twice the bytes."""
    return 9 if size <= 9 else 13 if size <= 13 else MAX_SIZE


def _splitmix(words):
    """splitmix64's finaliser over uint64 words (numpy wraps the products)."""
    z = words
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# A random word per colour and cell of the largest board: a position's hash is the xor of its
# stones' words.
_CELLS_MAX = cells_of(MAX_SIZE)
ZOBRIST = _splitmix(
    np.arange(1, 2 * _CELLS_MAX + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
).reshape(2, _CELLS_MAX)


def FIELDS(config):  # noqa: N802 (the protocol's name)
    side = layout(config["size"])
    cells, points = cells_of(side), side * side
    return [
        ("board", np.int8, (cells,)),  # EMPTY, BLACK, WHITE, or EDGE off the board
        ("status", np.int8, (2,)),
        ("reward", np.float64, (2,)),
        ("chain", np.int16, (cells,)),  # a stone's chain head
        ("link", np.int16, (cells,)),  # the next stone of its chain
        # At a chain's head: its stones and pseudo-liberties (see the module's docstring).
        ("stones", np.int16, (cells,)),
        ("pseudo", np.int16, (cells,)),
        ("lsum", np.int32, (cells,)),
        ("lsq", np.int32, (cells,)),
        ("ko", np.int16),  # the cell the mover may not take back, or -1
        ("passes", np.int8),  # passes in a row
        ("ply", np.int16),  # plies played (Pgx's step_count)
        ("hash", np.uint64),
        ("hashes", np.uint64, (2 * points,)),  # the hash after each ply
        ("history", np.int8, (HISTORY, points)),  # the last boards (their points), a ring
        ("newest", np.int8),  # the ring's row of the newest board
        ("work", np.int16, (cells,)),  # the scoring's scratch stack, meaningless between steps
    ]


STATE_BOUNDS = {
    "board": (EMPTY, EDGE),
    "status": (0, 5),
    "reward": (-1, 1),
    "passes": (0, 2),
    "ply": (0, 2 * MAX_SIZE * MAX_SIZE),
    "history": (EMPTY, WHITE),
    "newest": (0, HISTORY - 1),
}


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def cell(p, size):
    """The bordered board's cell of point ``p``."""
    return (p // size + 1) * (size + 1) + p % size + 1


@nb.njit(cache=True, error_model="numpy", inline="always")
def neighbour(q, d, width):
    """Cell ``q``'s neighbour in direction ``d`` (left, right, up, down)."""
    if d == 0:
        return q - 1
    if d == 1:
        return q + 1
    if d == 2:
        return q - width
    return q + width


@nb.njit(cache=True, error_model="numpy", inline="always")
def in_atari(s, head):
    """Whether the chain of ``head`` has one liberty (all its pseudo-liberties are one point)."""
    total = np.int64(s.lsum[head])
    return total * total == np.int64(s.lsq[head]) * np.int64(s.pseudo[head])


@nb.njit(cache=True, error_model="numpy")
def is_legal(s, q, colour, width):
    """Whether ``colour`` may play cell ``q``: empty, not the ko, and next to an empty point, an
    opponent's chain in atari (taken) or an own chain with another liberty (no suicide)."""
    if s.board[q] != EMPTY or q == s.ko:
        return False
    for d in range(4):
        n = neighbour(q, d, width)
        v = s.board[n]
        if v == EMPTY:
            return True
        if v != EDGE and (v == colour) != in_atari(s, s.chain[n]):
            return True
    return False


@nb.njit(cache=True, error_model="numpy", inline="always")
def add_liberty(s, head, q, sign):
    """Chain ``head`` gains (``sign`` 1) or loses (-1) the pseudo-liberty at cell ``q``."""
    s.pseudo[head] += sign
    s.lsum[head] += sign * q
    s.lsq[head] += sign * q * q


@nb.njit(cache=True, error_model="numpy")
def merge(s, a, b):
    """One chain of chains ``a`` and ``b`` (heads): the smaller's stones join the larger."""
    if s.stones[a] < s.stones[b]:
        a, b = b, a
    x = b
    while True:
        s.chain[x] = a
        x = s.link[x]
        if x == b:
            break
    s.link[a], s.link[b] = s.link[b], s.link[a]  # splice the two cycles into one
    s.stones[a] += s.stones[b]
    s.pseudo[a] += s.pseudo[b]
    s.lsum[a] += s.lsum[b]
    s.lsq[a] += s.lsq[b]


@nb.njit(cache=True, error_model="numpy")
def take(s, head, width):
    """Remove the chain of ``head``; the chains beside its stones gain their points."""
    theirs = s.board[head]
    x = head
    while True:
        s.board[x] = EMPTY
        s.hash ^= ZOBRIST[theirs - 1, x]
        for d in range(4):
            n = neighbour(x, d, width)
            v = s.board[n]
            if v != EMPTY and v != EDGE and v != theirs:
                add_liberty(s, s.chain[n], x, 1)
        x = s.link[x]
        if x == head:
            break


@nb.njit(cache=True, error_model="numpy")
def place(s, q, colour, width):
    """A legal stone of ``colour`` on cell ``q``: merges, captures and the ko it leaves."""
    theirs = 3 - colour
    s.board[q] = colour
    s.hash ^= ZOBRIST[colour - 1, q]
    s.chain[q] = q
    s.link[q] = q
    s.stones[q] = 1
    s.pseudo[q] = 0
    s.lsum[q] = 0
    s.lsq[q] = 0
    surrounded = True  # every neighbour is the opponent's or off the board: a ko may follow
    for d in range(4):
        n = neighbour(q, d, width)
        v = s.board[n]
        if v == EMPTY:
            add_liberty(s, q, n, 1)
            surrounded = False
        elif v != EDGE:
            add_liberty(s, s.chain[n], q, -1)  # one pair per neighbouring stone
            if v == colour:
                surrounded = False
    for d in range(4):
        n = neighbour(q, d, width)
        if s.board[n] == colour and s.chain[n] != s.chain[q]:
            merge(s, s.chain[n], s.chain[q])
    taken = 0
    last = -1
    for d in range(4):
        n = neighbour(q, d, width)
        if s.board[n] == theirs and s.pseudo[s.chain[n]] == 0:
            taken += s.stones[s.chain[n]]
            last = n
            take(s, s.chain[n], width)
    s.ko = last if taken == 1 and surrounded else -1


@nb.njit(cache=True, error_model="numpy")
def score(s, size, width):
    """Black's and white's area: stones, and empty points whose region reaches no other colour
    (a region reaching no stone counts for both, as Pgx counts it)."""
    black = 0
    white = 0
    for r in range(size):
        for c in range(size):
            v = s.board[(r + 1) * width + c + 1]
            black += v == BLACK
            white += v == WHITE
    for r in range(size):
        for c in range(size):
            start = (r + 1) * width + c + 1
            if s.board[start] != EMPTY:
                continue
            s.board[start] = SEEN
            s.work[0] = start
            top = 1
            region = 0
            reaches = 0  # bit 0: a black stone, bit 1: a white one
            while top > 0:
                top -= 1
                x = s.work[top]
                region += 1
                for d in range(4):
                    n = neighbour(x, d, width)
                    v = s.board[n]
                    if v == EMPTY:
                        s.board[n] = SEEN
                        s.work[top] = n
                        top += 1
                    elif v == BLACK or v == WHITE:  # noqa: SIM109 (numba: no tuples)
                        reaches |= v
            if reaches & WHITE == 0:
                black += region
            if reaches & BLACK == 0:
                white += region
    for r in range(size):
        for c in range(size):
            if s.board[(r + 1) * width + c + 1] == SEEN:
                s.board[(r + 1) * width + c + 1] = EMPTY
    return black, white


@nb.njit(cache=True, error_model="numpy")
def finish(s, cfg, width):
    """The game is over by the score: black wins if its area less komi exceeds white's (in
    float32, as Pgx compares), else white."""
    black, white = score(s, cfg["size"], width)
    black_wins = np.float32(black) - np.float32(cfg.komi) > np.float32(white)
    s.reward[0] = 1.0 if black_wins else -1.0
    s.reward[1] = -s.reward[0]


@nb.njit(cache=True, error_model="numpy")
def remember(s, size, width):
    """The board after this ply joins the history, as the ring's newest row."""
    s.newest = (s.newest + HISTORY - 1) % HISTORY
    row = s.history[s.newest]
    for r in range(size):
        for c in range(size):
            row[r * size + c] = s.board[(r + 1) * width + c + 1]


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    size = cfg["size"]
    width = size + 1
    cells = s.board.shape[0]
    for q in range(cells):
        r, c = q // width, q % width
        s.board[q] = EMPTY if 1 <= r <= size and c >= 1 else EDGE  # tail rows: r > size + 1
        s.chain[q] = 0
        s.link[q] = 0
        s.stones[q] = 0
        s.pseudo[q] = 0
        s.lsum[q] = 0
        s.lsq[q] = 0
        s.work[q] = 0
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0
    s.ko = -1
    s.passes = 0
    s.ply = 0
    s.hash = 0
    for k in range(s.hashes.shape[0]):
        s.hashes[k] = 0
    for k in range(HISTORY):
        for p in range(s.history.shape[1]):
            s.history[k, p] = EMPTY
    s.newest = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        size = cfg["size"]
        width = size + 1
        points = size * size
        colour = a + 1
        action = actions[a]
        placed = action != points
        if placed and not (0 <= action < points and is_legal(s, cell(action, size), colour, width)):
            s.status[a] = INVALID  # Pgx: an illegal action loses, the other wins
            s.status[1 - a] = DONE
            s.reward[1 - a] = 1.0
            return end_step(s, cfg, rewards)
        if placed:
            s.passes = 0
            place(s, cell(action, size), colour, width)
        else:
            s.passes += 1
            s.ko = -1
        repeated = False  # positional superko: this position came before
        if placed:
            for k in range(s.ply):
                if s.hashes[k] == s.hash:
                    repeated = True
                    break
        s.hashes[s.ply] = s.hash
        s.ply += 1
        remember(s, size, width)
        if repeated:
            s.reward[a] = -1.0
            s.reward[1 - a] = 1.0
        elif s.passes >= 2 or s.ply >= 2 * points:
            finish(s, cfg, width)
        if repeated or s.passes >= 2 or s.ply >= 2 * points:
            s.status[0] = DONE
            s.status[1] = DONE
        else:
            s.status[a] = INACTIVE
            s.status[1 - a] = ACTIVE
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    size = cfg["size"]
    width = size + 1
    points = size * size
    colour = to_move(s)
    board = obs[0][i]
    legal = obs[3][i]
    for r in range(size):
        for c in range(size):
            q = (r + 1) * width + c + 1
            board[r * size + c] = s.board[q]
            legal[r * size + c] = colour != 0 and is_legal(s, q, colour, width)
    legal[points] = colour != 0
    obs[1][i, 0] = BLACK
    obs[1][i, 1] = WHITE
    obs[2][i] = colour
    history = obs[4][i]
    for k in range(HISTORY):
        row = s.history[(s.newest + k) % HISTORY]
        for p in range(points):
            history[k, p] = row[p]


# ---- outside the kernels: whole boards, checks, positions and Pgx's planes --------------------


def bordered(boards, size):
    """(records, cells) bordered boards, as records lay them out, of (records, size * size)
    boards."""
    boards = np.asarray(boards).reshape(-1, size, size)
    out = np.full((boards.shape[0], cells_of(layout(size))), EDGE, dtype=np.int8)
    grid = out[:, : cells_of(size)].reshape(-1, size + 2, size + 1)
    grid[:, 1 : size + 1, 1:] = boards
    return out


def points_of(records, size):
    """(records, size * size) boards of records' bordered boards."""
    cells = np.asarray(records["board"]).reshape(-1, cells_of(layout(size)))
    grid = cells[:, : cells_of(size)].reshape(-1, size + 2, size + 1)
    return grid[:, 1 : size + 1, 1:].reshape(cells.shape[0], size * size)


@nb.njit(cache=True)
def derive(board, size, chain, link, stones, pseudo, lsum, lsq):
    """The chains of a bordered board as the kernels keep them, each headed by its first cell;
    returns the first cell of a chain without liberties, or -1."""
    width = size + 1
    stack = np.empty(board.shape[0], dtype=np.int64)
    seen = np.zeros(board.shape[0], dtype=np.bool_)
    dead = -1
    for head in range(board.shape[0]):
        colour = board[head]
        if seen[head] or (colour != BLACK and colour != WHITE):
            continue
        stones[head] = 0
        pseudo[head] = 0
        lsum[head] = 0
        lsq[head] = 0
        seen[head] = True
        stack[0] = head
        top = 1
        while top > 0:
            top -= 1
            x = stack[top]
            chain[x] = head
            if x != head:  # into the cycle, after the head
                link[x] = link[head]
                link[head] = x
            else:
                link[x] = x
            stones[head] += 1
            for d in range(4):
                n = neighbour(x, d, width)
                if board[n] == EMPTY:
                    pseudo[head] += 1
                    lsum[head] += n
                    lsq[head] += n * n
                elif board[n] == colour and not seen[n]:
                    seen[n] = True
                    stack[top] = n
                    top += 1
        if pseudo[head] == 0 and dead < 0:
            dead = head
    return dead


@nb.njit(cache=True)
def zobrist(board):
    h = np.uint64(0)
    for q in range(board.shape[0]):
        if board[q] == BLACK or board[q] == WHITE:
            h ^= ZOBRIST[board[q] - 1, q]
    return h


@nb.njit(cache=True)
def _chains_agree(board, size, chain, link, stones, pseudo, lsum, lsq):
    """Whether the kept chains are the board's: one head per chain, its cycle through exactly
    the chain's stones, and the chain's counts at its head."""
    cells = board.shape[0]
    canon = np.zeros(cells, dtype=np.int16)
    c_link = np.zeros(cells, dtype=np.int16)
    c_stones = np.zeros(cells, dtype=np.int16)
    c_pseudo = np.zeros(cells, dtype=np.int16)
    c_lsum = np.zeros(cells, dtype=np.int32)
    c_lsq = np.zeros(cells, dtype=np.int32)
    derive(board, size, canon, c_link, c_stones, c_pseudo, c_lsum, c_lsq)
    for q in range(cells):
        if board[q] != BLACK and board[q] != WHITE:
            continue
        h = chain[q]
        if h < 0 or h >= cells or board[h] != board[q] or canon[h] != canon[q]:
            return False
        if chain[canon[q]] != h or chain[h] != h:
            return False
        if q != h:
            continue
        k = canon[q]
        if (
            stones[h] != c_stones[k]
            or pseudo[h] != c_pseudo[k]
            or lsum[h] != c_lsum[k]
            or lsq[h] != c_lsq[k]
        ):
            return False
        x = h
        for walked in range(1, c_stones[k] + 1):
            x = link[x]
            if x < 0 or x >= cells or chain[x] != h or (x == h) != (walked == c_stones[k]):
                return False
    return True


def _board_message(board, size):
    """Why a bordered board cannot be a game's, or None."""
    expect_edge = bordered(np.zeros((1, size * size), dtype=np.int8), size)[0] == EDGE
    if ((board == EDGE) != expect_edge).any():
        return "invalid state: board must be EDGE (3) exactly off the board"
    cells = len(board)
    chain = np.zeros(cells, dtype=np.int16)
    link, stones, pseudo = (np.zeros(cells, dtype=np.int16) for _ in range(3))
    lsum, lsq = (np.zeros(cells, dtype=np.int32) for _ in range(2))
    if derive(board, size, chain, link, stones, pseudo, lsum, lsq) >= 0:
        return "invalid state: a chain of stones has no liberty"
    return None


def check_state(records, config):
    """The board is one play can reach (every chain has a liberty) and the chains, hash, ko and
    counters are the board's."""
    size = config["size"]
    points = size * size
    for record in np.atleast_1d(records):
        board = record["board"]
        message = _board_message(board, size)
        if message:
            return message
        if not _chains_agree(
            board,
            size,
            record["chain"],
            record["link"],
            record["stones"],
            record["pseudo"],
            record["lsum"],
            record["lsq"],
        ):
            return "invalid state: chain, link, stones, pseudo, lsum and lsq must be the board's"
        if record["hash"] != zobrist(board):
            return "invalid state: hash must be the board's Zobrist hash"
        ko = int(record["ko"])
        if ko != -1 and not (0 <= ko < len(board) and board[ko] == EMPTY):
            return "invalid state: ko must be -1 or an empty point"
        running = (record["status"] == ACTIVE).any()
        if record["ply"] > 2 * points or (running and record["ply"] == 2 * points):
            return f"invalid state: ply must be below {2 * points} while the game runs"
        if running and record["passes"] >= 2:
            return "invalid state: two passes end the game"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


def position(record, config, given):
    """A position from its board (every chain with a liberty), optionally its history (newest
    first, the board first of all), the marks, statuses and rewards. Plies count from here: the
    game runs 2 * size * size more, and superko compares positions from here on."""
    size = config["size"]
    points = size * size
    board = np.asarray(observed(given, "board", np.zeros(points, dtype=np.int8)))
    marks = observed(given, "mark", np.array([BLACK, WHITE]))
    for k, (mark, want) in enumerate(zip(np.asarray(marks).tolist(), (BLACK, WHITE), strict=True)):
        if mark != want:
            raise PositionError("observation.mark", f"is {mark}; agent {k} plays {want}", agent=k)
    history = given["observation"].get("history")
    if history is None:
        history = np.zeros((HISTORY, points), dtype=np.int8)
        history[0] = board
    elif (np.asarray(history)[0] != board).any():
        raise PositionError("observation.history", "must start with the board")
    record["history"][:, :points] = history
    cells = bordered(board, size)[0]
    if _board_message(cells, size):
        raise PositionError("observation.board", "holds a chain of stones without a liberty")
    record["board"] = cells
    derive(
        cells,
        size,
        record["chain"],
        record["link"],
        record["stones"],
        record["pseudo"],
        record["lsum"],
        record["lsq"],
    )
    write_turns(record, given, (ACTIVE, INACTIVE))
    turn = given["observation"].get("turn")
    status = record["status"]
    expected = BLACK if status[0] == ACTIVE else WHITE if status[1] == ACTIVE else 0
    if turn is not None and int(turn) != expected:
        raise PositionError("observation.turn", f"is {int(turn)}; the statuses say {expected}")
    record["ko"] = -1
    record["passes"] = 0
    record["ply"] = 0
    record["hash"] = zobrist(cells)
    record["newest"] = 0


def planes(history, mark):
    """Pgx's observation planes from observation ``history`` (..., 8, size * size), seen by the
    player of ``mark`` (...; 1 or 2): (..., size, size, 17) bool, planes 2k and 2k + 1 that
    player's and the opponent's stones k plies ago, plane 16 true for white. With the observation's
    ``turn`` as the mark, they are Pgx's ``state.observation``."""
    history = np.asarray(history)
    mark = np.asarray(mark)
    if not np.isin(mark, (BLACK, WHITE)).all():
        raise ValueError("planes: mark must be 1 (black) or 2 (white)")
    lead = history.shape[:-2]
    size = round(history.shape[-1] ** 0.5)
    boards = history.reshape(*lead, HISTORY, size, size)
    mark = mark[..., None, None, None]
    stones = np.stack([boards == mark, boards == 3 - mark], axis=-3)
    stones = stones.reshape(*lead, 2 * HISTORY, size, size)
    white = np.broadcast_to(mark == WHITE, (*lead, 1, size, size))
    return np.moveaxis(np.concatenate([stones, white], axis=-3), -3, -1)
