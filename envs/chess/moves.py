"""Chess positions on bitboards: attacks, the legal moves as Pgx's action labels, making a move.

Squares are numbered as Pgx numbers them: ``square = 8 * file + rank`` (a1 = 0, a2 = 1, ..., a8 = 7,
b1 = 8, ..., h8 = 63), and bit ``square`` of a bitboard is that square. So a step up the board is
``+1`` and a step right is ``+8``; a file's eight squares are one byte.

A position is any record with the fields ``board`` (64 int8: Pgx's piece codes, white positive,
black negative), ``bb`` (8 uint64: white's and black's pieces, then pawns, knights, bishops,
rooks, queens, kings of both colours), ``turn`` (0 white, 1 black), ``castling`` (bits: 1 white
king-side, 2 white queen-side, 4 black king-side, 8 black queen-side), ``ep`` (the square a pawn
passed over on the last ply's double step, else -1), ``halfmove``, ``fullmove`` and ``hash`` (its
Zobrist key), and ``legal`` (its legal moves, below): the game's state records, which perft's
stack holds too (one record type: every function here compiles once).

Actions are Pgx's: ``label = 73 * from + plane``, from-square and plane seen by the player to move,
whose board Pgx mirrors top to bottom when black moves (square ``s`` is ``s ^ 7`` for black).
Planes 0-8 are under-promotions (rook, bishop, knight, each straight, right and left), planes
9-72 the queen moves (8 directions x 7 distances, in Pgx's order) and the knight moves; a pawn
reaching the last rank by a queen-move plane becomes a queen. The legal moves of a position are a
set of labels, kept as 73 words of 64 bits (``LEGAL_WORDS``).
"""

import numba as nb
import numpy as np

EMPTY, PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(7)
WHITE, BLACK = 0, 1
ACTIONS = 64 * 73
LEGAL_WORDS = (ACTIONS + 63) // 64  # 73: 4672 labels
UNDERPROMOTIONS = 9  # planes 0-8

U0 = np.uint64(0)
U1 = np.uint64(1)
RANK_1 = np.uint64(0x0101010101010101)
RANK_8 = np.uint64(0x8080808080808080)

# ---- tables (built once, read by the kernels as constants) ---------------------------------------

# Directions (file step, rank step). The first four raise the square number, the last four
# lower it; d and d ^ 4 are opposite; even d are straight (rook) lines, odd d diagonals.
STEPS = ((0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1))
KNIGHT_STEPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))


def _on_board(f, r):
    return 0 <= f < 8 and 0 <= r < 8


def _tables():
    ray = np.zeros((8, 64), dtype=np.uint64)
    knight = np.zeros(64, dtype=np.uint64)
    king = np.zeros(64, dtype=np.uint64)
    pawn = np.zeros((2, 64), dtype=np.uint64)  # the squares a pawn of each colour attacks
    for sq in range(64):
        f, r = divmod(sq, 8)
        for d, (df, dr) in enumerate(STEPS):
            g, s = f + df, r + dr
            if _on_board(g, s):
                king[sq] |= np.uint64(1 << (8 * g + s))
            while _on_board(g, s):
                ray[d, sq] |= np.uint64(1 << (8 * g + s))
                g, s = g + df, s + dr
        for df, dr in KNIGHT_STEPS:
            if _on_board(f + df, r + dr):
                knight[sq] |= np.uint64(1 << (8 * (f + df) + r + dr))
        for colour, dr in ((WHITE, 1), (BLACK, -1)):
            for df in (-1, 1):
                if _on_board(f + df, r + dr):
                    pawn[colour, sq] |= np.uint64(1 << (8 * (f + df) + r + dr))
    return ray, knight, king, pawn


RAY, KNIGHT_ATTACKS, KING_ATTACKS, PAWN_ATTACKS = _tables()

# The direction from one square to another on a line: DIRECTION[3 * (sign df + 1) + sign dr + 1].
DIRECTION = np.full(9, -1, dtype=np.int64)
for _d, (_df, _dr) in enumerate(STEPS):
    DIRECTION[3 * (_df + 1) + _dr + 1] = _d


def _plane_tables():
    """Pgx's planes: QUEEN_PLANE[df + 7, dr + 7] for a queen or knight move by (df, dr) in the
    mover's view, and TARGET[from, plane], the square a plane leads to from a square (-1: off the
    board)."""
    # Pgx's queen planes, 9-64: seven distances along each direction, in this order of
    # (rank step, file step), the distances from 7 down to 1 or up from 1 as listed.
    runs = (
        [(-k, 0) for k in range(7, 0, -1)]  # down, farthest first
        + [(k, 0) for k in range(1, 8)]  # up
        + [(0, -k) for k in range(7, 0, -1)]  # left
        + [(0, k) for k in range(1, 8)]  # right
        + [(-k, -k) for k in range(7, 0, -1)]  # down-left
        + [(k, k) for k in range(1, 8)]  # up-right
        + [(k, -k) for k in range(7, 0, -1)]  # up-left
        + [(-k, k) for k in range(1, 8)]  # down-right
    )
    runs += [(-1, -2), (1, -2), (-2, -1), (2, -1), (-1, 2), (1, 2), (-2, 1), (2, 1)]  # knights
    plane = np.full((15, 15), -1, dtype=np.int64)
    for k, (dr, df) in enumerate(runs):
        plane[df + 7, dr + 7] = UNDERPROMOTIONS + k
    target = np.full((64, 73), -1, dtype=np.int64)
    for sq in range(64):
        f, r = divmod(sq, 8)
        for df in range(-7, 8):
            for dr in range(-7, 8):
                p = plane[df + 7, dr + 7]
                if p >= 0 and _on_board(f + df, r + dr):
                    target[sq, p] = 8 * (f + df) + r + dr
        if r == 6:  # under-promotions: straight up, up-right, up-left
            for k in range(UNDERPROMOTIONS):
                df = (0, 1, -1)[k % 3]
                if _on_board(f + df, 7):
                    target[sq, k] = 8 * (f + df) + 7
    return plane, target


QUEEN_PLANE, TARGET = _plane_tables()
PROMOTED = np.array([ROOK, BISHOP, KNIGHT], dtype=np.int64)  # under-promotion plane // 3

# Zobrist keys: a piece code (+6) on a square, black to move, the castling rights, the en-passant
# square (+1). Fixed, so equal positions key equally in every process and on every device.
_keys = np.random.Generator(np.random.PCG64(0x5EED_C4E55)).integers(
    0, 2**64, size=13 * 64 + 1 + 16 + 65, dtype=np.uint64, endpoint=False
)
PIECE_KEYS = _keys[: 13 * 64].reshape(13, 64).copy()
PIECE_KEYS[6] = 0  # an empty square adds nothing
BLACK_KEY = _keys[13 * 64]
CASTLING_KEYS = _keys[13 * 64 + 1 : 13 * 64 + 17].copy()
EP_KEYS = _keys[13 * 64 + 17 :].copy()
EP_KEYS[0] = 0  # no en-passant square
del _keys

# Dark squares (a1 is dark): file + rank even.
DARK = np.uint64(sum(1 << sq for sq in range(64) if (sq // 8 + sq % 8) % 2 == 0))

_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _sq in range(64):
    _DEBRUIJN_INDEX[((int(_DEBRUIJN) << _sq) & (2**64 - 1)) >> 58] = _sq


# ---- bit tricks ---------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def bit(sq):
    return U1 << np.uint64(sq)


@nb.njit(cache=True, error_model="numpy")
def lowest(b):
    """The square of the lowest set bit of ``b`` (non-zero): a de Bruijn multiplication, which
    CUDA compiles as well as the CPU (numba has no portable count-trailing-zeros)."""
    return _DEBRUIJN_INDEX[((b & (~b + U1)) * _DEBRUIJN) >> np.uint64(58)]


@nb.njit(cache=True, error_model="numpy")
def count(b):
    """The set bits of ``b``."""
    b = b - ((b >> U1) & np.uint64(0x5555555555555555))
    b = (b & np.uint64(0x3333333333333333)) + ((b >> np.uint64(2)) & np.uint64(0x3333333333333333))
    b = (b + (b >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((b * np.uint64(0x0101010101010101)) >> np.uint64(56))


# ---- attacks ------------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def slide(d, sq, occ):
    """The squares a slider on ``sq`` reaches in direction ``d`` over ``occ``: the ray up to and
    including its first occupied square. Branch-free: along a rising ray the first blocker is the
    lowest bit, along a falling one the highest (found by smearing the blockers downwards)."""
    ray = RAY[d, sq]
    b = ray & occ
    if d < 4:
        return ray & (b ^ (b - U1))  # bits up to the lowest blocker (all of them when none)
    b |= b >> U1
    b |= b >> np.uint64(2)
    b |= b >> np.uint64(4)
    b |= b >> np.uint64(8)
    b |= b >> np.uint64(16)
    b |= b >> np.uint64(32)
    return ray & ~(b >> U1)  # bits from the highest blocker up


@nb.njit(cache=True, error_model="numpy")
def rook_attacks(sq, occ):
    return slide(0, sq, occ) | slide(2, sq, occ) | slide(4, sq, occ) | slide(6, sq, occ)


@nb.njit(cache=True, error_model="numpy")
def bishop_attacks(sq, occ):
    return slide(1, sq, occ) | slide(3, sq, occ) | slide(5, sq, occ) | slide(7, sq, occ)


@nb.njit(cache=True, error_model="numpy")
def direction(a, b):
    """The direction from square ``a`` to square ``b`` when they share a line, else -1."""
    df = (b >> 3) - (a >> 3)
    dr = (b & 7) - (a & 7)
    if (df != 0 and dr != 0 and df != dr and df != -dr) or (df == 0 and dr == 0):
        return -1
    sf = 1 if df > 0 else (-1 if df < 0 else 0)
    sr = 1 if dr > 0 else (-1 if dr < 0 else 0)
    return DIRECTION[3 * (sf + 1) + sr + 1]


@nb.njit(cache=True, error_model="numpy")
def attackers(p, sq, occ, colour):
    """The pieces of ``colour`` attacking ``sq`` with ``occ`` as the occupied squares."""
    bb = p.bb
    side = bb[colour]
    att = KNIGHT_ATTACKS[sq] & bb[3] & side
    att |= PAWN_ATTACKS[1 - colour, sq] & bb[2] & side
    att |= KING_ATTACKS[sq] & bb[7] & side
    att |= rook_attacks(sq, occ) & (bb[5] | bb[6]) & side
    att |= bishop_attacks(sq, occ) & (bb[4] | bb[6]) & side
    return att


@nb.njit(cache=True, error_model="numpy")
def attacked(p, colour, occ):
    """Every square the pieces of ``colour`` attack over ``occ``."""
    bb = p.bb
    side = bb[colour]
    pawns = bb[2] & side
    if colour == WHITE:
        att = (pawns << np.uint64(9)) | (pawns >> np.uint64(7))
    else:
        att = (pawns << np.uint64(7)) | (pawns >> np.uint64(9))
    att &= ~(RANK_1 if colour == WHITE else RANK_8)  # no pawn attacks round the board's edge
    att |= KING_ATTACKS[lowest(bb[7] & side)]
    rest = bb[3] & side
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        att |= KNIGHT_ATTACKS[sq]
    rest = (bb[4] | bb[6]) & side
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        att |= bishop_attacks(sq, occ)
    rest = (bb[5] | bb[6]) & side
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        att |= rook_attacks(sq, occ)
    return att


@nb.njit(cache=True, error_model="numpy")
def in_check(p, colour):
    """Whether the king of ``colour`` is attacked."""
    bb = p.bb
    ksq = lowest(bb[7] & bb[colour])
    return attackers(p, ksq, bb[0] | bb[1], 1 - colour) != U0


# ---- the legal moves ----------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def add(out, frm, to, flip):
    """Mark the move ``frm`` -> ``to`` (a queen-move or knight-move plane) in ``out``."""
    f, t = frm ^ flip, to ^ flip
    label = 73 * f + QUEEN_PLANE[(t >> 3) - (f >> 3) + 7, (t & 7) - (f & 7) + 7]
    out[label >> 6] |= U1 << np.uint64(label & 63)


@nb.njit(cache=True, error_model="numpy")
def add_targets(out, frm, targets, flip):
    while targets:
        to = lowest(targets)
        targets &= targets - U1
        add(out, frm, to, flip)


@nb.njit(cache=True, error_model="numpy")
def add_pawn(out, frm, to, flip, last):
    """A pawn's move; on the last rank the queen's (the plain plane) and the three
    under-promotions."""
    add(out, frm, to, flip)
    if (to & 7) == last:
        df = (to >> 3) - (frm >> 3)
        side = 0 if df == 0 else (1 if df == 1 else 2)  # straight, right, left
        base = 73 * (frm ^ flip) + side
        for k in range(3):  # rook, bishop, knight
            label = base + 3 * k
            out[label >> 6] |= U1 << np.uint64(label & 63)


@nb.njit(cache=True, error_model="numpy")
def pin_line(p, ksq, sq, occ):
    """The squares a piece pinned on ``sq`` may move to: its line from the king to the pinner."""
    return slide(direction(ksq, sq), ksq, occ ^ bit(sq))


@nb.njit(cache=True, error_model="numpy")
def generate(p):
    """Write the legal moves of the player to move into ``p.legal`` (LEGAL_WORDS words of label
    bits); returns whether that player is in check. The moves are Pgx's: pseudo-legal moves that
    leave the own king unattacked, en passant after any double step, castling with the right, the
    rook and king on their squares, the squares between empty and the king's three squares
    unattacked."""
    out = p.legal
    for w in range(LEGAL_WORDS):
        out[w] = U0
    bb = p.bb
    c = np.int64(p.turn)
    o = 1 - c
    flip = 7 * c
    us, them = bb[c], bb[o]
    occ = us | them
    pawns = bb[2]
    ksq = lowest(bb[7] & us)
    checkers = attackers(p, ksq, occ, o)
    danger = attacked(p, o, occ ^ bit(ksq))  # the king steps off: it shields nothing
    add_targets(out, ksq, KING_ATTACKS[ksq] & ~us & ~danger, flip)
    if checkers & (checkers - U1):
        return True  # double check: only the king moves
    target = ~us
    if checkers:
        d = direction(ksq, lowest(checkers))
        target = slide(d, ksq, occ) if d >= 0 else checkers  # block or capture
    # Pinned pieces: ours first on a line from the king, with their slider behind.
    pinned = U0
    rook_like = (bb[5] | bb[6]) & them
    bishop_like = (bb[4] | bb[6]) & them
    for d in range(8):
        first = slide(d, ksq, occ) & us
        if first:
            behind = slide(d, ksq, occ ^ first) & (rook_like if d % 2 == 0 else bishop_like)
            if behind:
                pinned |= first
    # Knights (a pinned knight never moves), bishops, rooks, queens.
    rest = bb[3] & us & ~pinned
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        add_targets(out, sq, KNIGHT_ATTACKS[sq] & target, flip)
    rest = (bb[4] | bb[5] | bb[6]) & us
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        att = U0
        if (bb[4] | bb[6]) & bit(sq):
            att |= bishop_attacks(sq, occ)
        if (bb[5] | bb[6]) & bit(sq):
            att |= rook_attacks(sq, occ)
        att &= target
        if pinned & bit(sq):
            att &= pin_line(p, ksq, sq, occ)
        add_targets(out, sq, att, flip)
    # Pawns: steps, double steps from the second rank, captures, promotions.
    step = 1 - 2 * c
    start = 1 + 5 * c
    last = 7 - 7 * c
    rest = pawns & us
    while rest:
        sq = lowest(rest)
        rest &= rest - U1
        allowed = target
        if pinned & bit(sq):
            allowed &= pin_line(p, ksq, sq, occ)
        one = sq + step
        if not occ & bit(one):
            if allowed & bit(one):
                add_pawn(out, sq, one, flip, last)
            two = one + step
            if (sq & 7) == start and not occ & bit(two) and allowed & bit(two):
                add(out, sq, two, flip)
        takes = PAWN_ATTACKS[c, sq] & them & allowed
        while takes:
            to = lowest(takes)
            takes &= takes - U1
            add_pawn(out, sq, to, flip, last)
    # En passant: played out on the bitboards, as a capture may uncover the king along a rank.
    ep = np.int64(p.ep)
    if ep >= 0:
        victim = ep - step
        if pawns & them & bit(victim):
            takers = PAWN_ATTACKS[o, ep] & pawns & us
            while takers:
                sq = lowest(takers)
                takers &= takers - U1
                after = occ ^ bit(sq) ^ bit(ep) ^ bit(victim)
                hits = rook_attacks(ksq, after) & rook_like
                hits |= bishop_attacks(ksq, after) & bishop_like
                hits |= KNIGHT_ATTACKS[ksq] & bb[3] & them
                hits |= PAWN_ATTACKS[c, ksq] & pawns & them & ~bit(victim)
                if not hits:
                    add(out, sq, ep, flip)
    # Castling, Pgx's conditions (the king on e1, the rook in its corner; seen by the mover).
    if not checkers and (bb[7] & us & bit(32 ^ flip)):
        rooks = bb[5] & us
        if (p.castling >> (2 * c)) & 1:  # king-side
            path = bit(40 ^ flip) | bit(48 ^ flip)
            if rooks & bit(56 ^ flip) and not occ & path and not danger & path:
                add(out, 32 ^ flip, 48 ^ flip, flip)
        if (p.castling >> (2 * c + 1)) & 1:  # queen-side
            path = bit(8 ^ flip) | bit(16 ^ flip) | bit(24 ^ flip)
            walk = bit(16 ^ flip) | bit(24 ^ flip)
            if rooks & bit(0 ^ flip) and not occ & path and not danger & walk:
                add(out, 32 ^ flip, 16 ^ flip, flip)
    return checkers != U0


@nb.njit(cache=True, error_model="numpy")
def any_move(legal):
    for w in range(LEGAL_WORDS):  # noqa: SIM110 (a plain loop: numba compiles no generators)
        if legal[w]:
            return True
    return False


@nb.njit(cache=True, error_model="numpy")
def count_moves(legal):
    n = 0
    for w in range(LEGAL_WORDS):
        if legal[w]:
            n += count(legal[w])
    return n


@nb.njit(cache=True, error_model="numpy")
def is_legal(legal, label):
    return 0 <= label < ACTIONS and (legal[label >> 6] >> np.uint64(label & 63)) & U1 != U0


# ---- making a move ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def put(p, sq, code):
    """Square ``sq`` holds piece ``code`` (0: empty); the bitboards and the key follow."""
    old = p.board[sq]
    here = bit(sq)
    if old != 0:
        p.hash ^= PIECE_KEYS[old + 6, sq]
        p.bb[0 if old > 0 else 1] &= ~here
        p.bb[abs(old) + 1] &= ~here
    if code != 0:
        p.hash ^= PIECE_KEYS[code + 6, sq]
        p.bb[0 if code > 0 else 1] |= here
        p.bb[abs(code) + 1] |= here
    p.board[sq] = code


@nb.njit(cache=True, error_model="numpy")
def play(p, label):
    """Make the legal move ``label`` for the player to move, as Pgx's ``_apply_move`` makes it;
    the other player is then to move. Returns whether the move was irreversible (a capture or a
    pawn move: the half-move clock restarts)."""
    c = np.int64(p.turn)
    flip = 7 * c
    sign = 1 - 2 * c
    frm_seen = label // 73
    plane = label - 73 * frm_seen
    frm = frm_seen ^ flip
    to = TARGET[frm_seen, plane] ^ flip
    code = p.board[frm]
    piece = abs(code)
    reset = p.board[to] != 0 or piece == PAWN
    if piece == PAWN and to == p.ep:
        put(p, to - sign, 0)  # en passant: the pawn that stepped past
    new_ep = (frm + to) // 2 if piece == PAWN and abs(to - frm) == 2 else -1
    if piece == KING and frm == (32 ^ flip):  # castling moves the rook too
        if to == (16 ^ flip):
            put(p, 0 ^ flip, 0)
            put(p, 24 ^ flip, ROOK * sign)
        elif to == (48 ^ flip):
            put(p, 56 ^ flip, 0)
            put(p, 40 ^ flip, ROOK * sign)
    # Pgx's rights: lost by moving from the own king's or rooks' squares, or onto the other
    # side's rook corners (a capture there).
    rights = np.int64(p.castling)
    mine_k, mine_q = 1 << (2 * c), 2 << (2 * c)
    theirs_k, theirs_q = 1 << (2 * (1 - c)), 2 << (2 * (1 - c))
    if frm == (32 ^ flip):
        rights &= ~(mine_k | mine_q)
    elif frm == (0 ^ flip):
        rights &= ~mine_q
    elif frm == (56 ^ flip):
        rights &= ~mine_k
    if to == (7 ^ flip):
        rights &= ~theirs_q
    elif to == (63 ^ flip):
        rights &= ~theirs_k
    if plane < UNDERPROMOTIONS:
        piece = PROMOTED[plane // 3]
    elif piece == PAWN and (to & 7) == (7 - 7 * c):
        piece = QUEEN
    put(p, frm, 0)
    put(p, to, piece * sign)
    p.hash ^= CASTLING_KEYS[p.castling] ^ CASTLING_KEYS[rights] ^ EP_KEYS[p.ep + 1]
    p.hash ^= EP_KEYS[new_ep + 1] ^ BLACK_KEY
    p.castling = rights
    p.ep = new_ep
    p.halfmove = 0 if reset else p.halfmove + 1
    p.fullmove += c
    p.turn = 1 - c
    return reset


# ---- whole positions ----------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def zobrist(p):
    """The key of a position, from scratch (``play`` keeps it up to date move by move)."""
    h = U0
    for sq in range(64):
        h ^= PIECE_KEYS[p.board[sq] + 6, sq]
    h ^= CASTLING_KEYS[p.castling] ^ EP_KEYS[p.ep + 1]
    if p.turn == BLACK:
        h ^= BLACK_KEY
    return h


@nb.njit(cache=True, error_model="numpy")
def set_bitboards(p):
    """The bitboards of ``p.board``."""
    for k in range(8):
        p.bb[k] = U0
    for sq in range(64):
        code = p.board[sq]
        if code != 0:
            p.bb[0 if code > 0 else 1] |= bit(sq)
            p.bb[abs(code) + 1] |= bit(sq)


@nb.njit(cache=True, error_model="numpy")
def insufficient(p):
    """Pgx's (OpenSpiel's) insufficient material: kings alone, a king and one knight or bishop
    against a king, or kings and bishops all on squares of one colour."""
    bb = p.bb
    pieces = count(bb[0] | bb[1])
    heavy = count(bb[2] | bb[5] | bb[6])  # pawns, rooks, queens
    bishops = bb[4]
    if pieces <= 2 or (pieces == 3 and heavy == 0):
        return True
    return pieces == count(bishops) + 2 and ((bishops & DARK) == bishops or bishops & DARK == U0)
