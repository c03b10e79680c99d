"""Bridge bidding over one episode's record, with Pgx's rules, actions and observation
(``bridge_bidding``).

Four agents, Pgx's player ids 0 to 3, sit at the seats N, E, S, W (0 to 3) as Pgx shuffles them:
players 0 and 1 are partners, so are 2 and 3, and which side sits N-S and each side's order are
coin flips. ``reset`` draws from the episode's own stream, in order: the deal (an index into the
deal table, ``table.py``: the cards of each seat and their double-dummy tricks), whether N-S and
E-W are vulnerable, the dealer's seat, then the seating. The dealer calls first, then clockwise.

Actions are Pgx's: 0 pass, 1 double, 2 redouble, 3 + b the bid b (level b // 5 + 1, denomination
b % 5: clubs, diamonds, hearts, spades, no trump). A bid must outrank the last one; a double is
an opponent's of an undoubled bid, a redouble a partner's of the doubled one. Four passes at the
start end the game without score (0 each); after a bid, three passes do, and the contract (the
last bid, doubled or redoubled, played by the side's player who first named its denomination)
scores by duplicate bridge's table, as Pgx computes it, from the declarer's double-dummy tricks:
the declarer's side gets the score, the other side its negation. An illegal action ends the game:
its agent is INVALID with Pgx's penalty -7600 and the three others get +22800, as Pgx rules it;
the record is changed by the action as Pgx's state is, so the final observation is Pgx's too.
Statuses are Kaggle's; Kaggle's ``episodeSteps`` (1000 by default, past the longest auction, 319
calls) stops an auction where it stands, without score.

Each agent observes Pgx's 480 bits of it (``features``): vulnerability (as Pgx writes it, from
the side of the player to call), the auction relative to the observer, its own 13 cards. Hidden
information: an agent never sees the others' cards; ``redraw_hidden`` deals them again.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer
from vecenv.kernels.turns import ACTIVE, DONE, INACTIVE, INVALID, failed, finish

from . import table

PASS = 0
DOUBLE = 1
REDOUBLE = 2
BID = 3  # the first bid's action (1 club)
ACTIONS = 38
BIDS = 35
SEATS = 4
CARDS = 52
MAX_CALLS = 319  # the longest auction
FEATURES = 480
HISTORY = 4  # where the auction starts in the features
HAND = 428  # where the observer's cards start
PENALTY = -7600.0  # Pgx's illegal-action penalty; the other three get -3 times it

_KEYS, _VALUES = table.load()
if table.digest() != table.SHIPPED_SHA256:
    raise RuntimeError(
        f"{table.SHIPPED} is not the table the kernels were written for: update "
        "table.SHIPPED_SHA256 with it (the compiled kernels hold the deals as constants)"
    )
OWNERS = table.keys_to_owners(_KEYS)  # (deals, 52): the seat holding each card
TRICKS = table.values_to_tricks(_VALUES)  # (deals, 20): tricks as [seat * 5 + denomination]
DEALS = len(OWNERS)
# Pgx's card c (suit c // 13 from spades, rank c % 13 from the ace) as OpenSpiel numbers it in the
# observation: suit from clubs, rank from the two.
OPEN_SPIEL_CARD = np.array(
    [(3 - c // 13) + ((c % 13 - 1) % 13) * 4 for c in range(CARDS)], dtype=np.int16
)

FIELDS = [
    ("status", np.int8, (SEATS,)),
    ("reward", np.float64, (SEATS,)),
    ("deal", np.int32),  # the deal's row in the table
    ("owners", np.int8, (CARDS,)),  # the seat holding each card
    ("tricks", np.int8, (table.TRICKS,)),  # double-dummy tricks, [seat * 5 + denomination]
    ("seats", np.int8, (SEATS,)),  # the player at N, E, S, W (Pgx's _shuffled_players)
    ("dealer", np.int8),  # the dealer's seat
    ("vul", np.int8, (2,)),  # N-S, E-W vulnerable
    ("calls", np.int8, (MAX_CALLS,)),  # the auction's actions, -1 past its end
    ("turn", np.int16),  # Pgx's _turn: calls made, the ending pass not counted
    ("current", np.int8),  # Pgx's current_player
    ("last_bid", np.int8),  # the last bid (0..34), -1 before any
    ("last_bidder", np.int8),  # its player, -1 before any
    ("doubled", np.int8),  # Pgx's _call_x
    ("redoubled", np.int8),  # Pgx's _call_xx
    ("first", np.int8, (2, 5)),  # per side (N-S, E-W), the player first naming each denomination
    ("passes", np.int8),  # passes in a row
]

STATE_BOUNDS = {
    "status": (0, 5),
    "deal": (-1, DEALS - 1),
    "owners": (0, SEATS - 1),
    "tricks": (0, 13),
    "seats": (0, SEATS - 1),
    "dealer": (0, SEATS - 1),
    "vul": (0, 1),
    "calls": (-1, ACTIONS - 1),
    "turn": (0, MAX_CALLS - 1),
    "current": (0, SEATS - 1),
    "last_bid": (-1, BIDS - 1),
    "last_bidder": (-1, SEATS - 1),
    "doubled": (0, 1),
    "redoubled": (0, 1),
    "first": (-1, SEATS - 1),
    "passes": (0, 4),
}


def check_state(records, config):
    """Thirteen cards to each seat, the seats a permutation of the players."""
    records = np.atleast_1d(records)
    for seat in range(SEATS):
        if ((records["owners"] == seat).sum(axis=1) != 13).any():
            return "invalid state: each seat holds 13 cards"
    if (np.sort(records["seats"], axis=1) != np.arange(SEATS)).any():
        return "invalid state: seats must hold each player 0..3 once"
    bid = records["last_bid"] >= 0
    if (bid != (records["last_bidder"] >= 0)).any():
        return "invalid state: last_bid and last_bidder are both set or both -1"
    rows = np.flatnonzero(bid)
    bidder = records["last_bidder"][rows].astype(np.int64)
    side = (records["seats"][rows] == bidder[:, None]).argmax(axis=1) % 2
    if (records["first"][rows, side, records["last_bid"][rows] % 5] < 0).any():
        return "invalid state: the last bid's side has not named its denomination in first"
    active = records["status"] == ACTIVE
    current = active[np.arange(len(records)), records["current"]]
    if ((active.sum(axis=1) > 1) | (active.any(axis=1) & ~current)).any():
        return "invalid state: only the current player may be ACTIVE"
    return None


def redraw_hidden(records, config, agent, rng):
    """What ``agent`` cannot see drawn again, in place: the other three seats' cards, dealt
    uniformly among the 39 cards it does not hold (the protocol's hidden-information part). The
    double-dummy tricks stay the table's: a redrawn record is what the agent cannot tell from the
    dealt one, not a deal of the table."""
    for record in np.atleast_1d(records):
        own = int(np.flatnonzero(record["seats"] == agent)[0])
        others = np.flatnonzero(record["owners"] != own)
        seats = np.repeat([s for s in range(SEATS) if s != own], 13)
        record["owners"][others] = rng.permutation(seats)
        record["deal"] = -1


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def seat_of(s, player):
    """The seat (0 N .. 3 W) of ``player``."""
    for seat in range(SEATS):
        if s.seats[seat] == player:
            return seat
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def partners(seat1, seat2):
    return (seat1 - seat2) % 2 == 0


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    d = integer(s, DEALS)
    s.deal = d
    for c in range(CARDS):
        s.owners[c] = OWNERS[d, c]
    for t in range(table.TRICKS):
        s.tricks[t] = TRICKS[d, t]
    s.vul[0] = integer(s, 2)
    s.vul[1] = integer(s, 2)
    s.dealer = integer(s, SEATS)
    a = integer(s, 2)  # players 0 and 1 in this order (0) or the other
    b = integer(s, 2)  # players 2 and 3
    if integer(s, 2):  # players 0 and 1 sit N-S
        s.seats[0], s.seats[1], s.seats[2], s.seats[3] = a, 2 + b, 1 - a, 3 - b
    else:
        s.seats[0], s.seats[1], s.seats[2], s.seats[3] = 2 + b, a, 3 - b, 1 - a
    for t in range(MAX_CALLS):
        s.calls[t] = -1
    s.turn = 0
    s.current = s.seats[s.dealer]
    s.last_bid = -1
    s.last_bidder = -1
    s.doubled = 0
    s.redoubled = 0
    for side in range(2):
        for d in range(5):
            s.first[side, d] = -1
    s.passes = 0
    for k in range(SEATS):
        s.status[k] = INACTIVE
        s.reward[k] = 0.0
    s.status[s.current] = ACTIVE


@nb.njit(cache=True, error_model="numpy", inline="always")
def is_legal(s, action):
    """Pgx's legal actions for the player to call: pass always, a bid above the last, a double
    of an opponent's undoubled bid, a redouble of a partner's doubled one."""
    if action == PASS:
        return True
    if action >= BID:
        return action - BID > s.last_bid
    if s.last_bidder < 0 or s.redoubled:
        return False
    ours = partners(seat_of(s, s.last_bidder), seat_of(s, s.current))
    if action == DOUBLE:
        return not s.doubled and not ours
    return s.doubled and ours


@nb.njit(cache=True, error_model="numpy")
def score(s):
    """The declarer side's duplicate score of the contract, as Pgx's ``_make_reward`` computes
    it from the declarer's double-dummy tricks."""
    last_bid = np.int64(s.last_bid)  # wide arithmetic, as numba's, in pure Python too
    denomination = last_bid % 5
    level = last_bid // 5 + 1
    side = seat_of(s, s.last_bidder) % 2
    declarer = seat_of(s, s.first[side, denomination])
    vul = s.vul[side] != 0
    tricks = np.int64(s.tricks[declarer * 5 + denomination])
    x, xx = s.doubled != 0, s.redoubled != 0
    if level + 6 > tricks:
        down = level + 6 - tricks
        if not (x or xx):
            return -(100.0 if vul else 50.0) * down
        if vul:
            lost = 200.0 + 300.0 * (down - 1)
        else:
            lost = 100.0 + 200.0 * min(down - 1, 2) + 300.0 * max(down - 3, 0)
        return -lost * (2.0 if xx else 1.0)
    per = 20.0 if denomination < 2 else 30.0
    points = per * level + (10.0 if denomination == 4 else 0.0)
    points *= 4.0 if xx else 2.0 if x else 1.0
    total = points + 50.0  # the making bonus
    if points >= 100.0:
        total += 450.0 if vul else 250.0
    if level >= 6:
        total += 750.0 if vul else 500.0
    if level == 7:
        total += 750.0 if vul else 500.0
    over = per
    if xx:
        total += 100.0
        over = 400.0 if vul else 200.0
    elif x:
        total += 50.0
        over = 200.0 if vul else 100.0
    return total + over * (tricks - level - 6)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _ended(s):
    return (s.last_bid < 0 and s.passes == 4) or (s.last_bid >= 0 and s.passes == 3)


@nb.njit(cache=True, error_model="numpy")
def _call(s, action):
    """The action's changes to the auction, legal or not, as Pgx's ``_step`` makes them; returns
    whether it ended the auction."""
    s.calls[s.turn] = action
    if action == PASS:
        s.passes += 1
        if _ended(s):
            return True
    elif action == DOUBLE:
        s.doubled = 1
        s.passes = 0
    elif action == REDOUBLE:
        s.redoubled = 1
        s.passes = 0
    else:
        bid = action - BID
        s.last_bid = bid
        s.last_bidder = s.current
        side = seat_of(s, s.current) % 2
        if s.first[side, bid % 5] < 0:
            s.first[side, bid % 5] = s.current
        s.doubled = 0
        s.redoubled = 0
        s.passes = 0
    s.current = s.seats[(s.dealer + s.turn + 1) % SEATS]
    s.turn += 1
    return False


@nb.njit(cache=True, error_model="numpy")
def _penalise(s, a):
    """Agent ``a`` made an illegal move (or its face marked it failed): Pgx's penalty."""
    for k in range(SEATS):
        s.reward[k] = -PENALTY * (SEATS - 1)
        if not failed(s.status[k]):
            s.status[k] = DONE
    s.reward[a] = PENALTY
    if not failed(s.status[a]):
        s.status[a] = INVALID


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    for k in range(SEATS):
        rewards[k] = -s.reward[k]
    a = s.current
    offender = -1
    for k in range(SEATS):  # a face marked an agent ERROR, INVALID or TIMEOUT
        if failed(s.status[k]):
            offender = k
    if offender >= 0:
        _penalise(s, offender)
    elif s.status[a] == ACTIVE:
        action = actions[a]
        legal = is_legal(s, action)
        ended = _call(s, action)
        if not legal:
            _penalise(s, a)
        elif ended:
            if s.last_bid >= 0:
                points = score(s)
                declarer = seat_of(s, s.last_bidder)
                for k in range(SEATS):
                    ours = partners(seat_of(s, k), declarer)
                    s.reward[k] = points if ours else -points
            for k in range(SEATS):
                s.status[k] = DONE
        else:
            s.status[a] = INACTIVE
            s.status[s.current] = ACTIVE
    if s.step + 1 >= cfg.episodeSteps - 1:
        finish(s)  # Kaggle's time limit (episodeSteps): the auction stops where it stands
    running = False
    for k in range(SEATS):
        rewards[k] += s.reward[k]
        running |= s.status[k] == ACTIVE
    return 0 if running else 1


@nb.njit(cache=True, error_model="numpy", inline="always")
def _features(s, seat, out):
    """Pgx's observation of the player at ``seat`` into ``out`` (480 bools)."""
    for f in range(FEATURES):
        out[f] = False
    mine = s.vul[seat_of(s, s.current) % 2] != 0  # Pgx: the side of the player to call
    theirs = s.vul[1 - seat_of(s, s.current) % 2] != 0
    out[0] = not mine
    out[1] = mine
    out[2] = not theirs
    out[3] = theirs
    # The auction, 424 bits: the passes before the first bid by relative seat (4), then per bid
    # (35) who bid it, doubled it, redoubled it (12), each relative to the observer.
    last = 0  # the last bid's action, 0 before any
    dealer = np.int64(s.dealer)  # int8 fields widened: their products pass 127
    for t in range(s.turn):
        action = np.int64(s.calls[t])
        relative = ((t + dealer) % SEATS + SEATS - seat) % SEATS
        if action >= BID:
            last = action
            out[HISTORY + 4 + (action - BID) * 12 + relative] = True
        elif action == PASS:
            if last == 0:
                out[HISTORY + relative] = True
        else:
            f = 4 + (last - BID) * 12 + 4 * action + relative
            # An illegal double before any bid: Pgx's negative index wraps, as numpy's does.
            out[HISTORY + f + (HAND - HISTORY if f < 0 else 0)] = True
    for c in range(CARDS):
        if s.owners[c] == seat:
            out[HAND + OPEN_SPIEL_CARD[c]] = True


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    running = False
    for k in range(SEATS):
        running |= s.status[k] == ACTIVE
    obs[1][i] = s.current + 1 if running else 0
    for k in range(SEATS):
        seat = seat_of(s, k)
        for c in range(CARDS):
            obs[0][i, k, c] = s.owners[c] == seat
        obs[2][i, k] = k + 1
        _features(s, seat, obs[4][i, k])
    legal = obs[3][i]
    for action in range(ACTIONS):
        legal[action] = running and is_legal(s, action)


@nb.njit(cache=True, error_model="numpy")
def observe_step(s, cfg, obs, i):
    """``observe`` after a step: where the call went on with the auction, the turn, the legal
    calls, each agent's vulnerability bits (they follow the player to call) and the call's own
    bit; else (the auction is over) the whole observation."""
    if s.status[s.current] != ACTIVE:
        observe(s, cfg, obs, i)
        return
    obs[1][i] = s.current + 1
    t = np.int64(s.turn) - 1
    action = np.int64(s.calls[t])  # int8 fields widened: their products pass 127
    last_bid = np.int64(s.last_bid)
    caller = (t + s.dealer) % SEATS
    mine = s.vul[seat_of(s, s.current) % 2] != 0
    theirs = s.vul[1 - seat_of(s, s.current) % 2] != 0
    for k in range(SEATS):
        out = obs[4][i, k]
        out[0] = not mine
        out[1] = mine
        out[2] = not theirs
        out[3] = theirs
        relative = (caller + SEATS - seat_of(s, k)) % SEATS
        if action >= BID:
            out[HISTORY + 4 + (action - BID) * 12 + relative] = True
        elif action == PASS:
            if s.last_bid < 0:
                out[HISTORY + relative] = True
        else:  # a legal double or redouble: of the last bid
            out[HISTORY + 4 + last_bid * 12 + 4 * action + relative] = True
    legal = obs[3][i]
    for a in range(ACTIONS):
        legal[a] = is_legal(s, a)
