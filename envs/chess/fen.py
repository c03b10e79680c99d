"""FEN and UCI: chess positions and moves as text, to and from the game's arrays.

``parse(fen)`` reads a position (Forsyth-Edwards Notation, as python-chess reads it: the fields
after the board may be left out, a full-move number 0 reads as 1), ``fen(...)`` writes one, and
``uci(label, board, turn)`` / ``label(move, turn)`` translate between Pgx's action labels and UCI
moves ("e2e4", "e7e8n"). The en-passant square is written whenever the last ply was a double
step, as Pgx's ``to_fen`` writes it (python-chess's ``Board.fen(en_passant="fen")``).
"""

import numpy as np

from vecenv.kernels.position import PositionError

from .moves import QUEEN_PLANE, TARGET, UNDERPROMOTIONS

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
PIECES = "pnbrqk"  # Pgx's codes 1-6 in this order; white in capitals
FILES = "abcdefgh"
CASTLING = (("K", 1), ("Q", 2), ("k", 4), ("q", 8))  # FEN's letters and the game's bits
PROMOTIONS = "rbn"
MAX_NUMBER = 2**30  # the largest clock or move number a record holds  # under-promotion planes // 3


def square(name):
    """Pgx's number of a square named like "e4" (8 * file + rank)."""
    return 8 * FILES.index(name[0]) + int(name[1]) - 1


def square_name(sq):
    return FILES[sq // 8] + str(sq % 8 + 1)


def parse(text):
    """A FEN as a dict of the game's fields: ``board`` (64 int8, Pgx's squares and codes),
    ``turn`` (0 white, 1 black), ``castling`` (bits), ``ep`` (-1 or a square), ``halfmove``,
    ``fullmove``. Malformed text raises ``PositionError`` on the field ``fen``."""
    if not isinstance(text, str):
        raise PositionError("fen", f"must be a string, got {type(text).__name__}")
    parts = text.split()
    if not 1 <= len(parts) <= 6:
        raise PositionError("fen", f"has {len(parts)} fields; a FEN has 1 to 6: {text!r:.100}")
    parts += ["w", "-", "-", "0", "1"][len(parts) - 1 :]
    placement, side, rights, passed, clock, number = parts
    rows = placement.split("/")
    if len(rows) != 8:
        raise PositionError("fen", f"has {len(rows)} ranks; a board has 8: {placement!r:.100}")
    board = np.zeros(64, dtype=np.int8)
    for k, row in enumerate(rows):
        rank, file = 7 - k, 0
        for ch in row:
            if ch in "12345678":
                file += int(ch)
            elif ch.lower() in PIECES and file < 8:
                code = PIECES.index(ch.lower()) + 1
                board[8 * file + rank] = code if ch.isupper() else -code
                file += 1
            else:
                raise PositionError("fen", f"rank {rank + 1} ({row!r:.20}) is no rank of a board")
        if file != 8:
            raise PositionError("fen", f"rank {rank + 1} ({row!r:.20}) has {file} squares, not 8")
    if side not in ("w", "b"):
        raise PositionError("fen", f"the side to move must be 'w' or 'b', got {side!r:.20}")
    castling = 0
    if rights != "-":
        letters = dict(CASTLING)
        if any(ch not in letters for ch in rights) or len(set(rights)) != len(rights):
            raise PositionError(
                "fen", f"castling rights must be '-' or of 'KQkq', got {rights!r:.20}"
            )
        for ch in rights:
            castling |= letters[ch]
    ep = -1
    if passed != "-":
        if len(passed) != 2 or passed[0] not in FILES or passed[1] not in "12345678":
            raise PositionError(
                "fen", f"the en-passant square must be '-' or a square, got {passed!r:.20}"
            )
        ep = square(passed)
    numbers = []
    for name, value in (("half-move clock", clock), ("full-move number", number)):
        if not value.isdigit():
            raise PositionError("fen", f"the {name} must be a number >= 0, got {value!r:.20}")
        if int(value) > MAX_NUMBER:
            raise PositionError("fen", f"the {name} must be at most {MAX_NUMBER}, got {value:.20}")
        numbers.append(int(value))
    return {
        "board": board,
        "turn": 0 if side == "w" else 1,
        "castling": castling,
        "ep": ep,
        "halfmove": numbers[0],
        "fullmove": max(numbers[1], 1),
    }


def fen(board, turn, castling, ep, halfmove, fullmove):
    """The FEN of a position given as the game's fields (``board`` in Pgx's squares)."""
    board = np.asarray(board)
    rows = []
    for rank in range(7, -1, -1):
        row, gap = "", 0
        for file in range(8):
            code = int(board[8 * file + rank])
            if code == 0:
                gap += 1
                continue
            row += (str(gap) if gap else "") + (
                PIECES[code - 1].upper() if code > 0 else PIECES[-code - 1]
            )
            gap = 0
        rows.append(row + (str(gap) if gap else ""))
    rights = "".join(ch for ch, b in CASTLING if int(castling) & b) or "-"
    passed = "-" if int(ep) < 0 else square_name(int(ep))
    side = "w" if int(turn) == 0 else "b"
    return f"{'/'.join(rows)} {side} {rights} {passed} {int(halfmove)} {int(fullmove)}"


def record_fen(record):
    """The FEN of a state record (``engine.get_state(i)``)."""
    return fen(*(record[k] for k in ("board", "turn", "castling", "ep", "halfmove", "fullmove")))


def observed_fen(obs, i=0, turn=0):
    """The FEN of episode ``i`` of an engine's observation ``obs`` (a dict of arrays), with
    ``turn`` the side to move (the statuses tell it: ``engine.states["status"]``)."""
    rights = sum(b for (_, b), on in zip(CASTLING, obs["castling"][i], strict=True) if on)
    return fen(
        obs["board"][i], turn, rights, obs["en_passant"][i], obs["halfmove"][i], obs["fullmove"][i]
    )


def uci(label, board, turn):
    """The UCI move of Pgx's action ``label`` for the side ``turn`` (0 white, 1 black) on
    ``board`` (64 codes, Pgx's squares): a pawn reaching the last rank by a queen-move plane
    promotes to a queen ("e7e8q")."""
    label = int(label)
    if not 0 <= label < 64 * 73:
        raise ValueError(f"an action label is in [0, 4672), got {label}")
    flip = 7 * int(turn)
    seen, plane = divmod(label, 73)
    to = int(TARGET[seen, plane])
    if to < 0:
        raise ValueError(f"action {label} leads off the board")
    move = square_name(seen ^ flip) + square_name(to ^ flip)
    if plane < UNDERPROMOTIONS:
        return move + PROMOTIONS[plane // 3]
    if abs(int(board[seen ^ flip])) == 1 and to % 8 == 7:
        return move + "q"
    return move


def label(move, turn):
    """Pgx's action label of the UCI ``move`` for the side ``turn``."""
    if not isinstance(move, str) or len(move) not in (4, 5):
        raise ValueError(f"a UCI move is like 'e2e4' or 'e7e8q', got {move!r}")
    flip = 7 * int(turn)
    frm, to = square(move[:2]) ^ flip, square(move[2:4]) ^ flip
    df, dr = to // 8 - frm // 8, to % 8 - frm % 8
    if len(move) == 5 and move[4] in PROMOTIONS and dr == 1 and df in (0, 1, -1):
        return 73 * frm + 3 * PROMOTIONS.index(move[4]) + (0, 1, -1).index(df)
    plane = int(QUEEN_PLANE[df + 7, dr + 7]) if -7 <= df <= 7 and -7 <= dr <= 7 else -1
    if plane < 0 or (len(move) == 5 and move[4] != "q"):
        raise ValueError(f"{move!r} is no queen or knight move")
    return 73 * frm + plane
