"""Shogi over one episode's record, with Pgx's actions, rules and ends.

Squares are numbered as Pgx numbers them from the first player's (sente's) side: ``square = 9 *
x + y``, ``x`` the file minus one (file 1, on sente's right, is ``x = 0``) and ``y`` the rank
(``y = 0`` is rank a, gote's back rank). Agent 0 is sente and moves first. Pieces are signed
codes, Pgx's plus one: pawn 1, lance 2, knight 3, silver 4, bishop 5, rook 6, gold 7, king 8,
promoted pawn 9, promoted lance 10, promoted knight 11, promoted silver 12, horse 13, dragon 14;
sente's positive, gote's negative. ``hands`` holds each player's pawns, lances, knights, silvers,
bishops, rooks and golds in hand (Pgx's order).

Actions are Pgx's 2187 labels (dlshogi's, as cshogi numbers them), ``81 * direction + to`` with
the square seen by the player to move (Pgx turns the board round for gote: its square ``s`` is
the board's ``80 - s``): directions 0-9 move the nearest own piece that comes from that side (up,
up-left, up-right, left, right, down, down-left, down-right, and the knight's two jumps), 10-19
the same moves promoting, 20-26 drop a pawn, lance, knight, silver, bishop, rook or gold.

The rules are shogi's as Pgx plays them: promotion in the far three ranks (forced where a piece
could not move again), no second unpromoted pawn on a file, no pawn dropped to give checkmate
(Pgx's test of that mate, copied term for term: see ``drop_pawn_mate``), no move leaving the own
king attacked. The player to move without a legal move loses; after 512 plies the game is a draw
(a checkmate on the 512th ply stands). Pgx has no repetition rule (sennichite) and no
impasse rule (jishogi), nor does this. An illegal action loses: its agent becomes INVALID (-1),
the other wins (+1), as Pgx rules it.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, write_turns
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

from . import notation

SQUARES = 81
ACTIONS = 27 * SQUARES  # 2187
DROPS = 20  # directions from 20 on drop a piece
WORDS = (ACTIONS + 63) // 64  # the legal labels as bits: 35 words
MAX_PLIES = 512
PAWN, LANCE, KNIGHT, SILVER, BISHOP, ROOK, GOLD, KING = 1, 2, 3, 4, 5, 6, 7, 8
HORSE, DRAGON = 13, 14
HAND_KINDS = 7
IN_ALL = np.array([18, 4, 4, 4, 2, 2, 4], dtype=np.int64)  # each kind's pieces in a game
U0, U1 = np.uint64(0), np.uint64(1)


def _start():
    board = np.zeros(SQUARES, dtype=np.int8)
    back = [LANCE, KNIGHT, SILVER, GOLD, KING, GOLD, SILVER, KNIGHT, LANCE]
    for x in range(9):
        board[9 * x + 8] = back[x]
        board[9 * x + 6] = PAWN
        board[9 * x + 0] = -back[x]
        board[9 * x + 2] = -PAWN
    board[9 * 1 + 7] = ROOK  # sente's rook on 2h, bishop on 8h
    board[9 * 7 + 7] = BISHOP
    board[9 * 7 + 1] = -ROOK  # gote's rook on 8b, bishop on 2b
    board[9 * 1 + 1] = -BISHOP
    return board


START = _start()

# Pgx's directions as sente sees them, (file step, rank step): up, up-left, up-right, left, right,
# down, down-left, down-right, and the knight's up2-left and up2-right; gote's are the opposite
# steps (as the board turned round), its knight's being 10 and 11 here.
STEPS = ((0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (1, 1), (-1, 1), (1, -2), (-1, -2))
STEPS += ((-1, 2), (1, 2))
OPPOSITE = np.array([5, 7, 6, 4, 3, 0, 2, 1, 10, 11, 8, 9], dtype=np.int64)


def _tables():
    # What each kind does, seen by its owner: bit d of STEP (one square, or a knight's jump) and
    # of SLIDE (any distance) for direction d.
    gold = 0b111111
    step = np.zeros(15, dtype=np.int16)
    slide = np.zeros(15, dtype=np.int16)
    step[PAWN] = 0b1
    slide[LANCE] = 0b1
    step[KNIGHT] = 0b1100000000
    step[SILVER] = 0b11000111
    slide[BISHOP] = 0b11000110
    slide[ROOK] = 0b00111001
    step[GOLD] = gold
    step[KING] = 0b11111111
    step[9:13] = gold
    slide[HORSE], step[HORSE] = 0b11000110, 0b00111001
    slide[DRAGON], step[DRAGON] = 0b00111001, 0b11000110
    return step, slide


STEP, SLIDE = _tables()
DX = np.array([dx for dx, _ in STEPS], dtype=np.int8)
DY = np.array([dy for _, dy in STEPS], dtype=np.int8)
# The direction (0-7) from one square to another on a line, by the signs of their steps:
# LINE[3 * (sign dx + 1) + sign dy + 1] (-1: no line).
LINE = np.full(9, -1, dtype=np.int64)
for _d in range(8):
    _dx, _dy = STEPS[_d]
    LINE[3 * (_dx + 1) + _dy + 1] = _d

FIELDS = [
    ("board", np.int8, (SQUARES,)),
    ("hands", np.int8, (2, HAND_KINDS)),
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("turn", np.uint8),  # the player to move: 0 sente, 1 gote
    ("ply", np.int16),  # plies played (Pgx's step count)
    ("legal", np.uint64, (WORDS,)),  # the legal labels of the player to move, as bits
]

POSITION_KEYS = ("sfen",)  # reset(position={"sfen": ...}): a position from its SFEN

STATE_BOUNDS = {
    "board": (-DRAGON, DRAGON),
    "hands": (0, 18),
    "status": (0, 5),
    "reward": (-1, 1),
    "turn": (0, 1),
    "ply": (0, MAX_PLIES),
}

# Observation fields, in the spec's order.
BOARD, HANDS, COLOR, LEGAL = range(4)


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def nxt(sq, a):
    """The square one step (or a knight's jump) from ``sq`` in the board's direction ``a``, -1 off
    the board. Worked out, not looked up: a kernel keeps its own copy of every table it reads in
    a GPU's 64 KB of constant memory."""
    x = sq // 9 + np.int64(DX[a])
    y = sq % 9 + np.int64(DY[a])
    if 0 <= x < 9 and 0 <= y < 9:
        return 9 * x + y
    return -1


@nb.njit(cache=True, error_model="numpy")
def seen(d, t):
    """The board's direction of the player ``t``'s direction ``d`` (0-9)."""
    return d if t == 0 else OPPOSITE[d]


@nb.njit(cache=True, error_model="numpy")
def attacked(board, sq, sign):
    """Whether a piece of the player ``sign`` (1 sente, -1 gote) attacks square ``sq``."""
    for a in range(8):
        d = OPPOSITE[a] if sign > 0 else a  # its owner's direction from there to sq
        n = nxt(sq, a)
        near = True
        while n >= 0:
            code = board[n]
            if code != 0:
                kind = code * sign
                if kind > 0 and ((SLIDE[kind] >> d) & 1 or (near and (STEP[kind] >> d) & 1)):
                    return True
                break
            n = nxt(n, a)
            near = False
    for k in range(2):  # a knight jumps from two ranks behind, as its owner sees it
        n = nxt(sq, 10 + k) if sign > 0 else nxt(sq, 8 + k)
        if n >= 0 and board[n] == KNIGHT * sign:
            return True
    return False


@nb.njit(cache=True, error_model="numpy")
def line(a, b):
    """The direction (0-7) from square ``a`` to square ``b`` on a line, else -1."""
    dx = b // 9 - a // 9
    dy = b % 9 - a % 9
    if (dx == 0 and dy == 0) or (dx != 0 and dy != 0 and dx != dy and dx != -dy):
        return -1
    return LINE[3 * ((dx > 0) - (dx < 0) + 1) + (dy > 0) - (dy < 0) + 1]


@nb.njit(cache=True, error_model="numpy")
def mark(s, label):
    s.legal[label >> 6] |= U1 << np.uint64(label & 63)


@nb.njit(cache=True, error_model="numpy")
def add_move(s, frm, to, d, kind, t):
    """Mark the labels of the legal move of a ``kind`` piece from ``frm`` to ``to`` in the
    mover's direction ``d``: without promotion unless it could not move again, with promotion
    where its kind promotes and either square is in the far three ranks. Returns how many."""
    there = to if t == 0 else 80 - to
    rank, start = there % 9, (frm if t == 0 else 80 - frm) % 9
    must = ((kind == PAWN or kind == LANCE) and rank == 0) or (kind == KNIGHT and rank < 2)  # noqa: SIM109
    found = 0
    if not must:
        mark(s, 81 * d + there)
        found += 1
    if kind <= ROOK and (rank < 3 or start < 3):
        mark(s, 81 * (d + 10) + there)
        found += 1
    return found


@nb.njit(cache=True, error_model="numpy")
def legal_capture(board, frm, to, king, sign):
    """Whether the piece of the player ``sign`` on ``frm`` may move to ``to`` without leaving
    its king (on ``king``, or on ``to`` when it is the king that moves) attacked."""
    code = board[frm]
    taken = board[to]
    board[to] = code
    board[frm] = 0
    safe = not attacked(board, to if code == KING * sign else king, -sign)
    board[frm] = code
    board[to] = taken
    return safe


@nb.njit(cache=True, error_model="numpy")
def drop_pawn_mate(board, pawn, king, sign):
    """Whether a pawn of the player ``sign`` dropped on ``pawn`` (in front of the other king, on
    ``king``) mates, as Pgx decides it: no piece of the other player may take the pawn legally
    and its king has no legal step. Pgx's king steps include its ``AROUND_IX`` entries off the
    board (-1): jax reads index -1 as square 80 of the defender's view, the corner behind its
    king, where the king "steps" when next to that corner on the board's edge, and jax then
    clamps the attack test's index 81 to 80, testing the attacker's own back corner: a step Pgx
    counts as an escape when the corner holds none of the defender's pieces and the attacker
    cannot move to its own back corner."""
    other = -sign
    board[pawn] = PAWN * sign
    mate = True
    for a in range(8):  # pieces of the other player that take the pawn
        d = OPPOSITE[a] if other > 0 else a
        n = nxt(pawn, a)
        near = True
        while n >= 0 and mate:
            code = board[n]
            if code != 0:
                kind = code * other
                if kind > 0 and ((SLIDE[kind] >> d) & 1 or (near and (STEP[kind] >> d) & 1)):
                    mate = not legal_capture(board, n, pawn, king, other)
                break
            n = nxt(n, a)
            near = False
    for k in range(2):
        n = nxt(pawn, 10 + k) if other > 0 else nxt(pawn, 8 + k)
        if mate and n >= 0 and board[n] == KNIGHT * other:
            mate = not legal_capture(board, n, pawn, king, other)
    for a in range(8):  # the king's steps
        to = nxt(king, a)
        if mate and to >= 0 and board[to] * other <= 0:
            mate = not legal_capture(board, king, to, king, other)
    # Pgx's extra step, to the defender's own back corner from the square beside it on an edge.
    if other < 0:
        corner, beside = np.int64(0), king == 1 or king == 9
    else:
        corner, beside = np.int64(80), king == 79 or king == 71
    if mate and beside and board[corner] * other <= 0:
        taken = board[corner]
        board[corner] = KING * other
        board[king] = 0
        target = 80 - corner  # the attacker's own back corner, where Pgx tests the attack
        if board[target] * sign > 0 or not attacked(board, target, sign):
            mate = False
        board[king] = KING * other
        board[corner] = taken
    board[pawn] = 0
    return mate


@nb.njit(cache=True, error_model="numpy")
def generate(s):
    """Write the legal labels of the player to move into ``s.legal``; returns how many."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    other = -sign
    board = s.board
    for w in range(WORDS):
        s.legal[w] = U0
    king = np.int64(0)  # not literals: a helper called with one compiles once more
    enemy = np.int64(0)
    pawn_files = 0  # files holding an unpromoted pawn of the mover
    for sq in range(SQUARES):
        code = board[sq] * sign
        if code == KING:
            king = sq
        elif code == -KING:
            enemy = sq
        elif code == PAWN:
            pawn_files |= 1 << (sq // 9)
    # Checks and pins: along each line from the king, the first piece and the one behind it.
    checks = 0
    checker = -1
    checker_line = -1  # a distant slider's line from the king (blocks allowed), else -1
    pinned_lo, pinned_hi = U0, U0  # the mover's pinned pieces, squares 0-63 and 64-80
    for a in range(8):
        d = OPPOSITE[a] if other > 0 else a
        n = nxt(king, a)
        near = True
        own = -1
        while n >= 0:
            code = board[n]
            if code != 0:
                if code * sign > 0:
                    if own >= 0:
                        break
                    own = n
                else:
                    kind = code * other
                    slides = (SLIDE[kind] >> d) & 1
                    if own < 0 and (slides or (near and (STEP[kind] >> d) & 1)):
                        checks += 1
                        checker = n
                        checker_line = a if not near else -1
                    elif own >= 0 and slides:
                        if own < 64:
                            pinned_lo |= U1 << np.uint64(own)
                        else:
                            pinned_hi |= U1 << np.uint64(own - 64)
                    break
            n = nxt(n, a)
            near = False
    for k in range(2):
        n = nxt(king, 10 + k) if other > 0 else nxt(king, 8 + k)
        if n >= 0 and board[n] == KNIGHT * other:
            checks += 1
            checker = n
            checker_line = -1
    reach = 0 if checker < 0 else max(abs(checker // 9 - king // 9), abs(checker % 9 - king % 9))
    found = 0
    # The king's steps.
    board[king] = 0
    for a in range(8):
        to = nxt(king, a)
        if to >= 0 and board[to] * sign <= 0:
            taken = board[to]
            board[to] = KING * sign
            if not attacked(board, to, other):
                found += add_move(s, king, to, a if t == 0 else OPPOSITE[a], np.int64(KING), t)
            board[to] = taken
    board[king] = KING * sign
    if checks >= 2:
        return found
    # The other pieces' moves.
    for sq in range(SQUARES):
        kind = board[sq] * sign
        if kind <= 0 or kind == KING:
            continue
        pin = -1
        if (pinned_lo >> np.uint64(sq)) & U1 if sq < 64 else (pinned_hi >> np.uint64(sq - 64)) & U1:
            pin = line(king, sq)
        for d in range(10):
            steps = (STEP[kind] >> d) & 1
            if not steps and not (SLIDE[kind] >> d) & 1:
                continue
            a = d if t == 0 else OPPOSITE[d]
            to = nxt(sq, a)
            while to >= 0:
                taken = board[to] * sign
                if taken > 0:
                    break
                ok = pin < 0 or line(king, to) == pin
                if ok and checks == 1 and to != checker:
                    far = max(abs(to // 9 - king // 9), abs(to % 9 - king % 9))
                    ok = checker_line >= 0 and line(king, to) == checker_line and far < reach
                if ok:
                    found += add_move(s, sq, to, d, kind, t)
                if taken < 0 or steps:
                    break
                to = nxt(to, a)
    # Drops: on an empty square, between the king and a distant checker when in check.
    for p in range(HAND_KINDS):
        if s.hands[t, p] == 0:
            continue
        kind = p + 1
        for sq in range(SQUARES):
            if board[sq] != 0:
                continue
            rank = (sq if t == 0 else 80 - sq) % 9
            if (kind == PAWN or kind == LANCE) and rank == 0:  # noqa: SIM109 (numba: no tuples)
                continue
            if kind == KNIGHT and rank < 2:
                continue
            if kind == PAWN and (pawn_files >> (sq // 9)) & 1:
                continue
            if checks == 1:
                far = max(abs(sq // 9 - king // 9), abs(sq % 9 - king % 9))
                if not (checker_line >= 0 and line(king, sq) == checker_line and far < reach):
                    continue
            mark(s, 81 * (DROPS + p) + (sq if t == 0 else 80 - sq))
            found += 1
    # No pawn dropped in front of the other king to mate it (Pgx tests that square alone).
    if s.hands[t, 0] > 0:
        ahead = -1
        if t == 0 and enemy % 9 != 8:
            ahead = enemy + 1
        elif t == 1 and enemy % 9 != 0:
            ahead = enemy - 1
        if ahead >= 0:
            label = 81 * DROPS + (ahead if t == 0 else 80 - ahead)
            legal = (s.legal[label >> 6] >> np.uint64(label & 63)) & U1
            if legal and drop_pawn_mate(board, ahead, enemy, sign):
                s.legal[label >> 6] &= ~(U1 << np.uint64(label & 63))
                found -= 1
    return found


@nb.njit(cache=True, error_model="numpy")
def play(s, label):
    """Make the legal move ``label`` of the player to move (the turn passes)."""
    t = np.int64(s.turn)
    sign = 1 - 2 * t
    d = label // 81
    there = label - 81 * d
    to = there if t == 0 else 80 - there
    if d >= DROPS:
        s.board[to] = (d - DROPS + 1) * sign
        s.hands[t, d - DROPS] -= 1
    else:
        promote = d >= 10
        back = OPPOSITE[seen(d % 10, t)]
        frm = nxt(to, back)
        while s.board[frm] * sign <= 0:  # the nearest own piece on that side
            frm = nxt(frm, back)
        code = s.board[frm]
        taken = abs(s.board[to])
        if taken != 0:
            s.hands[t, (taken - 8 if taken > KING else taken) - 1] += 1
        s.board[frm] = 0
        s.board[to] = code + 8 * sign if promote else code
    s.turn = 1 - t


@nb.njit(cache=True, error_model="numpy")
def clear_legal(s):
    for w in range(WORDS):
        s.legal[w] = U0


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(SQUARES):  # a loop: an array copy would need numba's runtime, which CUDA lacks
        s.board[k] = START[k]
    for p in range(2):
        for k in range(HAND_KINDS):
            s.hands[p, k] = 0
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0
    s.turn = 0
    s.ply = 0
    generate(s)


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
            moves = generate(s)
            if moves > 0 and s.ply < MAX_PLIES:
                s.status[a] = INACTIVE
                s.status[other] = ACTIVE
            else:
                if moves == 0:  # the player to move has no move: it has lost
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
        for k in range(HAND_KINDS):
            hands[p, k] = s.hands[p, k]
    obs[COLOR][i, 0] = 0
    obs[COLOR][i, 1] = 1
    legal = obs[LEGAL][i]
    running = any_active(s)
    for w in range(WORDS):
        bits = s.legal[w] if running else U0
        for b in range(min(64, ACTIONS - 64 * w)):
            legal[64 * w + b] = (bits >> np.uint64(b)) & U1 != U0


# ---- outside the kernels: checks, Pgx's observation, moves as text ------------------------------

PROBLEMS = (
    None,
    "board needs one king of each player",
    "board and hands must hold 18 pawns, 4 lances, 4 knights, 4 silvers, 2 bishops, 2 rooks and "
    "4 golds in all",
    "status must make the player to move (turn) the ACTIVE agent",
    "board leaves the king of the player not to move attacked",
    "legal must be the legal moves of the player to move",
    "legal must be empty while no agent is to move",
    "board is over: the player to move has no legal move",
    "ply must be below 512 while the game runs",
)


@nb.njit(cache=True, error_model="numpy")
def problem(s, scratch):
    """The index in PROBLEMS of what is wrong with record ``s`` (0: nothing); ``scratch`` is a
    record of the same type to recompute into."""
    kings = 0
    counts = scratch.hands[0]  # a row of the scratch record as the kinds' counts
    for k in range(HAND_KINDS):
        counts[k] = 0
    total = 0
    for sq in range(SQUARES):
        code = s.board[sq]
        kind = abs(code)
        if code == KING:
            kings += 1
        elif code == -KING:
            kings += 16
        elif kind != 0:
            base = kind - 8 if kind > KING else kind
            counts[base - 1] += 1
        scratch.board[sq] = code
    if kings != 17:
        return 1
    for k in range(HAND_KINDS):
        total = counts[k] + s.hands[0, k] + s.hands[1, k]
        if total != IN_ALL[k]:
            return 2
    for p in range(2):
        for k in range(HAND_KINDS):
            scratch.hands[p, k] = s.hands[p, k]
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
    if running < 0:
        for w in range(WORDS):
            if s.legal[w] != U0:
                return 6
        return 0
    scratch.turn = s.turn
    moves = generate(scratch)
    for w in range(WORDS):
        if scratch.legal[w] != s.legal[w]:
            return 5
    if moves == 0:
        return 7
    if s.ply >= MAX_PLIES:
        return 8
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
    """Every record is a position the rules can play: a king each, every piece there once, the
    king of the player not to move not attacked, the legal moves those of the board, the ACTIVE
    agent the player to move, a game not already over."""
    scratch = np.zeros(1, dtype=records.dtype)
    index, found = first_problem(np.ascontiguousarray(records), scratch)
    if index >= 0:
        return f"invalid state (record {index}): {PROBLEMS[found]}"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


# The field of the position each problem is in (None: the record's own).
PROBLEM_FIELDS = (None, "board", "board", "status", "board", None, None, "board", None)


@nb.njit(cache=True, error_model="numpy")
def build(one, scratch):
    """The legal moves of the position ``one[0]`` (its board, hands, turn and statuses) when it
    has a player to move; returns its problem (``PROBLEMS``), 0 for none."""
    s = one[0]
    kings = 0
    for sq in range(SQUARES):
        kings += 1 if s.board[sq] == KING else (16 if s.board[sq] == -KING else 0)
    if kings != 17:
        return 1
    running = (s.status[0] == ACTIVE and s.status[1] == INACTIVE) or (
        s.status[1] == ACTIVE and s.status[0] == INACTIVE
    )
    if running:
        generate(s)
    return problem(s, scratch[0])


def position(record, config, given):
    """A position from a SFEN (``{"sfen": ...}``, the player to move from it) or from the
    observation fields (board, hands; the player to move from the statuses). The 512 plies
    count from the SFEN's move number (1: none played), from 0 for an observation."""
    if "sfen" in given:
        if given["observation"] or "status" in given:
            raise PositionError(
                "sfen", "gives the whole position: leave out observation and status"
            )
        try:
            fields = notation.parse(given["sfen"])
        except ValueError as error:
            raise PositionError("sfen", str(error)) from None
        status = (ACTIVE, INACTIVE) if fields["turn"] == 0 else (INACTIVE, ACTIVE)
        record["status"] = status
        record["reward"] = given.get("reward", 0.0)
        named = "sfen"
    else:
        colors = observed(given, "color", np.array([0, 1]))
        for k, value in enumerate(colors.tolist()):
            if value != k:
                raise PositionError("observation.color", f"is {value}; agent {k} plays {k}", k)
        write_turns(record, given, (ACTIVE, INACTIVE))
        turn = 1 if record["status"][1] == ACTIVE and record["status"][0] == INACTIVE else 0
        fields = {
            "board": observed(given, "board", START),
            "hands": observed(given, "hands", np.zeros((2, HAND_KINDS), dtype=np.int8)),
            "turn": turn,
            "ply": 0,
        }
        named = None
    if not 0 <= fields["ply"] < MAX_PLIES:
        raise PositionError(named or "step", f"starts after {fields['ply']} of the 512 plies")
    one = np.zeros(1, dtype=record.dtype)
    for key in ("board", "hands", "turn", "ply"):
        one[key] = fields[key]
    one["status"] = record["status"]
    found = build(one, np.zeros(1, dtype=record.dtype))
    if found:
        field = PROBLEM_FIELDS[found]
        if named:
            raise PositionError(named, PROBLEMS[found])
        raise PositionError(
            "status" if field == "status" else f"observation.{field}", PROBLEMS[found]
        )
    for name, *_ in FIELDS:
        if name not in ("status", "reward"):
            record[name] = one[0][name]


@nb.njit(cache=True, error_model="numpy")
def attack_maps(board, kinds, counts):
    """Every square the pieces of each player attack on ``board`` (empty or not): ``kinds[p,
    k, sq]`` whether a piece of kind k + 1 of player p (0 sente) attacks ``sq``, ``counts[p, sq]``
    how many of p's pieces do."""
    for sq in range(SQUARES):
        code = board[sq]
        if code == 0:
            continue
        p = 0 if code > 0 else 1
        kind = abs(code)
        for d in range(10):
            steps = (STEP[kind] >> d) & 1
            if not steps and not (SLIDE[kind] >> d) & 1:
                continue
            a = d if p == 0 else OPPOSITE[d]
            to = nxt(sq, a)
            while to >= 0:
                kinds[p, kind - 1, to] = True
                counts[p, to] += 1
                if steps or board[to] != 0:
                    break
                to = nxt(to, a)


HAND_PLANES = ((0, 8), (1, 4), (2, 4), (3, 4), (6, 4), (4, 2), (5, 2))  # (kind in hand, planes)


def planes(positions, player):
    """Pgx's observation of ``player`` (0 sente, 1 gote): (N, 9, 9, 119) bool of N positions
    (state records, or observations: anything with ``board`` and ``hands``), as Pgx's
    ``observe`` makes it. From the viewer's side (gote's board turned round): its 14 kinds of
    pieces, the squares each kind attacks, the squares it attacks once, twice, three times or
    more; the same of the other player; the pieces in each hand as counts (pawns 1-8, lances,
    knights, silvers, golds 1-4, bishops, rooks 1-2), the viewer's first; whether the viewer's
    king is attacked. Rank a is the first row, file 9 the first column (the viewer's left)."""
    boards = np.atleast_2d(np.asarray(positions["board"]))
    hands = np.asarray(positions["hands"]).reshape(-1, 2, HAND_KINDS)
    n = len(boards)
    out = np.zeros((n, 119, SQUARES), dtype=bool)
    order = (player, 1 - player)  # the viewer first
    for i in range(n):
        kinds = np.zeros((2, 14, SQUARES), dtype=np.bool_)
        counts = np.zeros((2, SQUARES), dtype=np.int64)
        attack_maps(boards[i], kinds, counts)
        board = boards[i].astype(np.int64) * (1 - 2 * player)
        if player == 1:  # the viewer's squares: gote's are the board's turned round
            board, kinds, counts = board[::-1], kinds[:, :, ::-1], counts[:, ::-1]
        row = 0
        for side, p in enumerate(order):
            mine = 1 if side == 0 else -1
            out[i, row : row + 14] = board[None, :] == mine * np.arange(1, 15)[:, None]
            out[i, row + 14 : row + 28] = kinds[p]
            out[i, row + 28 : row + 31] = counts[p][None, :] >= np.arange(1, 4)[:, None]
            row += 31
        for p in order:
            for kind, many in HAND_PLANES:
                out[i, row : row + many] = (hands[i, p, kind] >= np.arange(1, many + 1))[:, None]
                row += many
        king = int(np.flatnonzero(board == KING)[0])
        out[i, row] = attacked(np.ascontiguousarray(board, dtype=np.int8), king, -1)
    # Pgx's layout: (119, file, rank) made channel-last and turned a quarter clockwise.
    return np.rot90(out.reshape(n, 119, 9, 9).transpose(0, 2, 3, 1), k=3, axes=(1, 2)).copy()
