"""Gardner's minichess (5x5) over one episode's record, with Pgx's actions, rules and ends.

Squares are numbered as Pgx numbers them, ``square = 5 * file + rank`` (a1 = 0, a2 = 1, ...,
a5 = 4, b1 = 5, ..., e5 = 24). Pieces are chess's codes, pawn 1, knight 2, bishop 3, rook 4,
queen 5, king 6, white positive, black negative. White (agent 0) moves first from ``RNBQK`` /
``PPPPP``. Chess's rules without castling, double steps or en passant: a pawn steps one square
and takes diagonally, and on the last rank becomes a queen, or a rook, bishop or knight by an
under-promotion.

Actions are Pgx's 1225 labels, ``49 * from + plane``, the from-square and plane seen by the
player to move (Pgx mirrors the board top to bottom for black: square ``s`` is
``5 * (s // 5) + 4 - s % 5``): planes 0-8 under-promote (rook, bishop, knight, each straight, to
the file above, to the file below), 9-40 are queen moves (8 directions x 4 distances, in Pgx's
order) and 41-48 knight moves; a pawn reaching the last rank by a queen-move plane becomes a
queen.

The game ends as Pgx ends it: the player to move without a legal move (checkmate +1/-1,
stalemate a draw), a half-move clock of 100, insufficient material (OpenSpiel's rule, as Pgx),
the third occurrence of a position (the pieces and the side to move, over the whole game) and
256 plies, all draws but checkmate (a checkmate on the 256th ply stands). An illegal action loses:
its agent becomes INVALID (-1), the other wins (+1), as Pgx rules it.

The record keeps the last eight boards (``boards``, a ring) and the key after each ply
(``history``), from which ``planes`` makes Pgx's observation tensor.
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

SQUARES = 25
PLANES = 49
ACTIONS = SQUARES * PLANES  # 1225
WORDS = (ACTIONS + 63) // 64  # the legal labels as bits: 20 words
UNDERPROMOTIONS = 9
MAX_PLIES = 256
FIFTY_MOVES = 100
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6
START = np.array(
    [4, 1, 0, -1, -4, 2, 1, 0, -1, -2, 3, 1, 0, -1, -3, 5, 1, 0, -1, -5, 6, 1, 0, -1, -6],
    dtype=np.int8,
)
U0, U1 = np.uint64(0), np.uint64(1)


def _on(f, r):
    return 0 <= f < 5 and 0 <= r < 5


def _tables():
    # Pgx's queen planes 9-40 as (rank step, file step), then its knight planes 41-48.
    runs = (
        [(-k, 0) for k in range(4, 0, -1)]
        + [(k, 0) for k in range(1, 5)]
        + [(0, -k) for k in range(4, 0, -1)]
        + [(0, k) for k in range(1, 5)]
        + [(-k, -k) for k in range(4, 0, -1)]
        + [(k, k) for k in range(1, 5)]
        + [(k, -k) for k in range(4, 0, -1)]
        + [(-k, k) for k in range(1, 5)]
        + [(-1, -2), (1, -2), (-2, -1), (2, -1), (-1, 2), (1, 2), (-2, 1), (2, 1)]
    )
    plane = np.full((9, 9), -1, dtype=np.int8)  # [file step + 4, rank step + 4]
    for k, (dr, df) in enumerate(runs):
        plane[df + 4, dr + 4] = UNDERPROMOTIONS + k
    target = np.full((SQUARES, PLANES), -1, dtype=np.int8)  # seen by the mover
    for sq in range(SQUARES):
        f, r = divmod(sq, 5)
        for k, (dr, df) in enumerate(runs):
            if _on(f + df, r + dr):
                target[sq, UNDERPROMOTIONS + k] = 5 * (f + df) + r + dr
        if r == 3:
            for k in range(UNDERPROMOTIONS):
                df = (0, 1, -1)[k % 3]
                if _on(f + df, 4):
                    target[sq, k] = 5 * (f + df) + 4
    # Rays: the squares from a square in each direction (file step, rank step), nearest first.
    steps = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
    ray = np.full((SQUARES, 8, 4), -1, dtype=np.int8)
    knight = np.full((SQUARES, 8), -1, dtype=np.int8)
    king = np.full((SQUARES, 8), -1, dtype=np.int8)
    aligned = np.zeros((SQUARES, SQUARES), dtype=np.bool_)
    for sq in range(SQUARES):
        f, r = divmod(sq, 5)
        for d, (df, dr) in enumerate(steps):
            for k in range(1, 5):
                if _on(f + k * df, r + k * dr):
                    ray[sq, d, k - 1] = 5 * (f + k * df) + r + k * dr
                    aligned[sq, 5 * (f + k * df) + r + k * dr] = True
            if _on(f + df, r + dr):
                king[sq, d] = 5 * (f + df) + r + dr
        n = 0
        for df, dr in ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)):
            if _on(f + df, r + dr):
                knight[sq, n] = 5 * (f + df) + r + dr
                n += 1
    return plane, target, ray, knight, king, aligned


# int16: the CUDA simulator computes in the tables' own types, where int8 sums would overflow;
# small, as they compile into a GPU kernel's constant memory (64 KB).
PLANE, TARGET, RAY, KNIGHT_TO, KING_TO = (t.astype(np.int16) for t in _tables()[:5])
ALIGNED = _tables()[5]
PROMOTED = np.array([ROOK, BISHOP, KNIGHT], dtype=np.int8)  # an under-promotion's plane // 3


def _splitmix(words):
    z = words
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# Zobrist keys: a piece code (+6) on a square, black to move. Fixed, so keys agree everywhere.
_keys = _splitmix(np.arange(1, 13 * SQUARES + 2, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03))
PIECE_KEYS = _keys[: 13 * SQUARES].reshape(13, SQUARES).copy()
PIECE_KEYS[6] = 0  # an empty square adds nothing
BLACK_KEY = _keys[13 * SQUARES]
del _keys

FIELDS = [
    ("board", np.int8, (SQUARES,)),
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("turn", np.uint8),  # 0 white, 1 black
    ("halfmove", np.int16),  # plies since the last capture or pawn move
    ("fullmove", np.int32),
    ("ply", np.int16),  # plies played (Pgx's step count)
    ("hash", np.uint64),  # the position's Zobrist key
    ("history", np.uint64, (MAX_PLIES + 1,)),  # the key after each ply, [0] the start's
    ("repetitions", np.int8),  # earlier occurrences of the position (2: the game is over)
    ("legal", np.uint64, (WORDS,)),  # the legal labels of the player to move, as bits
    ("boards", np.int8, (8, SQUARES)),  # the board after ply k in row k % 8
]

STATE_BOUNDS = {
    "board": (-KING, KING),
    "status": (0, 5),
    "reward": (-1, 1),
    "turn": (0, 1),
    "halfmove": (0, FIFTY_MOVES),
    "fullmove": (1, 2**30),
    "ply": (0, MAX_PLIES),
    "repetitions": (0, 2),
    "boards": (-KING, KING),
}

# Observation fields, in the spec's order.
BOARD, COLOR, HALFMOVE, FULLMOVE, REPETITIONS, LEGAL = range(6)


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def attacked(board, sq, sign):
    """Whether a piece of the side ``sign`` (1 white, -1 black) attacks square ``sq``."""
    for k in range(8):
        n = KNIGHT_TO[sq, k]
        if n >= 0 and board[n] == KNIGHT * sign:
            return True
        n = KING_TO[sq, k]
        if n >= 0 and board[n] == KING * sign:
            return True
    f, r = sq // 5, sq % 5
    r -= sign  # a pawn attacks from the rank behind the square, seen by its side
    if 0 <= r < 5:
        if f > 0 and board[5 * (f - 1) + r] == PAWN * sign:
            return True
        if f < 4 and board[5 * (f + 1) + r] == PAWN * sign:
            return True
    for d in range(8):
        for k in range(4):
            n = RAY[sq, d, k]
            if n < 0:
                break
            code = board[n] * sign
            if code != 0:
                if code == QUEEN or code == (ROOK if d % 2 == 0 else BISHOP):
                    return True
                break
    return False


@nb.njit(cache=True, error_model="numpy")
def seen(sq, t):
    """Square ``sq`` as the player ``t`` sees it (black's board is mirrored top to bottom)."""
    return sq if t == 0 else sq + 4 - 2 * (sq % 5)


@nb.njit(cache=True, error_model="numpy")
def add(s, frm, to, t, pawn):
    """Mark the legal move ``frm`` -> ``to``: its queen-move or knight-move plane, and a pawn's
    three under-promotions on the last rank."""
    f, g = seen(frm, t), seen(to, t)
    label = PLANES * f + PLANE[g // 5 - f // 5 + 4, g % 5 - f % 5 + 4]
    s.legal[label >> 6] |= U1 << np.uint64(label & 63)
    if pawn and g % 5 == 4:
        side = g // 5 - f // 5  # 0 straight, 1 up the files, -1 down
        base = PLANES * f + (0 if side == 0 else (1 if side == 1 else 2))
        for k in range(3):
            label = base + 3 * k
            s.legal[label >> 6] |= U1 << np.uint64(label & 63)


@nb.njit(cache=True, error_model="numpy")
def try_move(s, frm, to, king, checked, t):
    """Add the pseudo-legal move ``frm`` -> ``to`` if it leaves the mover's king unattacked (a
    move off every line through the king cannot uncover it, unless the king is in check)."""
    board = s.board
    code = board[frm]
    sign = 1 - 2 * t
    if code == KING * sign or checked or ALIGNED[king, frm]:
        taken = board[to]
        board[to] = code
        board[frm] = 0
        safe = not attacked(board, to if code == KING * sign else king, -sign)
        board[frm] = code
        board[to] = taken
        if not safe:
            return 0
    add(s, frm, to, t, code == PAWN * sign)
    return 1


@nb.njit(cache=True, error_model="numpy")
def generate(s):
    """Write the legal labels of the player to move into ``s.legal``; returns (how many
    moves, whether that player is in check)."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    board = s.board
    for w in range(WORDS):
        s.legal[w] = U0
    king = np.int64(0)  # not a literal: a helper called with one compiles once more
    for sq in range(SQUARES):
        if board[sq] == KING * sign:
            king = sq
    checked = attacked(board, king, -sign)
    found = 0
    for sq in range(SQUARES):
        kind = board[sq] * sign
        if kind <= 0:
            continue
        if kind == PAWN:
            f, r = sq // 5, sq % 5 + sign
            if 0 <= r < 5:
                ahead = 5 * f + r
                if board[ahead] == 0:
                    found += try_move(s, sq, ahead, king, checked, t)
                for g in range(f - 1, f + 2, 2):
                    if 0 <= g < 5 and board[5 * g + r] * sign < 0:
                        found += try_move(s, sq, 5 * g + r, king, checked, t)
        elif kind == KNIGHT or kind == KING:  # noqa: SIM109 (numba: no tuples)
            for k in range(8):
                to = np.int64(KNIGHT_TO[sq, k] if kind == KNIGHT else KING_TO[sq, k])
                if to >= 0 and board[to] * sign <= 0:
                    found += try_move(s, sq, to, king, checked, t)
        else:
            for d in range(8):
                if (d % 2 == 0 and kind == BISHOP) or (d % 2 == 1 and kind == ROOK):
                    continue
                for k in range(4):
                    to = np.int64(RAY[sq, d, k])
                    if to < 0:
                        break
                    other = board[to] * sign
                    if other > 0:
                        break
                    found += try_move(s, sq, to, king, checked, t)
                    if other < 0:
                        break
    return found, checked


@nb.njit(cache=True, error_model="numpy")
def insufficient(board):
    """Pgx's (OpenSpiel's) insufficient material: kings alone, a king and a knight or bishop
    against a king, or kings and bishops all on squares of one colour."""
    pieces = 0
    heavy = 0  # pawns, rooks, queens
    bishops = 0
    light = 0  # bishops on even squares
    for sq in range(SQUARES):
        kind = abs(board[sq])
        if kind != 0:
            pieces += 1
        if kind == PAWN or kind == ROOK or kind == QUEEN:  # noqa: SIM109
            heavy += 1
        if kind == BISHOP:
            bishops += 1
            light += sq % 2 == 0
    if pieces <= 2 or (pieces == 3 and heavy == 0):
        return True
    return pieces == bishops + 2 and (light == bishops or light == 0)


@nb.njit(cache=True, error_model="numpy")
def play(s, label):
    """Make the legal move ``label`` of the player to move (the turn passes)."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    f = label // PLANES
    plane = label - PLANES * f
    frm = seen(f, t)
    to = seen(np.int64(TARGET[f, plane]), t)
    code = s.board[frm]
    taken = s.board[to]
    if taken != 0 or code == PAWN * sign:
        s.halfmove = 0
    else:
        s.halfmove += 1
    s.fullmove += t
    if plane < UNDERPROMOTIONS:
        piece = PROMOTED[plane // 3] * sign
    elif code == PAWN * sign and f % 5 == 3:
        piece = QUEEN * sign
    else:
        piece = code
    h = s.hash ^ PIECE_KEYS[code + 6, frm] ^ PIECE_KEYS[taken + 6, to] ^ PIECE_KEYS[piece + 6, to]
    s.hash = h ^ BLACK_KEY
    s.board[frm] = 0
    s.board[to] = piece
    s.turn = 1 - t


@nb.njit(cache=True, error_model="numpy")
def settle(s):
    """After a move (or at the start): the history, repetitions and legal moves of the player to
    move. Returns 0 while the game goes on, 1 on checkmate, 2 on a draw."""
    ply = np.int64(s.ply)
    s.history[ply] = s.hash
    for sq in range(SQUARES):
        s.boards[ply % 8, sq] = s.board[sq]
    seen_before = 0
    for k in range(ply):
        if s.history[k] == s.hash:
            seen_before += 1
    s.repetitions = min(seen_before, 2)
    moves, checked = generate(s)
    if moves == 0 and checked:
        return 1
    if moves == 0 or s.halfmove >= FIFTY_MOVES or seen_before >= 2 or insufficient(s.board):
        return 2
    if ply >= MAX_PLIES:
        return 2
    return 0


@nb.njit(cache=True, error_model="numpy")
def zobrist(board, turn):
    h = U0
    for sq in range(SQUARES):
        h ^= PIECE_KEYS[board[sq] + 6, sq]
    return h ^ BLACK_KEY if turn == 1 else h


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(SQUARES):  # a loop: an array copy would need numba's runtime, which CUDA lacks
        s.board[k] = START[k]
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0
    s.turn = 0
    s.halfmove = 0
    s.fullmove = 1
    s.ply = 0
    s.hash = zobrist(s.board, s.turn)
    for k in range(MAX_PLIES + 1):
        s.history[k] = U0
    for row in range(8):
        for k in range(SQUARES):
            s.boards[row, k] = 0
    settle(s)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        label = actions[a]
        other = 1 - a
        if 0 <= label < ACTIONS and (s.legal[label >> 6] >> np.uint64(label & 63)) & U1:
            play(s, label)
            s.ply += 1
            end = settle(s)
            if end == 0:
                s.status[a] = INACTIVE
                s.status[other] = ACTIVE
            else:
                if end == 1:  # checkmate: the player to move (the other agent) has lost
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
        for w in range(WORDS):
            s.legal[w] = U0
    return done


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[BOARD][i]
    for k in range(SQUARES):
        board[k] = s.board[k]
    obs[COLOR][i, 0] = 0
    obs[COLOR][i, 1] = 1
    obs[HALFMOVE][i] = s.halfmove
    obs[FULLMOVE][i] = s.fullmove
    obs[REPETITIONS][i] = s.repetitions
    legal = obs[LEGAL][i]
    running = any_active(s)
    for w in range(WORDS):
        bits = s.legal[w] if running else U0
        for b in range(min(64, ACTIONS - 64 * w)):
            legal[64 * w + b] = (bits >> np.uint64(b)) & U1 != U0


# ---- outside the kernels: checks, Pgx's observation --------------------------------------------

PROBLEMS = (
    None,
    "board needs one king of each colour",
    "board has a pawn on the first or last rank",
    "status must make the player to move (turn) the ACTIVE agent",
    "board leaves the side not to move in check",
    "hash must be the position's Zobrist key, history[ply] the hash",
    "repetitions must count the position's earlier occurrences in history",
    "legal must be the legal moves of the player to move",
    "legal must be empty while no agent is to move",
    "board is over: checkmate, stalemate, a half-move clock of 100, insufficient material, a "
    "third occurrence or 256 plies",
)


@nb.njit(cache=True, error_model="numpy")
def problem(s, scratch):
    """The index in PROBLEMS of what is wrong with record ``s`` (0: nothing); ``scratch`` is a
    record of the same type to recompute into."""
    kings = 0
    for sq in range(SQUARES):
        code = s.board[sq]
        kings += 1 if code == KING else (16 if code == -KING else 0)
        if abs(code) == PAWN and (sq % 5 == 0 or sq % 5 == 4):
            return 2
        scratch.board[sq] = code
    if kings != 17:
        return 1
    running = -1
    if s.status[0] == ACTIVE and s.status[1] == INACTIVE:
        running = 0
    elif s.status[1] == ACTIVE and s.status[0] == INACTIVE:
        running = 1
    if running >= 0 and running != s.turn:
        return 3
    sign = 1 - 2 * np.int64(s.turn)
    for sq in range(SQUARES):
        if s.board[sq] == -KING * sign and attacked(s.board, sq, sign):
            return 4
    ply = np.int64(s.ply)
    if zobrist(s.board, s.turn) != s.hash or s.history[ply] != s.hash:
        return 5
    seen_before = 0
    for k in range(ply):
        if s.history[k] == s.hash:
            seen_before += 1
    if min(seen_before, 2) != s.repetitions:
        return 6
    if running < 0:
        for w in range(WORDS):
            if s.legal[w] != U0:
                return 8
        return 0
    scratch.turn = s.turn
    moves, _ = generate(scratch)
    for w in range(WORDS):
        if scratch.legal[w] != s.legal[w]:
            return 7
    if moves == 0 or s.halfmove >= FIFTY_MOVES or seen_before >= 2 or ply >= MAX_PLIES:
        return 9
    if insufficient(s.board):
        return 9
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
    """Every record is a position the rules can play: one king each, no pawn on a back rank, the
    side not to move not in check, the key, history and legal moves those of the board, the
    ACTIVE agent the side to move, a game not already over."""
    scratch = np.zeros(1, dtype=records.dtype)
    index, found = first_problem(np.ascontiguousarray(records), scratch)
    if index >= 0:
        return f"invalid state (record {index}): {PROBLEMS[found]}"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


def planes(records, player):
    """Pgx's observation of ``player`` (0 white, 1 black): (N, 5, 5, 115) float32 of N state
    records, as Pgx's ``observe`` makes it: for each of the last eight boards (the newest first;
    empty before the game began) the viewer's six pieces, the other's six and two planes of
    repetitions (the board's key found once in the game, or more than once; Pgx counts a board
    from before the game began as found once); then the viewer's colour, the plies played / 256
    and the half-move clock / 100. Boards are seen by the viewer (black's mirrored top to bottom,
    its pieces positive), rank 5 in the first row."""
    records = np.atleast_1d(records)
    n = len(records)
    ply = records["ply"].astype(np.int64)
    back = ply[:, None] - np.arange(8)[None, :]  # (n, 8): the ply of each board, newest first
    played = back >= 0
    boards = records["boards"][np.arange(n)[:, None], back % 8].astype(np.int64)
    boards = np.where(played[..., None], boards, 0).reshape(n, 8, 5, 5) * (1 - 2 * player)
    if player == 1:
        boards = boards[..., ::-1]
    pictures = np.rot90(boards, 1, axes=(2, 3))  # rank 5 on top, files left to right
    kinds = np.arange(1, 7)[None, None, :, None, None]
    out = np.zeros((n, 8, 14, 5, 5), dtype=np.float32)
    out[:, :, :6] = pictures[:, :, None] == kinds
    out[:, :, 6:12] = pictures[:, :, None] == -kinds
    history = records["history"]
    keys = history[np.arange(n)[:, None], np.maximum(back, 0)]  # (n, 8)
    upto = np.arange(MAX_PLIES + 1)[None, :] <= ply[:, None]
    again = ((history[:, None, :] == keys[:, :, None]) & upto[:, None, :]).sum(axis=2) - 1
    again = np.where(played, again, 0)
    out[:, :, 12] = (again == 0)[..., None, None]
    out[:, :, 13] = (again >= 1)[..., None, None]
    extra = np.zeros((n, 3, 5, 5), dtype=np.float32)
    extra[:, 0] = player
    extra[:, 1] = (ply / MAX_PLIES).astype(np.float32)[:, None, None]
    # XLA computes Pgx's clock / 100 as clock * float32(0.01) (a division by a constant becomes a
    # product with its reciprocal), one rounding away from the quotient for some clocks.
    halfmove = records["halfmove"].astype(np.float32) * np.float32(0.01)
    extra[:, 2] = halfmove[:, None, None]
    both = np.concatenate([out.reshape(n, 112, 5, 5), extra], axis=1)
    return both.transpose(0, 2, 3, 1).copy()


# ---- moves as text --------------------------------------------------------------------------


def square_name(sq):
    return "abcde"[sq // 5] + str(sq % 5 + 1)


def label(move, turn):
    """Pgx's label of a move in UCI notation (``"a2a3"``, ``"b4b5n"``) for the side ``turn``
    (0 white, 1 black)."""
    frm = 5 * "abcde".index(move[0]) + int(move[1]) - 1
    to = 5 * "abcde".index(move[2]) + int(move[3]) - 1
    f, g = (frm, to) if turn == 0 else (frm + 4 - 2 * (frm % 5), to + 4 - 2 * (to % 5))
    if len(move) == 5 and move[4] != "q":
        side = {0: 0, 1: 1, -1: 2}[g // 5 - f // 5]
        return PLANES * f + 3 * "rbn".index(move[4]) + side
    plane = int(PLANE[g // 5 - f // 5 + 4, g % 5 - f % 5 + 4])
    if plane < 0:
        raise ValueError(f"{move} is no queen or knight move")
    return PLANES * f + plane


def uci(action, turn):
    """The UCI move of Pgx's label ``action`` for the side ``turn`` (a queen-move plane to the
    last rank by a pawn reads as a plain move: the board says whether it promotes)."""
    f, plane = divmod(int(action), PLANES)
    g = int(TARGET[f, plane])
    if g < 0:
        raise ValueError(f"label {action} leaves the board")
    frm, to = (f, g) if turn == 0 else (f + 4 - 2 * (f % 5), g + 4 - 2 * (g % 5))
    promotion = "rbn"[plane // 3] if plane < UNDERPROMOTIONS else ""
    return square_name(frm) + square_name(to) + promotion
