"""Kaggle's Rock Paper Scissors agents as numba policies (the protocol of ``kernels/agents``).

Each reads what its seat observes: ``obs[0]`` is ``lastOpponentAction`` (-1 before the first
round) and ``obs[1]`` the agent's running score. Where Kaggle's agent returns None (statistical's
first move, copy_opponent with no sign to copy) Kaggle's action schema makes it 0, and so do these.

Memory, one agent's int64 words for a match:
- ``LAST``: the agent's own previous sign (reactionary, counter_reactionary);
- ``SEEN``: how many distinct opponent signs statistical has counted;
- ``ORDER .. ORDER + MAX_SIGNS``: those signs in the order they were first seen (Kaggle's histogram
  is a dict, whose mode is the first sign, in that order, with the largest count);
- ``COUNT .. COUNT + MAX_SIGNS``: how often the opponent showed each sign.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer

from .rules import get_score

NAMES = (
    "rock",
    "paper",
    "scissors",
    "copy_opponent",
    "reactionary",
    "counter_reactionary",
    "statistical",
)
ROCK, PAPER, SCISSORS, COPY_OPPONENT, REACTIONARY, COUNTER_REACTIONARY, STATISTICAL = range(7)

MAX_SIGNS = 5  # the configuration's largest ``signs``
LAST = 0
SEEN = 1
ORDER = 2
COUNT = ORDER + MAX_SIGNS
MEMORY = COUNT + MAX_SIGNS


@nb.njit(cache=True, error_model="numpy")
def statistical(opponent, step, signs, memory):
    """One sign more than the opponent's most frequent sign so far (ties: the first seen)."""
    if step == 0:
        memory[SEEN:MEMORY] = 0
        return 0
    if 0 <= opponent < signs:
        if memory[COUNT + opponent] == 0:
            memory[ORDER + memory[SEEN]] = opponent
            memory[SEEN] += 1
        memory[COUNT + opponent] += 1
    seen = memory[SEEN]
    if seen == 0:
        return 0
    mode = memory[ORDER]
    for k in range(1, seen):
        sign = memory[ORDER + k]
        if memory[COUNT + sign] > memory[COUNT + mode]:
            mode = sign
    return (mode + 1) % signs


@nb.njit(cache=True, error_model="numpy")
def act(kind, obs, i, player, step, cfg, memory, r):
    signs = cfg.signs
    opponent = np.int64(obs[0][i, player])
    if kind == ROCK:
        return 0
    if kind == PAPER:
        return 1
    if kind == SCISSORS:
        return 2
    if kind == COPY_OPPONENT:
        if step > 0:
            return opponent if opponent >= 0 else 0
        return integer(r, signs)
    if kind == REACTIONARY:
        # Kaggle's condition, get_score(last, opponent) <= 1, holds for every round's outcome.
        if step == 0:
            memory[LAST] = integer(r, signs)
        elif opponent >= 0:
            memory[LAST] = (opponent + 1) % signs
        return memory[LAST]
    if kind == COUNTER_REACTIONARY:
        if step == 0:
            memory[LAST] = integer(r, signs)
        elif opponent >= 0:
            if get_score(memory[LAST], opponent) == 1:
                memory[LAST] = (memory[LAST] + 2) % signs
            else:
                memory[LAST] = (opponent + 1) % signs
        return memory[LAST]
    if kind == STATISTICAL:
        return statistical(opponent, step, signs, memory)
    return 0
