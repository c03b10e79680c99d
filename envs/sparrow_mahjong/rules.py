"""Sparrow mahjong over one episode's record, with Pgx's three-player rules (``sparrow_mahjong``).

44 tiles of 11 types: bamboos 1-9 (types 0-8) and the green and red dragons (9, 10), four of
each. A tile's id (0-43) is ``4 * type + copy``; the red ones (red doras) are copy 0 of each
bamboo and every red dragon. ``reset`` shuffles the three agents' seats (seat 0 deals) and the
wall from the episode's own stream, deals five tiles a seat from the wall's head, the dealer draws
a sixth, and the wall's last tile shows the dora (its type). A deal where the dealer's six tiles
already win (tenhou) is shuffled again, as Pgx avoids it.

The only choice is the discard (action = a tile type the agent to move holds; a red one is kept
while the agent holds a plain one of the type). A discard that completes another seat's hand
(two sets of three: triplets, or runs of bamboos) wins at once for every such seat with at least
5 points that never discarded that type itself (furiten); else the next seat draws, and a drawn
tile that completes its hand wins at once. With the wall down to the dora tile the game is a draw.
Points: 2 a triplet, 1 a run, the yaku (all simples 1; all green 10 and all terminals 15,
both limits without doras; 6 red tiles: 20), each dora and red tile 1, the dealer 2; a discard's
winners take their points from the discarder, a self-drawn win half its points (rounded up) from
each other seat. Rewards are the points over 26, Pgx's float32, in agent order (an agent is Pgx's
player id). Pgx reads the hand that drew at index ``_turn`` (not ``_turn % 3``), which jax clamps
to the last seat: past the first round only seat 2 wins by its own draw, and so it is here.

Statuses and rewards are kaggle-environments' (``kernels/turns``); a discard of a type the agent
does not hold makes it INVALID (-1) and the other two +2, as Pgx rules an illegal action.

Hidden information: an agent observes its own hand, the dora and the discards, never another's
hand or the wall; ``redraw_hidden`` deals again what one agent cannot see.
"""

import itertools

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INACTIVE,
    INVALID,
    any_active,
    begin_rewards,
    end_step,
    mover,
    to_move,
)

PLAYERS = 3
TILES = 44
TYPES = 11
GREEN, RED_DRAGON = 9, 10
HAND = 5  # tiles a seat holds between turns; six after a draw
RIVER = 10  # discards a seat makes at most
FIRST_DRAW = PLAYERS * HAND  # the wall's index of the dealer's first draw
LAST = TILES - 1  # the dora tile: never drawn
MAX_TURN = LAST - FIRST_DRAW - 1  # turns 0..27; after the last discard the wall is spent
MAX_SCORE = 26  # Pgx's scale of the rewards
# Pgx's rewards are float32 points over 26, which XLA computes as points times float32(1 / 26).
SCALE = np.float32(1.0 / MAX_SCORE)
FEATURES = 15  # Pgx's observation: 15 bool rows of the 11 types
NO_TILE = -1


def _win_table():
    """Every winning hand of six tiles (two sets: a triplet of any type, or a run of three
    bamboos), as its base-5 code of the counts (type 0 the highest digit), sorted; with each
    hand's base points (2 a triplet, 1 a run) and yaku points (all green 10, all terminals and
    dragons 15, all simples 1)."""
    sets = []
    for t in range(TYPES):
        sets.append(((t, t, t), 2))
    for t in range(7):
        sets.append(((t, t + 1, t + 2), 1))
    hands = {}
    for (a, pa), (b, pb) in itertools.combinations_with_replacement(sets, 2):
        counts = np.bincount(a + b, minlength=TYPES)
        if counts.max() > 4:
            continue
        code = int(sum(int(c) * 5 ** (TYPES - 1 - t) for t, c in enumerate(counts)))
        held = set(np.flatnonzero(counts))
        if held <= {0, 8, GREEN, RED_DRAGON}:
            yaku = 15
        elif held <= {1, 2, 3, 5, 7, GREEN}:
            yaku = 10
        elif held <= set(range(1, 8)):
            yaku = 1
        else:
            yaku = 0
        hands[code] = (pa + pb, yaku)
    codes = sorted(hands)
    base = [hands[c][0] for c in codes]
    yaku = [hands[c][1] for c in codes]
    return np.array(codes, np.int64), np.array(base, np.int64), np.array(yaku, np.int64)


WIN_CODES, BASE_POINTS, YAKU_POINTS = _win_table()
POWERS = np.array([5 ** (TYPES - 1 - t) for t in range(TYPES)], dtype=np.int64)

FIELDS = [
    ("status", np.int8, (PLAYERS,)),  # by agent
    ("reward", np.float64, (PLAYERS,)),  # by agent
    ("seats", np.int8, (PLAYERS,)),  # the agent in each seat, the dealer first (Pgx's players)
    ("wall", np.int8, (TILES,)),  # tile ids in drawing order; the last shows the dora
    ("draw", np.int8),  # the wall's next tile
    ("turn", np.int8),  # discards so far: seat turn % 3 is to move
    ("hands", np.int8, (PLAYERS, TYPES)),  # by seat: tiles of each type
    ("reds", np.int8, (PLAYERS, TYPES)),  # by seat: red tiles of each type, as Pgx counts them
    ("rivers", np.int8, (PLAYERS, RIVER)),  # by seat: the types discarded, NO_TILE after
    ("red_rivers", np.int8, (PLAYERS, RIVER)),  # by seat: whether each discard was red
    ("last", np.int8),  # the last discard's type, NO_TILE before the first
    ("dora", np.int8),
    ("scores", np.int16, (PLAYERS,)),  # by seat: the points won (+) or paid (-) at the end
]

STATE_BOUNDS = {
    "status": (0, 5),
    "reward": (-2, 2),
    "seats": (0, PLAYERS - 1),
    "wall": (0, TILES - 1),
    "draw": (FIRST_DRAW + 1, LAST),
    "turn": (0, MAX_TURN),
    "hands": (0, 4),
    "reds": (0, 4),
    "rivers": (NO_TILE, TYPES - 1),
    "red_rivers": (0, 1),
    "last": (NO_TILE, TYPES - 1),
    "dora": (0, TYPES - 1),
    "scores": (-2 * MAX_SCORE, 2 * MAX_SCORE),
}

LEGAL = 6  # the observation's fields: hand, seat, mark, dora, rivers, turn, legal, features


def is_red(tile):
    """Whether tile id ``tile`` is red (Pgx: copy 0 of a bamboo, every red dragon)."""
    return (tile % 4 == 0 and tile != 4 * GREEN) or tile >= 4 * RED_DRAGON


def check_state(records, config):
    """A wall of every tile once, seats a permutation, the tiles of each type four in all
    (hands, discards and the wall not yet drawn), discards in order, red counts the tiles
    allow, and the statuses of the seat to move."""
    records = np.atleast_1d(records)
    if (np.sort(records["wall"].astype(np.int64), axis=1) != np.arange(TILES)).any():
        return "invalid state: the wall must hold every tile id 0-43 once"
    if (np.sort(records["seats"].astype(np.int64), axis=1) != np.arange(PLAYERS)).any():
        return "invalid state: seats must hold each agent once"
    turn, draw = records["turn"].astype(np.int64), records["draw"].astype(np.int64)
    if (draw != FIRST_DRAW + 1 + turn).any():
        return "invalid state: a seat draws once a turn (draw = 16 + turn)"
    rivers = records["rivers"].astype(np.int64)
    empty = rivers < 0
    if (empty[:, :, :-1] & ~empty[:, :, 1:]).any():
        return "invalid state: a river holds its discards first"
    hands, reds = records["hands"].astype(np.int64), records["reds"].astype(np.int64)
    if (reds > hands).any() or (reds[:, :, :GREEN] > 1).any() or (reds[:, :, GREEN] > 0).any():
        return "invalid state: more red tiles than a hand or the tiles allow"
    if (records["red_rivers"].astype(bool) & empty).any():
        return "invalid state: a red discard where there is none"
    for r, record in enumerate(records):
        counts = hands[r].sum(axis=0)
        counts += np.bincount(rivers[r][rivers[r] >= 0], minlength=TYPES)
        counts += np.bincount(record["wall"][draw[r] :].astype(np.int64) // 4, minlength=TYPES)
        if (counts != 4).any():
            return "invalid state: hands, discards and the wall must hold four tiles of each type"
        if int(record["dora"]) != int(record["wall"][LAST]) // 4:
            return "invalid state: the dora is the type of the wall's last tile"
        status = record["status"]
        if (status == ACTIVE).any():
            agent = int(record["seats"][turn[r] % PLAYERS])
            others = np.delete(status, agent)
            if status[agent] != ACTIVE or (others != INACTIVE).any():
                return (
                    "invalid state: the agent of seat turn % 3 alone is ACTIVE, the others INACTIVE"
                )
    return None


# The tiles (type, red) there are: 4 of each type, one red copy of each bamboo, 4 red dragons.
_RED_TILES = np.array([1] * 9 + [0, 4], dtype=np.int64)


def _ids(kind, red):
    """The tile ids of type ``kind`` that are red (or plain)."""
    return [4 * kind + c for c in range(4) if is_red(4 * kind + c) == red]


def redraw_hidden(records, config, agent, rng):
    """What ``agent`` cannot see drawn again, in place: the other seats' hands and the wall
    still to draw (the dora's type kept), dealt uniformly from the tiles that are neither in
    ``agent``'s hand nor discarded (the protocol's hidden-information part)."""
    for record in np.atleast_1d(records):
        seat = int(np.flatnonzero(record["seats"] == agent)[0])
        draw = int(record["draw"])
        hands, reds = record["hands"], record["reds"]
        rivers, red_rivers = record["rivers"], record["red_rivers"]
        # The unseen tiles, by type, and how many of each type are red.
        unseen = np.full(TYPES, 4, dtype=np.int64) - hands[seat]
        unseen_red = _RED_TILES - reds[seat]
        for s in range(PLAYERS):
            for j in range(RIVER):
                if rivers[s, j] >= 0:
                    unseen[rivers[s, j]] -= 1
                    unseen_red[rivers[s, j]] -= red_rivers[s, j]
        unseen_red = np.clip(unseen_red, 0, unseen)
        # The dora tile keeps its type; which copy it is, is unseen.
        dora = int(record["dora"])
        pool = []
        for t in range(TYPES):
            pool += [(t, 1)] * int(unseen_red[t]) + [(t, 0)] * int(unseen[t] - unseen_red[t])
        dora_tiles = [k for k, (t, _) in enumerate(pool) if t == dora]
        dora_tile = pool.pop(dora_tiles[int(rng.integers(len(dora_tiles)))])
        order = rng.permutation(len(pool))
        pool = [pool[k] for k in order]
        for s in range(PLAYERS):
            if s == seat:
                continue
            size = int(hands[s].sum())
            hands[s], reds[s] = 0, 0
            for t, red in pool[:size]:
                hands[s, t] += 1
                reds[s, t] += red
            pool = pool[size:]
        # The wall still to draw, then the dora tile, as ids; the drawn slots hold the rest.
        left = {(t, red): _ids(t, red) for t in range(TYPES) for red in (False, True)}
        rest = []
        for t, red in pool + [dora_tile]:
            rest.append(left[(t, bool(red))].pop())
        used = set(rest)
        record["wall"][draw:] = rest
        record["wall"][:draw] = [i for i in range(TILES) if i not in used]


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def red_tile(tile):
    return (tile % 4 == 0 and tile != 4 * GREEN) or tile >= 4 * RED_DRAGON


@nb.njit(cache=True, error_model="numpy")
def hand_points(s, seat, extra):
    """Seat ``seat``'s hand, with a tile of type ``extra`` added (NO_TILE: none): -1 if it is
    no winning hand, else its points as Pgx counts them (base, yaku, doras and red tiles)."""
    code = 0
    for t in range(TYPES):
        code += (s.hands[seat, t] + (1 if t == extra else 0)) * POWERS[t]
    low, high = 0, WIN_CODES.shape[0]  # a binary search of the sorted codes
    while low < high:
        middle = (low + high) // 2
        if WIN_CODES[middle] < code:
            low = middle + 1
        else:
            high = middle
    k = low
    if k >= WIN_CODES.shape[0] or WIN_CODES[k] != code:
        return -1
    yaku = YAKU_POINTS[k]
    red = 0
    for t in range(TYPES):
        red += s.reds[seat, t]
    if red >= 6:
        yaku = 20
    if yaku >= 10:  # a limit hand: no doras
        return BASE_POINTS[k] + yaku
    doras = s.hands[seat, s.dora] + (1 if extra == s.dora else 0)
    return BASE_POINTS[k] + yaku + doras + red


@nb.njit(cache=True, error_model="numpy")
def deal(s):
    """Seats and wall shuffled from the episode's stream, five tiles a seat, the dealer's draw."""
    for k in range(PLAYERS):
        s.seats[k] = k
    for k in range(PLAYERS - 1, 0, -1):
        j = integer(s, k + 1)
        s.seats[k], s.seats[j] = s.seats[j], s.seats[k]
    for k in range(TILES):
        s.wall[k] = k
    for k in range(TILES - 1, 0, -1):
        j = integer(s, k + 1)
        s.wall[k], s.wall[j] = s.wall[j], s.wall[k]
    for seat in range(PLAYERS):
        for t in range(TYPES):
            s.hands[seat, t] = 0
            s.reds[seat, t] = 0
        for j in range(RIVER):
            s.rivers[seat, j] = NO_TILE
            s.red_rivers[seat, j] = 0
        s.scores[seat] = 0
    for k in range(FIRST_DRAW):
        tile = s.wall[k]
        s.hands[k // HAND, tile // 4] += 1
        if red_tile(tile):
            s.reds[k // HAND, tile // 4] += 1
    s.hands[0, s.wall[FIRST_DRAW] // 4] += 1  # Pgx counts no red tile in this draw
    s.draw = FIRST_DRAW + 1
    s.turn = 0
    s.last = NO_TILE
    s.dora = s.wall[LAST] // 4


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    deal(s)
    while hand_points(s, 0, NO_TILE) >= 0:  # tenhou: Pgx shuffles again
        deal(s)
    for k in range(PLAYERS):
        s.status[k] = INACTIVE
        s.reward[k] = 0.0
    s.status[s.seats[0]] = ACTIVE


@nb.njit(cache=True, error_model="numpy", inline="always")
def finish_with(s):
    """The scores become the agents' rewards (points over 26 in float32, as Pgx's); the game is
    over."""
    for seat in range(PLAYERS):
        agent = s.seats[seat]
        s.reward[agent] = np.float32(s.scores[seat]) * SCALE
        s.status[agent] = DONE


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a < 0:
        return end_step(s, cfg, rewards)
    seat = s.turn % PLAYERS
    tile = actions[a]
    if tile < 0 or tile >= TYPES or s.hands[seat, tile] <= 0:
        for k in range(PLAYERS):  # Pgx: an illegal action loses 1, the others win 2
            s.status[k] = DONE
            s.reward[k] = PLAYERS - 1.0
        s.status[a] = INVALID
        s.reward[a] = -1.0
        return end_step(s, cfg, rewards)
    s.hands[seat, tile] -= 1
    red = s.hands[seat, tile] < s.reds[seat, tile]  # a red one goes only when no plain one is left
    if red:
        s.reds[seat, tile] -= 1
    s.rivers[seat, s.turn // PLAYERS] = tile
    s.red_rivers[seat, s.turn // PLAYERS] = red
    s.last = tile
    # A win on the discard (ron), for every other seat it completes.
    total = 0
    for other in range(PLAYERS):
        points = 0
        if other != seat:
            furiten = False
            for j in range(RIVER):
                if s.rivers[other, j] == tile:
                    furiten = True
            if not furiten:
                points = hand_points(s, other, tile)
                if points < 5:  # no win, or too few points (the dealer's 2 not counted)
                    points = 0
                elif other == 0:
                    points += 2  # the dealer's
        s.scores[other] = points
        total += points
    if total > 0:
        s.scores[seat] = -total
        finish_with(s)
        return end_step(s, cfg, rewards)
    if s.draw >= LAST:  # the wall is spent: a draw
        finish_with(s)
        return end_step(s, cfg, rewards)
    # The next seat draws.
    s.turn += 1
    seat = s.turn % PLAYERS
    drawn = s.wall[s.draw]
    s.hands[seat, drawn // 4] += 1
    if red_tile(drawn):
        s.reds[seat, drawn // 4] += 1
    s.draw += 1
    s.status[a] = INACTIVE
    s.status[s.seats[seat]] = ACTIVE
    # A win on the draw (tsumo): Pgx reads the hand at index turn, clamped to the last seat.
    reads = min(s.turn, PLAYERS - 1)
    points = hand_points(s, reads, NO_TILE)
    if points >= 0:
        if reads == 0:
            points += 2
        each = (points + PLAYERS - 2) // (PLAYERS - 1)
        for other in range(PLAYERS):
            s.scores[other] = -each
        s.scores[seat] = each * (PLAYERS - 1)
        finish_with(s)
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy", inline="always")
def river_types(features, s, seat, row):
    for j in range(RIVER):
        if s.rivers[seat, j] >= 0:
            features[s.rivers[seat, j], row] = True


@nb.njit(cache=True, error_model="numpy", inline="always")
def recent(features, s, seat, row):
    """Seat ``seat``'s last three discards, the latest first, one-hot in rows row..row+2."""
    count = 0
    for j in range(RIVER):
        if s.rivers[seat, j] >= 0:
            count += 1
    for back in range(3):
        if count - 1 - back >= 0:
            features[s.rivers[seat, count - 1 - back], row + back] = True


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    running = any_active(s)
    moving = s.seats[s.turn % PLAYERS]
    for seat in range(PLAYERS):
        k = s.seats[seat]
        for t in range(TYPES):  # element by element: CUDA has no array slices' copies
            obs[0][i, k, t] = s.hands[seat, t]
        obs[1][i, k] = seat
        obs[2][i, k] = k + 1
        for t in range(TYPES):
            obs[6][i, k, t] = running and k == moving and s.hands[seat, t] > 0
        # Pgx's observation of agent k: (11 types, 15 rows).
        features = obs[7][i, k]
        for t in range(TYPES):
            for f in range(FEATURES):
                features[t, f] = False
            for c in range(4):
                features[t, c] = s.hands[seat, t] > c
            features[t, 4] = s.reds[seat, t] > 0
        features[s.dora, 5] = True
        for ahead in range(PLAYERS):
            river_types(features, s, (seat + ahead) % PLAYERS, 6 + ahead)
        recent(features, s, (seat + 1) % PLAYERS, 9)
        recent(features, s, (seat + 2) % PLAYERS, 12)
    obs[3][i] = s.dora
    for seat in range(PLAYERS):
        for j in range(RIVER):
            obs[4][i, seat, j] = s.rivers[seat, j]
    obs[5][i] = to_move(s)
