"""Perft: the leaves of the legal-move tree to a depth, counted over the game's own move generator.

``perft(fen, depth)`` counts them from a FEN; ``divide(fen, depth)`` per first move (UCI). The
count is the generator's proof: the Chess Programming Wiki publishes the counts of a handful of
positions (the start: 20, 400, 8902, 197281, 4865609, ...), and every rule (castling through
attacked squares, en passant uncovering a check, promotions, pins) changes them. The tree is walked
with ``moves.generate`` and ``moves.play``, the functions the game steps with; the last level is
counted from the legal moves' bits, without playing them (bulk counting).
"""

import numba as nb
import numpy as np

from vecenv.kernels.state import state_dtype

from .fen import parse, uci
from .moves import LEGAL_WORDS, U0, U1, count_moves, generate, lowest, play, set_bitboards, zobrist
from .rules import FIELDS

# The game's own state record: the move generator compiles once for the game and for perft.
POSITION = state_dtype(FIELDS)


@nb.njit(cache=True, error_model="numpy")
def count_leaves(root, depth):
    """The leaves ``depth`` plies below position ``root`` (a POSITION record)."""
    if depth == 0:
        return 1
    stack = np.zeros(depth, dtype=POSITION)  # stack[d]: the position d plies down, and the
    stack[0] = root  # moves of it not yet walked in its legal words
    generate(stack[0])
    if depth == 1:
        return count_moves(stack[0].legal)
    total = 0
    level = 0
    word = np.zeros(depth, dtype=np.int64)  # the word of stack[d].legal being walked
    while level >= 0:
        legal = stack[level].legal
        w = word[level]
        while w < LEGAL_WORDS and legal[w] == U0:
            w += 1
        word[level] = w
        if w == LEGAL_WORDS:
            level -= 1
            continue
        bits = legal[w]
        label = 64 * w + lowest(bits)
        legal[w] = bits & (bits - U1)
        child = stack[level + 1]
        child.board[:] = stack[level].board
        child.bb[:] = stack[level].bb
        child.turn = stack[level].turn
        child.castling = stack[level].castling
        child.ep = stack[level].ep
        child.halfmove = stack[level].halfmove
        child.fullmove = stack[level].fullmove
        child.hash = stack[level].hash
        play(child, label)
        generate(child)
        if level + 2 == depth:  # the child's moves are the leaves
            total += count_moves(child.legal)
        else:
            level += 1
            word[level] = 0
    return total


def root(fen):
    """A POSITION record of ``fen``."""
    fields = parse(fen)
    out = np.zeros(1, dtype=POSITION)
    for key, value in fields.items():
        out[key] = value
    set_bitboards(out[0])
    out["hash"] = zobrist(out[0])
    return out[0]


def perft(fen, depth):
    """The leaves ``depth`` plies below the position ``fen``."""
    if not isinstance(depth, (int, np.integer)) or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, got {depth!r}")
    return int(count_leaves(root(fen), int(depth)))


def divide(fen, depth):
    """{UCI move: the leaves ``depth - 1`` plies below it} for each legal move of ``fen``."""
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    start = root(fen)
    generate(start)
    out = {}
    for label in np.flatnonzero(np.unpackbits(start["legal"].view(np.uint8), bitorder="little")):
        child = np.zeros(1, dtype=POSITION)
        child[0] = start
        play(child[0], int(label))
        out[uci(label, start["board"], start["turn"])] = int(count_leaves(child[0], depth - 1))
    return out
