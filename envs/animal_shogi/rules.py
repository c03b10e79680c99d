"""Animal shogi (dobutsu shogi) over one episode's record, with Pgx's actions, rules and ends.

The board is 3 columns by 4 rows, squares numbered as Pgx numbers them from the first player's
side: ``square = 4 * column + row``, row 0 the far row (the second player's home), column 0 where
the first player's giraffe starts (drawn on the right, as Pgx draws it). Agent 0 moves first, from
the bottom rows. Pieces are signed codes: chick 1, elephant 2, giraffe 3, lion 4, hen 5 (a chick
promoted on the far row), the first player's positive, the second's negative. Captured pieces go
to the captor's hand (``hands``: chicks, elephants, giraffes; a hen comes back as a chick) and may
be dropped on any empty square.

Actions are Pgx's 132 labels, seen by the player to move (Pgx turns the board round for the
second player: its square ``s`` is the board's ``11 - s`` and its direction ``d`` the board's
``7 - d``): ``12 * direction + from`` (0-95, the eight directions of Pgx's ``_to``) moves a piece,
``96 + 12 * piece + to`` (piece 0 chick, 1 elephant, 2 giraffe) drops one.

The game ends, as Pgx ends it: the player to move without a legal move loses (checkmate, or no
move at all); a lion reaching the far row wins at once (the try, whether or not it could be
taken there); the third occurrence of a position is a draw; after 256 plies it is a draw (a win
on the 256th ply stands). An illegal action loses: its agent becomes INVALID (-1), the other wins
(+1), as Pgx rules it.

Repetitions are found as Pgx finds them, through a Zobrist key updated move by move, whose
updates ours copies term for term (with keys of its own): Pgx's update folds a count of the
mover's chicks in hand into every move that takes nothing and takes a captured piece's key off
the from-square, so its key follows the moves that led to a position, and two positions count as
one exactly when Pgx counts them so.

The record also keeps Pgx's observation history as Pgx keeps it (``pgx_boards``, ``pgx_hands``,
``pgx_reps``: its ``_board_history``, ``_hand_history`` and ``_rep_history``, from the view of the
player to move), which ``planes`` reads to give Pgx's own observation tensor.
"""

import numba as nb
import numpy as np

from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    INVALID,
    any_active,
    begin_rewards,
    end_step,
    mover,
)

SQUARES = 12
ACTIONS = 132
MOVES = 96  # labels below are moves, from 96 on drops
MAX_PLIES = 256  # Pgx's MAX_TERMINATION_STEPS: a draw after
CHICK, ELEPHANT, GIRAFFE, LION, HEN = 1, 2, 3, 4, 5
# The start: the second player's elephant, lion, giraffe on row 0 and chick on row 1; the first
# player's chick on row 2 and giraffe, lion, elephant on row 3 (columns 0, 1, 2).
START = np.array([-2, 0, 0, 3, -4, -1, 1, 4, -3, 0, 0, 2], dtype=np.int8)

# Pgx's directions (``_to``): (column step, row step); d and 7 - d are opposite.
DX = (-1, -1, -1, 0, 0, 1, 1, 1)
DY = (-1, 0, 1, -1, 1, -1, 0, 1)


def _tables():
    to = np.full((SQUARES, 8), -1, dtype=np.int8)
    for sq in range(SQUARES):
        x, y = divmod(sq, 4)
        for d in range(8):
            if 0 <= x + DX[d] < 3 and 0 <= y + DY[d] < 4:
                to[sq, d] = 4 * (x + DX[d]) + y + DY[d]
    # Where each kind moves, seen by its owner (forward is row - 1): chick, elephant, giraffe,
    # lion, hen, by Pgx's ``_can_move``.
    can = np.zeros((6, 8), dtype=np.bool_)
    for d in range(8):
        dx, dy = DX[d], DY[d]
        can[CHICK, d] = dx == 0 and dy == -1
        can[ELEPHANT, d] = dx != 0 and dy != 0
        can[GIRAFFE, d] = (dx == 0) != (dy == 0)
        can[LION, d] = True
        can[HEN, d] = dx == 0 or dy != 1
    return to, can


TO, CAN = _tables()


def _splitmix(words):
    z = words
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# Zobrist keys in Pgx's layout: a square and one of Pgx's ten pieces (the first player's chick,
# elephant, giraffe, lion, hen, then the second player's), a player, a kind in hand and a count,
# the side to move, the start. Fixed, so keys agree in every process and on every device.
_keys = _splitmix(np.arange(1, 12 * 10 + 18 + 3, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
BOARD_KEYS = _keys[:120].reshape(12, 10).copy()
HAND_KEYS = _keys[120:138].reshape(2, 3, 3).copy()
SIDE_KEY = _keys[138]
START_KEY = _keys[139]
del _keys

FIELDS = [
    ("board", np.int8, (SQUARES,)),
    ("hands", np.int8, (2, 3)),  # each player's chicks, elephants, giraffes in hand
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("turn", np.uint8),  # the player to move
    ("ply", np.int16),  # plies played (Pgx's step count)
    ("hash", np.uint64),  # Pgx's key of the position (see the module's docstring)
    ("history", np.uint64, (MAX_PLIES + 1,)),  # the key after each ply, [0] the start's
    ("repetitions", np.int8),  # earlier occurrences of the position (2: the game is over)
    ("legal", np.uint8, (ACTIONS,)),  # the legal labels of the player to move (1: legal)
    # Pgx's observation history (its codes: -1 empty, 0-4 the viewer's, 5-9 the other's).
    ("pgx_boards", np.int8, (8 * SQUARES,)),
    ("pgx_hands", np.int8, (8 * 6,)),
    ("pgx_reps", np.int8, (8,)),
]

STATE_BOUNDS = {
    "board": (-HEN, HEN),
    "hands": (0, 2),
    "status": (0, 5),
    "reward": (-1, 1),
    "turn": (0, 1),
    "ply": (0, MAX_PLIES),
    "repetitions": (0, 2),
    "pgx_boards": (-1, 9),
    "pgx_hands": (0, 2),
    "pgx_reps": (0, 2),
}

# Observation fields, in the spec's order.
BOARD, HANDS, COLOR, REPETITIONS, LEGAL = range(5)


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def pgx_code(code):
    """Pgx's piece (0-4 the first player's chick, elephant, giraffe, lion, hen; 5-9 the
    second's) of a non-empty signed code."""
    return code - 1 if code > 0 else 4 - code


@nb.njit(cache=True, error_model="numpy")
def attacked(board, sq, player):
    """Whether a piece of ``player``'s opponent attacks square ``sq``."""
    sign = 1 - 2 * player
    for d in range(8):
        n = TO[sq, d]
        if n < 0:
            continue
        code = board[n] * sign
        # The other player's piece on n steps back along d (the board's 7 - d), which its
        # owner, the second player when ``player`` is the first, sees turned round.
        if code < 0 and CAN[-code, d if player == 0 else 7 - d]:
            return True
    return False


@nb.njit(cache=True, error_model="numpy")
def generate(s):
    """Write the legal labels of the player to move into ``s.legal``; returns how many."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    board = s.board
    for k in range(ACTIONS):
        s.legal[k] = 0
    king = np.int64(-1)  # not a literal: a helper called with one compiles once more
    for sq in range(SQUARES):
        if board[sq] == LION * sign:
            king = sq
    found = 0
    for sq in range(SQUARES):
        code = board[sq]
        kind = code * sign
        if kind <= 0:
            continue
        seen = sq if t == 0 else 11 - sq
        for d in range(8):
            if not CAN[kind, d]:
                continue
            to = TO[sq, d if t == 0 else 7 - d]
            if to < 0 or board[to] * sign > 0:
                continue
            taken = board[to]
            board[to] = code
            board[sq] = 0
            safe = not attacked(board, to if kind == LION else king, t)
            board[sq] = code
            board[to] = taken
            if safe:
                s.legal[12 * d + seen] = 1
                found += 1
    if not attacked(board, king, t):  # a drop blocks nothing: every piece steps one square
        for p in range(3):
            if s.hands[t, p] > 0:
                for sq in range(SQUARES):
                    if board[sq] == 0:
                        s.legal[MOVES + 12 * p + (sq if t == 0 else 11 - sq)] = 1
                        found += 1
    return found


@nb.njit(cache=True, error_model="numpy")
def play(s, label):
    """Make the legal move ``label`` of the player to move, the key updated as Pgx updates it;
    returns whether the mover's lion reached the far row."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    h = s.hash
    if label < MOVES:
        d = label // 12
        seen = label - 12 * d
        frm = seen if t == 0 else 11 - seen
        to = np.int64(TO[frm, d if t == 0 else 7 - d])
        code = s.board[frm]
        taken = s.board[to]
        h ^= BOARD_KEYS[frm, pgx_code(code)]
        kind = 0  # Pgx counts the chicks in hand when nothing is taken
        if taken != 0:
            h ^= BOARD_KEYS[frm, pgx_code(taken)]  # Pgx's key takes it off the from-square
            kind = (abs(taken) - 1) % 4  # a hen comes back as a chick
            s.hands[t, kind] += 1
        n = np.int64(s.hands[t, kind])
        h ^= HAND_KEYS[t, kind, n - 1 if n > 0 else 2] ^ HAND_KEYS[t, kind, n]
        if code * sign == CHICK and seen % 4 == 1:
            code = HEN * sign
        s.board[frm] = 0
        s.board[to] = code
        h ^= BOARD_KEYS[to, pgx_code(code)]
    else:
        p = (label - MOVES) // 12
        seen = label - MOVES - 12 * p
        to = seen if t == 0 else 11 - seen
        code = (p + 1) * sign
        s.board[to] = code
        h ^= BOARD_KEYS[to, pgx_code(code)]
        n = np.int64(s.hands[t, p])
        h ^= HAND_KEYS[t, p, min(n + 1, 2)] ^ HAND_KEYS[t, p, n]  # as Pgx: one up, clamped
        s.hands[t, p] -= 1
    s.hash = h ^ SIDE_KEY
    far = 0 if t == 0 else 3
    for x in range(3):  # noqa: SIM110 (a plain loop: numba compiles no generators)
        if s.board[4 * x + far] == LION * sign:
            return True
    return False


@nb.njit(cache=True, error_model="numpy")
def remember(s):
    """After a move: Pgx's observation history, as Pgx rolls and turns it (its ``jnp.roll``
    without an axis moves each board row by 8 of its 12 squares), seen by the player to move."""
    t = np.int64(s.turn)  # the player who just moved, whose view the new row takes
    boards, hands = s.pgx_boards, s.pgx_hands
    for k in range(8 * SQUARES - 1, 7, -1):
        boards[k] = boards[k - 8]
    for k in range(SQUARES):
        code = s.board[k if t == 0 else 11 - k]
        if code == 0:
            boards[k] = -1
        else:
            boards[k] = pgx_code(code * (1 - 2 * t))
    wrapped6, wrapped7 = hands[46], hands[47]  # the roll is cyclic: they come round to 6 and 7
    for k in range(8 * 6 - 1, 7, -1):
        hands[k] = hands[k - 8]
    hands[6] = wrapped6
    hands[7] = wrapped7
    for p in range(3):
        hands[p] = s.hands[t, p]
        hands[3 + p] = s.hands[1 - t, p]
    # Turned round for the player to move: each row of 12 reversed, colours swapped; each row
    # of hands swaps its halves.
    for row in range(8):
        base = SQUARES * row
        for c in range(6):
            a = boards[base + c]
            b = boards[base + 11 - c]
            boards[base + c] = b if b < 0 else (b + 5) % 10
            boards[base + 11 - c] = a if a < 0 else (a + 5) % 10
        base = 6 * row
        for c in range(3):
            a = hands[base + c]
            hands[base + c] = hands[base + 3 + c]
            hands[base + 3 + c] = a


@nb.njit(cache=True, error_model="numpy")
def settle(s, tried):
    """After a move (the turn passed): the key's history and repetitions, the legal moves of the
    player to move. Returns 0 while the game goes on, 1 when the mover has won, 2 on a draw."""
    s.ply += 1
    ply = np.int64(s.ply)
    s.history[ply] = s.hash
    seen = 0
    for k in range(ply):
        if s.history[k] == s.hash:
            seen += 1
    s.repetitions = min(seen, 2)
    for k in range(7, 0, -1):
        s.pgx_reps[k] = s.pgx_reps[k - 1]
    s.pgx_reps[0] = s.repetitions
    moves = generate(s)
    if seen >= 2:
        return 2
    if moves == 0 or tried:
        return 1
    if ply >= MAX_PLIES:
        return 2
    return 0


@nb.njit(cache=True, error_model="numpy")
def clear_legal(s):
    for k in range(ACTIONS):
        s.legal[k] = 0


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(SQUARES):  # a loop: an array copy would need numba's runtime, which CUDA lacks
        s.board[k] = START[k]
    for p in range(2):
        for k in range(3):
            s.hands[p, k] = 0
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0
    s.turn = 0
    s.ply = 0
    s.hash = START_KEY
    for k in range(MAX_PLIES + 1):
        s.history[k] = 0
    s.history[0] = START_KEY
    s.repetitions = 0
    for k in range(8 * SQUARES):
        s.pgx_boards[k] = -1
    for k in range(SQUARES):
        s.pgx_boards[k] = pgx_code(START[k]) if START[k] != 0 else -1
    for k in range(8 * 6):
        s.pgx_hands[k] = 0
    for k in range(8):
        s.pgx_reps[k] = 0
    generate(s)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        label = actions[a]
        other = 1 - a
        if 0 <= label < ACTIONS and s.legal[label]:
            tried = play(s, label)
            remember(s)
            s.turn = other
            end = settle(s, tried)
            if end == 0:
                s.status[a] = INACTIVE
                s.status[other] = ACTIVE
            else:
                if end == 1:
                    s.reward[a] = 1.0
                    s.reward[other] = -1.0
                s.status[a] = DONE
                s.status[other] = DONE
        else:
            s.status[a] = INVALID  # Pgx: an illegal action loses, the other wins
            s.status[other] = DONE
            s.reward[other] = 1.0
    done = end_step(s, cfg, rewards)
    if done:
        clear_legal(s)
    return done


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[BOARD][i]
    for k in range(SQUARES):
        board[k] = s.board[k]
    hands = obs[HANDS][i]
    for p in range(2):
        for k in range(3):
            hands[p, k] = s.hands[p, k]
    obs[COLOR][i, 0] = 0
    obs[COLOR][i, 1] = 1
    obs[REPETITIONS][i] = s.repetitions
    legal = obs[LEGAL][i]
    running = any_active(s)
    for k in range(ACTIONS):
        legal[k] = running and s.legal[k] != 0


# ---- outside the kernels: checks, Pgx's observation --------------------------------------------

# What a record can get wrong (index: ``problem``'s answer).
PROBLEMS = (
    None,
    "board needs one lion of each player",
    "board and hands must hold two chicks (or hens), two elephants and two giraffes in all",
    "status must make the player to move (turn) the ACTIVE agent",
    "legal must be the legal moves of the player to move",
    "repetitions must count the position's earlier occurrences in history",
    "board is over: a lion stands on its far row",
    "legal must be empty while no agent is to move",
    "board is over: the player to move has no legal move",
    "ply must be below 256 while the game runs",
)


@nb.njit(cache=True, error_model="numpy")
def problem(s, scratch):
    """The index in PROBLEMS of what is wrong with record ``s`` (0: nothing); ``scratch`` is a
    record of the same type to recompute into."""
    lions = 0
    chicks = s.hands[0, 0] + s.hands[1, 0]
    elephants = s.hands[0, 1] + s.hands[1, 1]
    giraffes = s.hands[0, 2] + s.hands[1, 2]
    for sq in range(SQUARES):
        code = s.board[sq]
        kind = abs(code)
        if code == LION:
            lions += 1
        elif code == -LION:
            lions += 16
        chicks += kind == CHICK or kind == HEN  # noqa: SIM109 (numba: no tuples)
        elephants += kind == ELEPHANT
        giraffes += kind == GIRAFFE
        scratch.board[sq] = code
    if lions != 17:
        return 1
    if chicks != 2 or elephants != 2 or giraffes != 2:
        return 2
    for p in range(2):
        for k in range(3):
            scratch.hands[p, k] = s.hands[p, k]
    running = -1
    if s.status[0] == ACTIVE and s.status[1] == INACTIVE:
        running = 0
    elif s.status[1] == ACTIVE and s.status[0] == INACTIVE:
        running = 1
    if running >= 0 and running != s.turn:
        return 3
    ply = np.int64(s.ply)
    seen = 0
    for k in range(ply):
        if s.history[k] == s.history[ply]:
            seen += 1
    if s.history[ply] != s.hash or min(seen, 2) != s.repetitions:
        return 5
    if running < 0:
        for k in range(ACTIONS):
            if s.legal[k]:
                return 7
        return 0
    scratch.turn = s.turn
    moves = generate(scratch)
    for k in range(ACTIONS):
        if scratch.legal[k] != s.legal[k]:
            return 4
    for x in range(3):
        if s.board[4 * x] == LION or s.board[4 * x + 3] == -LION:
            return 6
    if moves == 0:
        return 8
    if ply >= MAX_PLIES or seen >= 2:
        return 9 if ply >= MAX_PLIES else 5
    return 0


@nb.njit(cache=True, error_model="numpy")
def first_problem(records, scratch):
    """(index, problem) of the first record with a problem, else (-1, 0)."""
    for i in range(records.shape[0]):
        found = problem(records[i], scratch[0])
        if found:
            return i, found
    return -1, 0


def check_state(records, config):
    """Every record is a position the rules can play: a lion each, the pieces all there, the
    legal moves those of the board, the ACTIVE agent the player to move, the key at ``ply`` in
    the history and the repetitions counted from it, a game not already over."""
    scratch = np.zeros(1, dtype=records.dtype)
    index, found = first_problem(np.ascontiguousarray(records), scratch)
    if index >= 0:
        return f"invalid state (record {index}): {PROBLEMS[found]}"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


def planes(records, player):
    """Pgx's observation of ``player`` (0 or 1: agent 0 is the first player, Pgx's colour 0):
    (N, 4, 3, 194) float32 of N state records, as Pgx's ``observe`` makes it: eight rows of its
    history, each 10 piece planes, 12 hand planes (two counts of three kinds, the viewer's
    first) and 2 repetition planes; then the viewer's colour and the plies played / 256. Pgx's
    history is its own (``pgx_boards``: see the module's docstring)."""
    records = np.atleast_1d(records)
    n = len(records)
    boards = records["pgx_boards"].reshape(n, 8, SQUARES).astype(np.int64)
    hands = records["pgx_hands"].reshape(n, 8, 6).astype(np.int64)
    turned = records["turn"] != player  # Pgx turns the history round for the other player
    if turned.any():
        b = boards[turned]
        boards[turned] = np.where(b < 0, -1, (b + 5) % 10)[:, :, ::-1]
        hands[turned] = np.roll(hands[turned], 3, axis=2)
    out = np.zeros((n, 8, 24, SQUARES), dtype=np.float32)
    out[:, :, :10] = boards[:, :, None, :] == np.arange(10)[None, None, :, None]
    counts = hands[:, :, :, None] >= np.arange(1, 3)[None, None, None, :]  # (n, 8, 6, 2)
    out[:, :, 10:22] = counts.reshape(n, 8, 12)[..., None]
    reps = records["pgx_reps"][:, :, None]
    out[:, :, 22] = reps == 0
    out[:, :, 23] = reps == 1
    rows = out.reshape(n, 192, SQUARES)
    color = np.broadcast_to(np.float32(player), (n, 1, SQUARES))
    plies = (records["ply"].astype(np.float32) / MAX_PLIES)[:, None, None]
    rows = np.concatenate([rows, color, np.broadcast_to(plies, (n, 1, SQUARES))], axis=1)
    # Pgx's layout: (194, 3, 4) turned channel-last and its rows (columns) flipped.
    return rows.reshape(n, 194, 3, 4).transpose(0, 3, 2, 1)[:, :, ::-1].copy()


def label(frm, to, turn):
    """Pgx's label of moving the piece on square ``frm`` to square ``to`` for the player
    ``turn`` (0 moves first), or of a drop: ``frm`` a kind in hand as "chick", "elephant" or
    "giraffe"."""
    seen = to if turn == 0 else 11 - to
    if isinstance(frm, str):
        return MOVES + 12 * ("chick", "elephant", "giraffe").index(frm) + seen
    origin = frm if turn == 0 else 11 - frm
    step = (seen // 4 - origin // 4, seen % 4 - origin % 4)
    for d in range(8):
        if (DX[d], DY[d]) == step:
            return 12 * d + origin
    raise ValueError(f"squares {frm} and {to} are not neighbours")
