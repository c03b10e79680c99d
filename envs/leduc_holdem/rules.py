"""Leduc hold'em over one episode's record, with Pgx's rules and actions (``leduc_holdem``).

Six cards, two each of 0 (J), 1 (Q) and 2 (K). ``reset`` deals from the episode's own stream as
Pgx deals: a uniformly shuffled deck's first three cards are agent 0's, agent 1's and the public
card. Agent 0 is Pgx's first player (``current_player`` at ``init``, who also opens the second
round; Pgx draws which player id that is, the game does not depend on it). Actions are Pgx's: 0
calls (or checks), 1 raises, 2 folds. Pgx's bookkeeping is kept as Pgx keeps it: the round
counter goes to 1 when the first round ends (by a call, or by a fold, which ends the game) and to
2 when the second does; Pgx's observation shows the public card while it is 1. Statuses and
rewards are kaggle-environments' (``kernels/turns``); an illegal action makes its agent INVALID and
the other wins (+1), as Pgx rules it.

Hidden information: an agent observes its own card and the public card once the first round is
over, never the other agent's card; ``redraw_hidden`` draws again what one agent cannot see.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, require_marks, write_turns
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

CALL = 0
RAISE = 1
FOLD = 2
NO_ACTION = -1
RANKS = 3
MAX_RAISES = 2
FEATURES = 34
HIDDEN = -1  # the public card's observed value before it is shown

FIELDS = [
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("cards", np.int8, (2,)),  # each agent's card
    ("public", np.int8),  # the public card, dealt at the start, shown from round 1 on
    ("chips", np.int8, (2,)),  # the chips each agent bet, its ante included
    (
        "street",
        np.int8,
    ),  # the betting round, Pgx's _round: 0, 1, 2 once over (not "round": numpy's)
    ("raises", np.int8),  # raises in this round
    ("last", np.int8),  # the last action of this round, NO_ACTION at its start
]

STATE_BOUNDS = {
    "status": (0, 5),
    "reward": (-13, 13),
    "cards": (0, RANKS - 1),
    "public": (0, RANKS - 1),
    "chips": (1, 13),
    "street": (0, 2),
    "raises": (0, MAX_RAISES),
    "last": (NO_ACTION, RAISE),
}

REWARDS = tuple(float(v) for v in range(-13, 14) if v % 2 or v == 0)


def check_state(records, config):
    """No rank dealt three times, rewards in the spec's enum, chips a betting can reach."""
    records = np.atleast_1d(records)
    dealt = np.concatenate([records["cards"], records["public"][:, None]], axis=1)
    for rank in range(RANKS):
        if ((dealt == rank).sum(axis=1) > 2).any():
            return "invalid state: the deck holds two cards of each rank, not three"
    if not np.isin(records["reward"], REWARDS).all():
        return f"state field 'reward' must be one of {list(REWARDS)}"
    if (records["chips"] % 2 == 0).any():
        return "invalid state: chips are the ante and raises of 2 and 4: odd counts"
    return None


def redraw_hidden(records, config, agent, rng):
    """What ``agent`` cannot see drawn again, in place, uniformly among the deals it cannot tell
    apart: the other agent's card, and the public card while the first round goes on (the
    protocol's hidden-information part)."""
    for record in np.atleast_1d(records):
        deck = [0, 0, 1, 1, 2, 2]
        deck.remove(int(record["cards"][agent]))
        if record["street"] >= 1:
            deck.remove(int(record["public"]))
        else:
            record["public"] = deck.pop(int(rng.integers(len(deck))))
        record["cards"][1 - agent] = deck[int(rng.integers(len(deck)))]


def position(record, config, given):
    """A position at the start of a round from both agents' cards (``card``), the public card
    (``public``: given, a second-round position; its own key ``"public"`` beside the observation
    deals it face down in the first), the bets (``chips``, equal at a round's start), marks and
    statuses (agent 0 opens each round)."""
    cards = np.asarray(observed(given, "card", np.array([0, 1])), dtype=np.int64)
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    chips = np.asarray(observed(given, "chips", np.ones(2, dtype=np.int64)), dtype=np.int64)
    if chips[0] != chips[1]:
        raise PositionError("observation.chips", "a round starts with equal bets")
    shown = int(observed(given, "public", HIDDEN))
    dealt = given.get("public", shown)
    if dealt == HIDDEN or dealt is None:
        raise PositionError("public", "a first-round position deals the public card: give it")
    if shown != HIDDEN and int(dealt) != shown:
        raise PositionError("public", "the position's key and its observation differ")
    write_turns(record, given, (ACTIVE, INACTIVE))
    if record["status"][1] == ACTIVE and record["status"][0] == INACTIVE:
        raise PositionError("status", "agent 0 opens each round")
    record["cards"] = cards
    record["public"] = int(dealt)
    record["chips"] = chips
    record["street"] = 0 if shown == HIDDEN else 1
    record["raises"] = 0
    record["last"] = NO_ACTION


POSITION_KEYS = ("public",)


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    # Three of the six cards (card p has rank p // 2) in a uniformly shuffled deck's order: the
    # k-th draw picks among the cards not drawn yet, counted in order.
    first = integer(s, 6)
    second = integer(s, 5)
    second += second >= first
    third = integer(s, 4)
    low, high = min(first, second), max(first, second)
    third += third >= low
    third += third >= high
    s.cards[0] = first // 2
    s.cards[1] = second // 2
    s.public = third // 2
    s.chips[0] = 1
    s.chips[1] = 1
    s.street = 0
    s.raises = 0
    s.last = NO_ACTION
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def is_legal(s, action):
    """Pgx's legal actions: call always, raise below two raises this round, fold facing one."""
    if action == CALL:
        return True
    if action == RAISE:
        return s.raises < MAX_RAISES
    if action == FOLD:
        return s.last == RAISE
    return False


@nb.njit(cache=True, error_model="numpy", inline="always")
def showdown(s, a):
    """The showdown's result for agent ``a`` (the one who called): 1 a win, -1 a loss, 0 a draw
    (a card pairing the public card wins, else the higher card)."""
    mine, theirs = s.cards[a], s.cards[1 - a]
    if mine == theirs:
        return 0.0
    if mine == s.public or (theirs != s.public and mine > theirs):
        return 1.0
    return -1.0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    a = mover(s)
    if a >= 0:
        action = actions[a]
        if not is_legal(s, action):
            s.status[a] = INVALID  # Pgx: an illegal action loses, the other wins
            s.status[1 - a] = DONE
            s.reward[1 - a] = 1.0
            return end_step(s, cfg, rewards)
        if action == CALL:
            s.chips[a] = s.chips[1 - a]
        elif action == RAISE:
            s.chips[a] = max(s.chips[0], s.chips[1]) + 2 * (s.street + 1)
        stake = min(s.chips[0], s.chips[1])
        round_over = action == FOLD or (action == CALL and s.last != NO_ACTION)
        over = action == FOLD or (round_over and s.street == 1)
        if action == FOLD:
            s.reward[a] = -stake
            s.reward[1 - a] = stake
        elif over:
            result = showdown(s, a)
            s.reward[a] = result * stake
            s.reward[1 - a] = -result * stake
        if round_over:
            s.street += 1
            s.raises = 0
            s.last = NO_ACTION
        else:
            s.raises += action == RAISE
            s.last = action
        if over:
            s.status[0] = DONE
            s.status[1] = DONE
        else:
            nxt = 0 if round_over else 1 - a  # agent 0 opens each round
            s.status[nxt] = ACTIVE
            s.status[1 - nxt] = INACTIVE
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    running = any_active(s)
    for k in range(2):
        obs[0][i, k] = s.cards[k]  # agent k's row: its own card only
        obs[2][i, k] = k + 1
        obs[3][i, k] = s.chips[k]
        features = obs[6][i, k]
        for f in range(FEATURES):
            features[f] = False
        features[s.cards[k]] = True
        if s.street == 1:
            features[3 + s.public] = True
        features[6 + s.chips[k]] = True
        features[20 + s.chips[1 - k]] = True
    obs[1][i] = s.public if s.street >= 1 else HIDDEN
    obs[4][i] = to_move(s)
    legal = obs[5][i]
    for action in range(3):
        legal[action] = running and is_legal(s, action)
