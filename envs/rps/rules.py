"""Kaggle's Rock Paper Scissors over one episode's record.

Both agents are ACTIVE at every step and show their signs at once. A record keeps each agent's
Kaggle ``status`` and ``reward`` (``kernels/turns``), the ``sign`` each agent showed in the last
round played (-1 before the first: the opponent's is what an agent observes as
``lastOpponentAction``) and the ``score`` each agent observes (Kaggle's ``observation.reward``: the
running score as of the last round played, kept when the final tie rule zeroes the reward).

A step follows Kaggle's interpreter: an agent that a face marked ERROR, INVALID or TIMEOUT before
the step has no action, and a sign outside [0, signs) is no valid action either. An agent without
a valid action becomes INVALID; if the other's action is valid, the other becomes DONE with reward
1 and the match ends before the round is scored. Otherwise the round is scored; the round that
leaves at most one step to ``episodeSteps`` ends the match, as a tie (both rewards 0) when agent
0's score is smaller in size than ``tieRewardThreshold``.
"""

import numba as nb
import numpy as np

from vecenv.kernels.position import PositionError, observed, write_turns
from vecenv.kernels.turns import (
    ACTIVE,
    DONE,
    INVALID,
    STATUS_NAMES,
    begin_rewards,
    end_step,
    failed,
)

NO_SIGN = -1
# Rewards and scores stay integers a float64 holds exactly.
SCORE_LIMIT = 2**53

FIELDS = [
    ("status", np.int8, (2,)),
    ("reward", np.float64, (2,)),
    ("sign", np.int8, (2,)),
    ("score", np.int64, (2,)),
]

STATE_BOUNDS = {
    "status": (0, 5),
    "reward": (-SCORE_LIMIT, SCORE_LIMIT),
    "sign": (NO_SIGN, 4),
    "score": (-SCORE_LIMIT, SCORE_LIMIT),
}


def check_state(records, config):
    """Signs within the configuration's, and either both agents' signs or neither (the first
    round shows both)."""
    sign = records["sign"]
    if (sign >= config["signs"]).any():
        return f"state field 'sign' must be in [{NO_SIGN}, {config['signs'] - 1}]"
    if ((sign[:, 0] == NO_SIGN) != (sign[:, 1] == NO_SIGN)).any():
        return "state field 'sign' must hold both agents' signs or neither"
    return None


def position(record, config, given):
    """A position from what the agents observe: the signs of the last round (each agent sees
    the other's), the scores shown (Kaggle's ``observation.reward``), and statuses and rewards
    (Kaggle's running rewards, which the next round adds to: the scores are only shown)."""
    seen = observed(given, "lastOpponentAction", np.full(2, NO_SIGN, dtype=np.int8))
    if (seen[0] == NO_SIGN) != (seen[1] == NO_SIGN):
        raise PositionError(
            "observation.lastOpponentAction",
            "must be given for both agents or neither (a round shows both signs)",
            agent=int(np.flatnonzero(seen == NO_SIGN)[0]),
        )
    status = given.get("status", np.array([ACTIVE, ACTIVE]))
    for k in range(2):
        if failed(status[k]) and (status == ACTIVE).any():
            raise PositionError(
                "status",
                f"{STATUS_NAMES[status[k]]} while the match runs: the rules read a failed "
                "status as an agent without a valid sign (Kaggle's rps would score its sign)",
                agent=k,
            )
    record["sign"] = seen[::-1]
    record["score"] = observed(given, "reward", np.zeros(2, dtype=np.int64))
    write_turns(record, given, (ACTIVE, ACTIVE))


@nb.njit(cache=True, error_model="numpy", inline="always")
def get_score(left, right):
    """The round's outcome for the agent showing ``left`` against ``right``: 1, 0 or -1."""
    delta = right - left if (left + right) % 2 == 0 else left - right
    if delta > 0:
        return 1
    if delta < 0:
        return -1
    return 0


@nb.njit(cache=True, error_model="numpy", inline="always")
def valid_action(s, cfg, k, action):
    """Whether agent ``k`` plays ``action``: it has an action (no face marked it failed) and the
    sign is one of the configuration's."""
    return not failed(s.status[k]) and action >= 0 and action < cfg.signs


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.status[:] = ACTIVE
    s.reward[:] = 0.0
    s.sign[:] = NO_SIGN
    s.score[:] = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    begin_rewards(s, rewards)
    valid0 = valid_action(s, cfg, 0, actions[0])
    valid1 = valid_action(s, cfg, 1, actions[1])
    if not valid1:
        s.status[1] = INVALID
        s.reward[1] = 0.0
        if valid0:
            s.status[0] = DONE
            s.reward[0] = 1.0
            return end_step(s, cfg, rewards)
    if not valid0:
        s.status[0] = INVALID
        s.reward[0] = 0.0
        if valid1:
            s.status[1] = DONE
            s.reward[1] = 1.0
        return end_step(s, cfg, rewards)
    left = actions[0]
    right = actions[1]
    score = get_score(left, right)
    s.sign[0] = left
    s.sign[1] = right
    s.reward[0] += score
    s.reward[1] -= score
    s.score[0] = np.int64(s.reward[0])
    s.score[1] = np.int64(s.reward[1])
    if cfg.episodeSteps - s.step - 1 <= 1:
        s.status[0] = DONE
        s.status[1] = DONE
        if abs(s.reward[0]) < cfg.tieRewardThreshold:
            s.reward[0] = 0.0
            s.reward[1] = 0.0
    return end_step(s, cfg, rewards)


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    last = obs[0][i]
    last[0] = s.sign[1]
    last[1] = s.sign[0]
    score = obs[1][i]
    score[0] = s.score[0]
    score[1] = s.score[1]
