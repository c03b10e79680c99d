"""Backgammon over one episode's record, with Pgx's rules and actions (``backgammon``).

The board is Pgx's 28 counts seen by the agent to move: points 0-23 in the mover's direction of
travel (its home board 18-23), its bar (24), the other's bar (25), its checkers borne off (26),
the other's (27); the mover's checkers count positive, the other's negative. When the turn passes
the board is turned round (points reversed, the two bars and the two trays exchanged, signs
flipped), as Pgx turns it.

An action is Pgx's ``6 * source + die``: source 0 is no move (actions 0-5, legal only, and all six,
when no checker can move), 1 the bar, 2-25 the points 0-23; die 0-5 is the face 1-6 played. A
checker may move by any die still to play, whichever the other (Pgx does not require both dice,
nor the larger, to be used where only one can be); doubles give four moves. A move lands on a point
holding at most one of the other's checkers (hitting it to the bar); a checker on the bar must
come in (to point ``die - 1``) before any other moves; with every checker home (or off) one bears
off by the exact die, or by a larger die from the rearmost point. The turn passes when the dice
are used up or on no move; a new roll is then drawn from the episode's stream, two faces
uniformly (doubles included), as Pgx rolls. The first roll is one of the 30 rolls that are not
doubles, uniformly, and agent 0 plays it.

The first to bear off all fifteen wins 1, a gammon (the other has borne none off) 2, a backgammon
(a gammon with one of the other's checkers still in the winner's home board; Pgx does not count
the bar) 3; the other loses as much. An illegal action ends the game as Pgx's penalty does: -3 to
its agent, +3 to the other (both DONE). Statuses are kaggle-environments' (``kernels/turns``).

The record keeps the position's legal actions (``moves``: a word of source bits per face, found
once after every ply), which ``step`` tests an action against and ``observe`` writes out.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, require_marks, write_turns
from vecenv.kernels.rng import integer
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    any_active,
    begin_rewards,
    end_step,
    mover,
)

# ``step`` draws the next roll from the episode's stream: a search draws it from its own.
CHANCE = True

POINTS = 24
BAR = 24  # the mover's bar
OTHER_BAR = 25
OFF = 26  # the mover's checkers borne off
OTHER_OFF = 27
CELLS = 28
CHECKERS = 15
ACTIONS = 26 * 6
PENALTY = 3.0  # Pgx's illegal-action penalty for backgammon
# Pgx's starting board, seen by the first mover.
START = np.array(
    [2, 0, 0, 0, 0, -5, 0, -3, 0, 0, 0, 5, -5, 0, 0, 0, 3, 0, 5, 0, 0, 0, 0, -2, 0, 0, 0, 0],
    dtype=np.int8,
)

FIELDS = [
    ("board", np.int8, (CELLS,)),  # Pgx's _board: the mover's view
    ("dice", np.int8, (2,)),  # Pgx's _dice: the faces rolled, 0-5
    ("playable", np.int8, (4,)),  # Pgx's _playable_dice: the faces still to play, -1 for none
    ("played", np.int8),  # Pgx's _played_dice_num: moves made this turn
    ("mover", np.int8),  # the agent whose view the board is (the winner once won)
    ("moves", np.uint32, (6,)),  # the legal actions: bit j of moves[f] for action 6 * j + f
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
]

STATE_BOUNDS = {
    "board": (-CHECKERS, CHECKERS),
    "dice": (0, 5),
    "playable": (-1, 5),
    "played": (0, 4),
    "mover": (0, 1),
    "moves": (0, 2**26 - 1),
    "status": (0, 5),
    "reward": (-3, 3),
}

# The observation's fields, in the spec's order.
BOARD, DICE, REMAINING, MARK, TURN, LEGAL, FEATURES = range(7)


# ---- the kernels ------------------------------------------------------------------------------
# Few functions, each doing a whole part of a ply: numba compiles each on a game's first step.


@nb.njit(cache=True, error_model="numpy")
def find_moves(s):
    """Pgx's legal actions of the position into ``s.moves``: bit ``j`` of ``moves[f]`` for action
    ``6 * j + f``. A source can move by a die still to play (from the bar first; bearing off with
    every checker home or off, by the exact die or a larger one from the rearmost point); where
    none can, the six no-move actions (bit 0 of every face)."""
    board = s.board
    home = 0
    rear = 100
    for p in range(POINTS):
        if board[p] > 0:
            if p < rear:
                rear = p
            if p >= 18:
                home += board[p]
    all_home = CHECKERS - board[OFF] == home
    rear = POINTS - rear  # Pgx's _rear_distance
    found = False
    for f in range(6):
        bits = 0
        if s.playable[0] == f or s.playable[1] == f or s.playable[2] == f or s.playable[3] == f:
            die = f + 1
            if board[BAR] > 0:
                if board[die - 1] >= -1:
                    bits = 2
            else:
                for p in range(POINTS):
                    if board[p] <= 0:
                        continue
                    target = p + die
                    if target < POINTS:
                        ok = board[target] >= -1
                    else:
                        distance = POINTS - p
                        ok = all_home and (distance == die or (rear <= die and rear == distance))
                    if ok:
                        bits |= 4 << p
        s.moves[f] = bits
        found |= bits != 0
    if not found:
        for f in range(6):
            s.moves[f] = 1


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    for k in range(CELLS):
        s.board[k] = START[k]
    first = integer(s, 30)  # Pgx's 30 rolls without doubles, in its order
    s.dice[0] = first // 5
    second = first % 5
    s.dice[1] = second + (second >= s.dice[0])
    s.playable[0] = s.dice[0]
    s.playable[1] = s.dice[1]
    s.playable[2] = -1
    s.playable[3] = -1
    s.played = 0
    s.mover = 0
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0
    find_moves(s)


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        action = actions[a]
        face = action % 6
        source = action // 6
        board = s.board
        score = 0.0
        if not (0 <= action < ACTIONS and (s.moves[face] >> source) & 1):
            score = -PENALTY  # Pgx's penalty for an illegal action: the game ends
        elif source > 0:
            # Pgx's _move: a lone checker of the other's on the target is hit to its bar.
            src = BAR if source == 1 else source - 2
            target = face if source == 1 else source - 1 + face
            if target >= POINTS:
                target = OFF
            board[src] -= 1
            if board[target] == -1:
                board[OTHER_BAR] -= 1
                board[target] = 1
            else:
                board[target] += 1
            # Pgx's _update_playable_dice: a double's dice go from the last, else the face.
            if s.dice[0] == s.dice[1]:
                s.playable[3 - s.played] = -1
            else:
                for k in range(4):
                    if s.playable[k] == face:
                        s.playable[k] = -1
            s.played += 1
            if board[OFF] == CHECKERS:
                # 1, 2 for a gammon, 3 for a backgammon (the winner's home board, not the bar).
                score = 1.0
                if board[OTHER_OFF] == 0:
                    inside = 0
                    for p in range(18, POINTS):
                        inside += board[p]
                    score = 3.0 if inside != 0 else 2.0
        if score != 0.0:
            s.reward[a] = score
            s.reward[1 - a] = -score
            s.status[0] = DONE
            s.status[1] = DONE
        else:
            if source == 0 or s.playable[0] + s.playable[1] + s.playable[2] + s.playable[3] == -4:
                # The turn passes: Pgx's _flip_board, then a roll of two fair dice (one of the
                # 36 ordered pairs, as Pgx's randint(key, (1, 2))), four dice of a double.
                for p in range(POINTS // 2):
                    q = POINTS - 1 - p
                    b = board[p]
                    board[p] = -board[q]
                    board[q] = -b
                b = board[BAR]
                board[BAR] = -board[OTHER_BAR]
                board[OTHER_BAR] = -b
                b = board[OFF]
                board[OFF] = -board[OTHER_OFF]
                board[OTHER_OFF] = -b
                s.mover = 1 - a
                s.status[a] = INACTIVE
                s.status[1 - a] = ACTIVE
                roll = integer(s, 36)
                s.dice[0] = roll // 6
                s.dice[1] = roll % 6
                double = s.dice[0] == s.dice[1]
                s.playable[0] = s.dice[0]
                s.playable[1] = s.dice[1]
                s.playable[2] = s.dice[0] if double else -1
                s.playable[3] = s.dice[0] if double else -1
                s.played = 0
        find_moves(s)  # the record's legal actions always those of its position
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    board = obs[BOARD][i]
    flip = s.mover == 1
    for p in range(POINTS):
        board[p] = -s.board[POINTS - 1 - p] if flip else s.board[p]
    for k in range(POINTS, CELLS):
        board[k] = -s.board[k ^ 1] if flip else s.board[k]
    obs[DICE][i, 0] = s.dice[0] + 1
    obs[DICE][i, 1] = s.dice[1] + 1
    remaining = obs[REMAINING][i]
    for f in range(6):
        remaining[f] = 0
    for k in range(4):
        if s.playable[k] >= 0:
            remaining[s.playable[k]] += 1
    obs[MARK][i, 0] = 1
    obs[MARK][i, 1] = 2
    running = any_active(s)
    obs[TURN][i] = s.mover + 1 if running else 0
    legal = obs[LEGAL][i]
    for j in range(26):
        for f in range(6):
            legal[6 * j + f] = running and ((s.moves[f] >> j) & 1) != 0
    features = obs[FEATURES][i]
    for agent in range(2):
        row = features[agent]
        for k in range(CELLS):
            row[k] = s.board[k]
        mine = agent == s.mover
        for f in range(6):
            row[CELLS + f] = remaining[f] if mine else 0


# ---- outside the kernels: checks and positions ------------------------------------------------


def moves_of(board, playable):
    """``find_moves`` in plain Python: the six words of legal-action bits of a position."""
    board = np.asarray(board, dtype=np.int64)
    points = board[:POINTS]
    mine = np.flatnonzero(points > 0)
    all_home = CHECKERS - board[OFF] == points[18:].clip(0).sum()
    rear = POINTS - (mine.min() if mine.size else 100)
    moves = np.zeros(6, dtype=np.uint32)
    for f in set(int(d) for d in playable if d >= 0):
        die = f + 1
        if board[BAR] > 0:
            moves[f] = 2 if board[die - 1] >= -1 else 0
            continue
        for p in mine:
            distance = POINTS - p
            if p + die < POINTS:
                ok = board[p + die] >= -1
            else:
                ok = all_home and (distance == die or (rear <= die and rear == distance))
            if ok:
                moves[f] |= 4 << int(p)
    if not moves.any():
        moves[:] = 1
    return moves


def _counts(board):
    board = np.asarray(board, dtype=np.int64)
    points = board[:POINTS]
    mine = points.clip(0).sum() + board[BAR] + board[OFF]
    theirs = (-points).clip(0).sum() - board[OTHER_BAR] - board[OTHER_OFF]
    return mine, theirs


def _playable(dice, remaining):
    """Pgx's dice still to play from the roll and how many of each face remain, or None where
    play cannot leave them."""
    d0, d1 = int(dice[0]), int(dice[1])
    if d0 == d1:
        left = int(remaining[d0])
        if left > 4 or int(np.sum(remaining)) != left:
            return None
        return np.array([d0] * left + [-1] * (4 - left), dtype=np.int8), 4 - left
    playable = np.full(4, -1, dtype=np.int8)
    for k, d in enumerate((d0, d1)):
        if remaining[d] > 1:
            return None
        if remaining[d]:
            playable[k] = d
    if int(np.sum(remaining)) != int((playable >= 0).sum()):
        return None
    return playable, 2 - int((playable >= 0).sum())


def check_state(records, config):
    """Fifteen checkers a side, bars and trays of the right sign, the dice still to play what a
    turn of that roll leaves, and a running game's mover the ACTIVE agent, not yet won."""
    for record in np.atleast_1d(records):
        board = record["board"]
        if board[BAR] < 0 or board[OFF] < 0 or board[OTHER_BAR] > 0 or board[OTHER_OFF] > 0:
            return "invalid state: bars and trays must hold the mover's (+) and the other's (-)"
        if _counts(board) != (CHECKERS, CHECKERS):
            return "invalid state: each player must have 15 checkers on the board, bar and tray"
        remaining = np.zeros(6, dtype=np.int64)
        for d in record["playable"]:
            if d >= 0:
                remaining[d] += 1
        want = _playable(record["dice"], remaining)
        if want is None or not np.array_equal(want[0], record["playable"]):
            return "invalid state: playable must be the dice of the roll not played yet"
        if want[1] != record["played"]:
            return "invalid state: played must count the dice of the roll played"
        if not np.array_equal(record["moves"], moves_of(board, record["playable"])):
            return "invalid state: moves must hold the position's legal actions"
        status = record["status"]
        if (status == ACTIVE).any():
            if status[record["mover"]] != ACTIVE:
                return "invalid state: mover must be the ACTIVE agent"
            if board[OFF] == CHECKERS or board[OTHER_OFF] == -CHECKERS:
                return "invalid state: a player has borne off every checker while the game runs"
            if (record["playable"] < 0).all():
                return "invalid state: a running game's mover must have dice to play"
    return None


def position(record, config, given):
    """A position from agent 0's board, the roll and the faces still to play (every face of the
    roll by default), the statuses and rewards (agent 0 to move by default; Pgx's observation,
    ``features``, is made from these)."""
    board = np.asarray(observed(given, "board", START), dtype=np.int64)
    dice = np.asarray(observed(given, "dice", np.array([1, 2]))) - 1
    if (dice < 0).any():
        raise PositionError("observation.dice", "faces run from 1 to 6")
    remaining = observed(given, "remaining", None)
    if remaining is None:
        remaining = np.zeros(6, dtype=np.int64)
        for d in dice.tolist() * (2 if dice[0] == dice[1] else 1):
            remaining[d] += 1
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    write_turns(record, given, (ACTIVE, INACTIVE))
    status = record["status"]
    running = (status == ACTIVE).any()
    if running:
        mover_ = 1 if status[1] == ACTIVE and status[0] != ACTIVE else 0
    else:  # a game over: the board as its winner saw it
        mover_ = 1 if record["reward"][1] > 0 else 0
    turn = given["observation"].get("turn")
    if turn is not None and int(turn) != (mover_ + 1 if running else 0):
        raise PositionError("observation.turn", f"is {int(turn)}; the statuses say otherwise")
    want = _playable(dice, np.asarray(remaining, dtype=np.int64))
    if want is None:
        raise PositionError("observation.remaining", "is not what a turn of that roll leaves")
    seen = board.copy()
    if mover_ == 1:
        seen[:POINTS] = -board[:POINTS][::-1]
        seen[POINTS:] = -board[[25, 24, 27, 26]]
    if _counts(seen) != (CHECKERS, CHECKERS):
        raise PositionError("observation.board", "each player must have 15 checkers")
    record["board"] = seen
    record["dice"] = dice
    record["playable"] = want[0]
    record["played"] = want[1]
    record["mover"] = mover_
    record["moves"] = moves_of(seen, want[0])
