"""Chess over one episode's record, with Pgx's actions, rules and ends.

White is agent 0 and moves first. The record holds the position (``moves``: the board in Pgx's
squares and codes, its bitboards, the side to move, castling rights, en-passant square, clocks and
Zobrist key), the keys of the positions since the last capture or pawn move (``history``: where a
threefold repetition can only be found) and the legal moves of the side to move as bits of Pgx's
4672 labels (``legal``), found once per ply and read by both the next step and the observation.

The game ends, as Pgx's ``chess`` ends it, when the side to move has no legal move (checkmate
scores +1/-1, stalemate draws), when the half-move clock reaches 100 (fifty moves), on
insufficient material (OpenSpiel's rule, which Pgx takes), on the third occurrence of a position
(the same pieces, side to move, castling rights and en-passant square) and after 512 plies (Kaggle's
``episodeSteps`` 513: the step that reaches ``episodeSteps - 1`` ends it). Statuses and rewards are
kaggle-environments' (``kernels/turns``): an illegal action makes its agent INVALID.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    any_active,
    begin_rewards,
    end_step,
    mover,
    refuse,
)

from .fen import START as START_FEN
from .fen import parse
from .moves import (
    ACTIONS,
    KING,
    LEGAL_WORDS,
    PAWN,
    U0,
    U1,
    any_move,
    generate,
    in_check,
    insufficient,
    is_legal,
    lowest,
    play,
    set_bitboards,
    zobrist,
)

POSITION_KEYS = ("fen",)  # reset(position={"fen": ...}): a position from its FEN
HISTORY = 101  # the keys of the positions at half-move clocks 0-100
START = parse(START_FEN)["board"]
FIFTY_MOVES = 100

FIELDS = [
    ("board", np.int8, (64,)),
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("bb", np.uint64, (8,)),  # white, black, pawns, knights, bishops, rooks, queens, kings
    ("turn", np.uint8),  # 0 white, 1 black
    ("castling", np.uint8),  # bits: 1 K, 2 Q, 4 k, 8 q
    ("ep", np.int8),  # the square the last ply's double step passed over, else -1
    ("halfmove", np.int16),  # plies since the last capture or pawn move
    ("fullmove", np.int32),
    ("hash", np.uint64),  # the position's Zobrist key
    ("since", np.int16),  # history holds the keys at half-move clocks since..halfmove
    ("repetitions", np.int8),  # earlier occurrences of the position (2: the game is over)
    ("history", np.uint64, (HISTORY,)),
    ("legal", np.uint64, (LEGAL_WORDS,)),  # the side to move's legal labels, as bits
]

STATE_BOUNDS = {
    "board": (-6, 6),
    "status": (0, 5),
    "reward": (-1, 1),
    "turn": (0, 1),
    "castling": (0, 15),
    "ep": (-1, 63),
    "halfmove": (0, FIFTY_MOVES),
    "fullmove": (1, 2**30),
    "since": (0, FIFTY_MOVES),
    "repetitions": (0, 2),
}

# Observation fields, in the spec's order.
BOARD, COLOR, CASTLING, EN_PASSANT, HALFMOVE, FULLMOVE, REPETITIONS, LEGAL = range(8)


@nb.njit(cache=True, error_model="numpy")
def clear_legal(s):
    for w in range(LEGAL_WORDS):
        s.legal[w] = U0


@nb.njit(cache=True, error_model="numpy")
def settle(s):
    """After a move (or in a new position): the history and repetitions, the legal moves of the
    side to move; returns 0 while the game goes on, 1 on checkmate, 2 on a draw."""
    h = np.int64(s.halfmove)
    s.history[h] = s.hash
    seen = 0
    k = h - 2
    while k >= s.since:  # the same side to move: every second ply
        if s.history[k] == s.hash:
            seen += 1
        k -= 2
    s.repetitions = min(seen, 2)
    checked = generate(s)
    if not any_move(s.legal):
        return 1 if checked else 2
    if h >= FIFTY_MOVES or seen >= 2 or insufficient(s):
        return 2
    return 0


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(64):  # a loop: an array copy would need numba's runtime, which CUDA lacks
        s.board[k] = START[k]
    s.turn = 0
    s.castling = 15
    s.ep = -1
    s.halfmove = 0
    s.fullmove = 1
    set_bitboards(s)
    s.hash = zobrist(s)
    s.since = 0
    settle(s)
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        label = actions[a]
        if is_legal(s.legal, label):
            if play(s, label):
                s.since = s.halfmove  # 0: nothing before an irreversible move repeats
            end = settle(s)
            other = 1 - a
            if end == 0:
                s.status[a] = INACTIVE
                s.status[other] = ACTIVE
            else:
                if end == 1:  # checkmate: the side to move (the other agent) has lost
                    s.reward[a] = 1.0
                    s.reward[other] = -1.0
                s.status[a] = DONE
                s.status[other] = DONE
        else:
            refuse(s, a)
    done = end_step(s, cfg, rewards)
    if done:
        clear_legal(s)
    return done


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[BOARD][i]
    for k in range(64):
        board[k] = s.board[k]
    obs[COLOR][i, 0] = 0
    obs[COLOR][i, 1] = 1
    rights = obs[CASTLING][i]
    for k in range(4):
        rights[k] = (s.castling >> k) & 1 != 0
    obs[EN_PASSANT][i] = s.ep
    obs[HALFMOVE][i] = s.halfmove
    obs[FULLMOVE][i] = s.fullmove
    obs[REPETITIONS][i] = s.repetitions
    legal = obs[LEGAL][i]
    for k in range(ACTIONS):
        legal[k] = False
    if any_active(s):
        for w in range(LEGAL_WORDS):
            bits = s.legal[w]
            while bits:
                legal[64 * w + lowest(bits)] = True
                bits &= bits - U1


# ---- outside the kernels: checks and positions --------------------------------------------------

# What a record can get wrong: (the observation field a position names, the reason). A field of
# None is the record's own (set_state only: a position hook computes it).
PROBLEMS = (
    None,
    ("board", "needs one king of each colour"),
    ("board", "has a pawn on the first or last rank"),
    (None, "bb must be the board's bitboards"),
    (
        "en_passant",
        "is no square a pawn just passed over (the sixth rank with white to move, the third with "
        "black; empty, the pawn in front of it, the square behind it empty)",
    ),
    ("board", "leaves the side not to move in check"),
    (None, "since must be at most halfmove"),
    (None, "hash must be the position's Zobrist key"),
    (None, "history[halfmove] must be the position's key"),
    (None, "repetitions must count the position's earlier occurrences in history"),
    ("status", "must make the side to move (turn) the ACTIVE agent"),
    (None, "legal must be the legal moves of the side to move"),
    ("halfmove", "is 100 or more: the fifty-move rule has ended the game"),
    ("board", "is checkmate: the game is over"),
    ("board", "is stalemate: the game is over"),
    ("board", "is a draw by insufficient material: the game is over"),
    (None, "repetitions is 2 while the game goes on (a threefold repetition ends it)"),
    (None, "legal must be empty while no agent is to move"),
)


# The part of a FEN each observation field is.
FEN_PARTS = {
    "board": "the board",
    "en_passant": "the en-passant square",
    "halfmove": "the half-move clock",
    "status": "the side to move",
}


@nb.njit(cache=True, error_model="numpy")
def running_turn(s):
    """The agent to move (one ACTIVE, the other INACTIVE), else -1."""
    if s.status[0] == ACTIVE and s.status[1] == INACTIVE:
        return 0
    if s.status[1] == ACTIVE and s.status[0] == INACTIVE:
        return 1
    return -1


@nb.njit(cache=True, error_model="numpy")
def problem(s, scratch):
    """The index in PROBLEMS of what is wrong with record ``s`` (0: nothing); ``scratch`` is a
    record of the same type to recompute into."""
    kings = 0
    for sq in range(64):
        code = s.board[sq]
        if code == KING:
            kings += 1
        elif code == -KING:
            kings += 16
        elif abs(code) == PAWN and (sq & 7 == 0 or sq & 7 == 7):
            return 2
        scratch.board[sq] = code
    if kings != 17:
        return 1
    set_bitboards(scratch)
    for k in range(8):
        if scratch.bb[k] != s.bb[k]:
            return 3
    c = np.int64(s.turn)
    a = running_turn(s)
    if a >= 0 and a != c:
        return 10
    if s.ep >= 0:
        step = 1 - 2 * c
        ep = np.int64(s.ep)
        if (ep & 7) != 5 - 3 * c or s.board[ep] != 0 or s.board[ep + step] != 0:
            return 4
        if s.board[ep - step] != -PAWN * step:
            return 4
    if in_check(s, 1 - c):
        return 5
    if s.since > s.halfmove:
        return 6
    if zobrist(s) != s.hash:
        return 7
    h = np.int64(s.halfmove)
    if s.history[h] != s.hash:
        return 8
    seen = 0
    k = h - 2
    while k >= s.since:
        if s.history[k] == s.hash:
            seen += 1
        k -= 2
    if min(seen, 2) != s.repetitions:
        return 9
    if a < 0:
        for w in range(LEGAL_WORDS):
            if s.legal[w] != U0:
                return 17
        return 0
    for k in range(8):
        scratch.bb[k] = s.bb[k]
    scratch.turn = s.turn
    scratch.castling = s.castling
    scratch.ep = s.ep
    checked = generate(scratch)
    for w in range(LEGAL_WORDS):
        if scratch.legal[w] != s.legal[w]:
            return 11
    if h >= FIFTY_MOVES:
        return 12
    if not any_move(s.legal):
        return 13 if checked else 14
    if insufficient(s):
        return 15
    if seen >= 2:
        return 16
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
    """Every record is a position the rules can play: one king each, no pawn on a back rank, a
    possible en-passant square, the side not to move not in check, bitboards, key, history and
    legal moves those of the board, the ACTIVE agent the side to move, a game not already over."""
    scratch = np.zeros(1, dtype=records.dtype)
    index, found = first_problem(np.ascontiguousarray(records), scratch)
    if index >= 0:
        field, reason = PROBLEMS[found]
        return f"invalid state (record {index}): {field + ' ' if field else ''}{reason}"
    if not np.isin(records["reward"], (-1.0, 0.0, 1.0)).all():
        return "state field 'reward' must be one of [-1, 0, 1]"
    return None


def _castling_bits(rights):
    return int(sum(1 << k for k in range(4) if rights[k]))


def position(record, config, given):
    """A position from a FEN (``{"fen": ...}``, the side to move from it) or from the observation
    fields (board, castling, en_passant, halfmove, fullmove; the side to move from the statuses;
    repetitions and legal are recomputed: a position starts with no history)."""
    if "fen" in given:
        if given["observation"] or "status" in given:
            raise PositionError("fen", "gives the whole position: leave out observation and status")
        fields = parse(given["fen"])
        named = "fen"
        record["status"] = (ACTIVE, INACTIVE) if fields["turn"] == 0 else (INACTIVE, ACTIVE)
        record["reward"] = given.get("reward", 0.0)
    else:
        colors = observed(given, "color", np.array([0, 1]))
        for k, value in enumerate(colors.tolist()):
            if value != k:
                raise PositionError("observation.color", f"is {value}; agent {k} plays {k}", k)
        write_turns(record, given, (ACTIVE, INACTIVE))
        turn = 1 if record["status"][1] == ACTIVE and record["status"][0] == INACTIVE else 0
        fields = {
            "board": observed(given, "board", START),
            "turn": turn,
            "castling": _castling_bits(observed(given, "castling", np.ones(4, dtype=bool))),
            "ep": int(observed(given, "en_passant", -1)),
            "halfmove": int(observed(given, "halfmove", 0)),
            "fullmove": int(observed(given, "fullmove", 1)),
        }
        named = None
    if fields["halfmove"] > FIFTY_MOVES:
        fields["halfmove"] = FIFTY_MOVES  # over: refused below as the fifty-move rule's end
    one = np.zeros(1, dtype=record.dtype)
    for key in ("board", "turn", "castling", "ep", "halfmove", "fullmove", "status"):
        one[key] = fields[key] if key in fields else record[key]
    one["since"] = fields["halfmove"]
    found = build(one, np.zeros(1, dtype=record.dtype))
    if found:
        field, reason = PROBLEMS[found]
        if named:
            raise PositionError(named, f"{FEN_PARTS[field]} {reason}")
        raise PositionError("status" if field == "status" else f"observation.{field}", reason)
    for name, *_ in FIELDS:
        if name not in ("status", "reward"):
            record[name] = one[0][name]


@nb.njit(cache=True, error_model="numpy")
def build(one, scratch):
    """Complete the position ``one[0]`` from its board, side to move, rights and clocks (the key,
    the history, the legal moves); returns its problem (``PROBLEMS``), 0 for none."""
    s = one[0]
    kings = 0
    for sq in range(64):
        if abs(s.board[sq]) > KING:
            return 1
        kings += 1 if s.board[sq] == KING else (16 if s.board[sq] == -KING else 0)
    set_bitboards(s)
    s.hash = zobrist(s)
    s.history[s.halfmove] = s.hash
    if kings != 17:
        return 1
    if running_turn(s) >= 0:
        settle(s)
    return problem(s, scratch[0])
