"""Shogi in USI's notation, in ``rules``' squares and codes: positions as SFEN, both ways, and
moves (``"7g7f"``, ``"8h2b+"``, ``"P*5e"``) as Pgx's labels, both ways.

A SFEN lists the ranks from a (gote's side) to i, each from file 9 to file 1; a letter is a
piece (USI's: P L N S B R G K, "+" before a promoted one; sente's in capitals), a digit that many
empty squares; then the side to move (``b`` sente, ``w`` gote), the pieces in hand (sente's then
gote's, a count before a letter when more than one; ``-`` for none) and the move number.
"""

import numpy as np

LETTERS = "PLNSBRGK"  # codes 1-8; a promoted piece (9-14) is "+" and its unpromoted letter
HAND = "PLNSBRG"  # the kinds in hand, in Pgx's order (pawn, lance, ..., rook, gold)
START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
FILES = "123456789"
RANKS = "abcdefghi"
# Pgx's directions 0-9 as sente sees them (file step, rank step): up, up-left, up-right, left,
# right, down, down-left, down-right, the knight's up2-left and up2-right.
STEPS = ((0, -1), (1, -1), (-1, -1), (1, 0), (-1, 0), (0, 1), (1, 1), (-1, 1), (1, -2), (-1, -2))


def parse(text):
    """{"board": (81,) int8, "hands": (2, 7) int8, "turn": 0 or 1, "ply": move number - 1} of a
    SFEN; ValueError naming what is wrong."""
    parts = text.split()
    if len(parts) not in (3, 4):
        raise ValueError(f"a SFEN has 3 or 4 fields (board, side, hands, move number): {text!r}")
    rows = parts[0].split("/")
    if len(rows) != 9:
        raise ValueError(f"the board has {len(rows)} ranks, not 9")
    board = np.zeros(81, dtype=np.int8)
    for y, row in enumerate(rows):
        x = 8
        promoted = False
        for char in row:
            if char.isdigit():
                if promoted:
                    raise ValueError(f"'+' before a digit in rank {'abcdefghi'[y]}")
                x -= int(char)
                continue
            if char == "+":
                promoted = True
                continue
            kind = LETTERS.find(char.upper()) + 1
            if kind == 0 or x < 0 or (promoted and kind in (7, 8)):
                raise ValueError(f"rank {'abcdefghi'[y]}: {row!r} is not 9 squares of pieces")
            code = kind + 8 if promoted else kind
            board[9 * x + y] = code if char.isupper() else -code
            promoted = False
            x -= 1
        if x != -1 or promoted:
            raise ValueError(f"rank {'abcdefghi'[y]}: {row!r} is not 9 squares")
    if parts[1] not in ("b", "w"):
        raise ValueError(f"the side to move is 'b' or 'w', not {parts[1]!r}")
    hands = np.zeros((2, 7), dtype=np.int8)
    if parts[2] != "-":
        count = ""
        for char in parts[2]:
            if char.isdigit():
                count += char
                continue
            kind = HAND.find(char.upper())
            if kind < 0:
                raise ValueError(f"{char!r} is no piece in hand")
            hands[0 if char.isupper() else 1, kind] = min(int(count or 1), 18)
            count = ""
    number = int(parts[3]) if len(parts) == 4 else 1
    if number < 1:
        raise ValueError("the move number starts at 1")
    return {"board": board, "hands": hands, "turn": "bw".index(parts[1]), "ply": number - 1}


def sfen(board, hands, turn, ply=0):
    """The SFEN of a position (``ply`` plies played: move number ``ply + 1``)."""
    rows = []
    for y in range(9):
        row, empty = "", 0
        for x in range(8, -1, -1):
            code = int(board[9 * x + y])
            if code == 0:
                empty += 1
                continue
            if empty:
                row, empty = row + str(empty), 0
            kind = abs(code)
            letter = ("+" + LETTERS[kind - 9]) if kind > 8 else LETTERS[kind - 1]
            row += letter if code > 0 else letter.lower()
        rows.append(row + (str(empty) if empty else ""))
    held = ""
    for player in (0, 1):
        for kind in (5, 4, 6, 3, 2, 1, 0):  # USI's order: R B G S N L P
            count = int(hands[player][kind])
            if count:
                letter = HAND[kind] if player == 0 else HAND[kind].lower()
                held += (str(count) if count > 1 else "") + letter
    return f"{'/'.join(rows)} {'bw'[turn]} {held or '-'} {ply + 1}"


def square_name(sq):
    """USI's name of a square: file then rank (square 0 is "1a", 80 is "9i")."""
    return FILES[sq // 9] + RANKS[sq % 9]


def square_of(name):
    return 9 * FILES.index(name[0]) + RANKS.index(name[1])


def usi(action, board, turn):
    """The USI move of Pgx's label ``action`` for the player ``turn`` (0 sente) on ``board``:
    the piece it moves is the nearest of that player's on the side the direction names."""
    d, there = divmod(int(action), 81)
    to = there if turn == 0 else 80 - there
    if d >= 20:
        return f"{HAND[d - 20]}*{square_name(to)}"
    dx, dy = STEPS[d % 10]
    if turn == 1:
        dx, dy = -dx, -dy
    sign = 1 - 2 * turn
    x, y = to // 9 - dx, to % 9 - dy
    while 0 <= x < 9 and 0 <= y < 9:
        if board[9 * x + y] * sign > 0:
            return square_name(9 * x + y) + square_name(to) + ("+" if d >= 10 else "")
        if d % 10 >= 8:
            break
        x, y = x - dx, y - dy
    raise ValueError(f"label {action} moves no piece of player {turn}")


def label(move, turn):
    """Pgx's label of a USI move for the player ``turn`` (0 sente)."""
    if move[1] == "*":
        to = square_of(move[2:4])
        return 81 * (20 + HAND.index(move[0])) + (to if turn == 0 else 80 - to)
    frm, to = square_of(move[0:2]), square_of(move[2:4])
    dx, dy = to // 9 - frm // 9, to % 9 - frm % 9
    if turn == 1:
        dx, dy = -dx, -dy
    if abs(dx) == 1 and dy == -2:
        d = 8 if dx == 1 else 9
    else:
        d = STEPS.index(((dx > 0) - (dx < 0), (dy > 0) - (dy < 0)))
    return 81 * (d + 10 * move.endswith("+")) + (to if turn == 0 else 80 - to)
