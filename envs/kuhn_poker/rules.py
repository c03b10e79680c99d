"""Kuhn poker over one episode's record, with Pgx's rules and actions (``kuhn_poker``).

Three cards, 0 (J), 1 (Q) and 2 (K); each agent holds one, drawn in ``reset`` from the episode's
own stream as Pgx draws its deal: one of the six ordered pairs, uniformly. Agent 0 is Pgx's
``current_player`` at ``init`` (Pgx draws which player id that is; the game does not depend on
it). Actions are Pgx's: 0 bets (one chip beyond the ante, or a call of a bet), 1 passes (a check,
or a fold facing a bet). Statuses and rewards are kaggle-environments' (``kernels/turns``); an
action outside 0-1 makes its agent INVALID and the other wins (+1), as Pgx rules an illegal one.

Hidden information: an agent observes its own card, never the other's (``observe`` writes each
agent's row from its own card and the public bets only); ``redraw_hidden`` draws again what one
agent cannot see, the other's card.
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
    begin_rewards,
    end_step,
    mover,
)

BET = 0
PASS = 1
NO_ACTION = -1
CARDS = 3
# Pgx's deals: the ordered pairs (first player's card, second's), drawn uniformly.
DEALS = np.array([[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]], dtype=np.int8)

FIELDS = [
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("cards", np.int8, (2,)),  # each agent's card
    ("pot", np.int8, (2,)),  # the chips each agent bet beyond its ante (Pgx's _pot)
    ("last", np.int8),  # the last action, NO_ACTION before the first (Pgx's _last_action)
]

STATE_BOUNDS = {
    "status": (0, 5),
    "reward": (-2, 2),
    "cards": (0, CARDS - 1),
    "pot": (0, 1),
    "last": (NO_ACTION, PASS),
}

REWARDS = (-2.0, -1.0, 0.0, 1.0, 2.0)


def check_state(records, config):
    """Two different cards, and bets and a last action that some betting gives."""
    records = np.atleast_1d(records)
    cards = records["cards"]
    if (cards[:, 0] == cards[:, 1]).any():
        return "invalid state: the two agents' cards must differ"
    if not np.isin(records["reward"], REWARDS).all():
        return f"state field 'reward' must be one of {list(REWARDS)}"
    last, pot = records["last"], records["pot"].astype(np.int64)
    if ((last == NO_ACTION) & (pot.sum(axis=1) > 0)).any():
        return "invalid state: no bet comes before the first action"
    return None


def redraw_hidden(records, config, agent, rng):
    """What ``agent`` cannot see drawn again, in place: the other agent's card, uniformly among
    the two cards ``agent`` does not hold (the protocol's hidden-information part)."""
    for record in np.atleast_1d(records):
        own = int(record["cards"][agent])
        others = [c for c in range(CARDS) if c != own]
        record["cards"][1 - agent] = others[int(rng.integers(len(others)))]


def position(record, config, given):
    """A position from both agents' cards (``card``, one per agent), the bets (``chips``), the
    marks and statuses: the betting goes on from there as from the last action that leaves those
    bets (a bet where one agent bet alone, else a pass where it is agent 1's turn)."""
    cards = np.asarray(observed(given, "card", np.array([0, 1])), dtype=np.int64)
    if cards[0] == cards[1]:
        raise PositionError("observation.card", "the two agents' cards must differ")
    require_marks(observed(given, "mark", np.array([1, 2])), (1, 2))
    pot = np.asarray(observed(given, "chips", np.zeros(2, dtype=np.int64)), dtype=np.int64)
    write_turns(record, given, (ACTIVE, INACTIVE))
    status = record["status"]
    record["cards"] = cards
    record["pot"] = pot
    turn = given["observation"].get("turn")
    expected = 1 if status[0] == ACTIVE else 2 if status[1] == ACTIVE else 0
    if turn is not None and int(turn) != expected:
        raise PositionError("observation.turn", f"is {int(turn)}; the statuses say {expected}")
    if pot.sum() == 2:
        raise PositionError("observation.chips", "two bets end the game")
    if pot.sum() == 1:
        record["last"] = BET
        bettor = int(np.flatnonzero(pot)[0])
        if status[bettor] == ACTIVE:
            raise PositionError("status", "the agent that bet last is not the one to act")
    elif status[1] == ACTIVE:
        record["last"] = PASS
    else:
        record["last"] = NO_ACTION


# ---- the kernels ------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    deal = integer(s, DEALS.shape[0])
    s.cards[0] = DEALS[deal, 0]
    s.cards[1] = DEALS[deal, 1]
    s.pot[0] = 0
    s.pot[1] = 0
    s.last = NO_ACTION
    s.status[0] = ACTIVE
    s.status[1] = INACTIVE
    s.reward[0] = 0.0
    s.reward[1] = 0.0


# The betting as tables over (the last action + 1, this action): a random player's actions are coin
# flips, so a branch on them is mispredicted half the time, which cost more than the rest of a
# ply; the step reads its outcome from these instead. Rows: no action yet, a bet, a pass.
ENDS = np.array([[0, 0], [1, 1], [0, 1]], dtype=np.int8)  # a call, a fold, two passes end it
STAKES = np.array([[0, 0], [2, 1], [0, 1]], dtype=np.int8)  # a call: 2; a fold or two passes: 1
FOLDS = np.array([[0, 0], [0, 1], [0, 0]], dtype=np.int8)  # a pass facing a bet


@nb.njit(cache=True, error_model="numpy", inline="always")
def turn_of(s):
    """``to_move``'s mark (1 or 2, 0 when the statuses are not one ACTIVE and one INACTIVE),
    without a branch on which agent it is."""
    first = (s.status[0] == ACTIVE) & (s.status[1] == INACTIVE)
    second = (s.status[0] == INACTIVE) & (s.status[1] == ACTIVE)
    return np.int64(first) + 2 * np.int64(second)


@nb.njit(cache=True, error_model="numpy", inline="always")
def bet(s, a, action):
    """Agent ``a`` bets or passes (``action`` is BET or PASS): the betting goes on, or ends in a
    fold or a showdown."""
    row = s.last + 1
    over = ENDS[row, action] != 0
    # A fold: the bettor (the other agent) wins; a showdown: the higher card.
    winner = 1 - a if FOLDS[row, action] != 0 else np.int64(s.cards[0] < s.cards[1])
    loser = 1 - winner
    stake = np.float64(STAKES[row, action])
    s.pot[a] += action == BET
    s.reward[winner] = stake if over else s.reward[winner]
    s.reward[loser] = 0.0 - stake if over else s.reward[loser]
    s.status[a] = DONE if over else INACTIVE
    s.status[1 - a] = DONE if over else ACTIVE
    s.last = s.last if over else action


@nb.njit(cache=True, error_model="numpy")
def irregular_step(s, cfg, actions, rewards):
    """``step`` where its agent is not one ACTIVE agent facing one INACTIVE (statuses no betting
    leaves, from a record set so: Kaggle's rule applies), or plays an action outside 0-1 (Pgx:
    an illegal action loses, the other wins)."""
    a = turn_of(s) - 1
    if a < 0:
        a = mover(s)
    if a >= 0:
        action = actions[a]
        if action != BET and action != PASS:
            s.status[a] = INVALID
            s.status[1 - a] = DONE
            s.reward[1 - a] = 1.0
        else:
            bet(s, a, action)
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy", inline="always")
def step(s, cfg, actions, rewards):
    # Inline: a call's twenty arguments cost a tenth of a ply. The rare cases stay apart (a call
    # of their own), so that what is inlined is the betting alone.
    begin_rewards(s, rewards)
    a = turn_of(s) - 1
    if a < 0 or (actions[max(a, 0)] != BET and actions[max(a, 0)] != PASS):
        return irregular_step(s, cfg, actions, rewards)
    bet(s, a, actions[a])
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    """Each agent's card and mark (its card one-hot in its features), then what ``observe_step``
    writes."""
    for k in range(2):
        # Read once: a write into ``obs`` might be one into the record, as far as the compiler
        # knows, so a field read after one is read again.
        own = s.cards[k]
        obs[0][i, k] = own  # agent k's row: its own card only
        obs[1][i, k] = k + 1
        features = obs[5][i, k]
        for card in range(CARDS):
            features[card] = card == own
    observe_step(s, cfg, obs, i)


@nb.njit(cache=True, error_model="numpy")
def observe_step(s, cfg, obs, i):
    """``observe`` after a step: the bets, the turn and the legal actions may have changed (the
    cards and the marks stay as ``observe`` wrote them at the deal)."""
    turn = turn_of(s)
    running = (s.status[0] == ACTIVE) | (s.status[1] == ACTIVE)
    pot = (s.pot[0], s.pot[1])  # read once (see ``observe``)
    for k in range(2):
        own = pot[k]
        other = pot[1 - k]
        obs[2][i, k] = own
        obs[4][i, k] = running
        features = obs[5][i, k]
        features[3] = own == 0
        features[4] = own == 1
        features[5] = other == 0
        features[6] = other == 1
    obs[3][i] = turn
