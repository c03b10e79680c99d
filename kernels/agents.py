"""Built-in agents as numba policies: the protocol every game's ``agents.py`` follows.

A game's ``agents.py`` declares:
- ``NAMES``: its agents' names, as its reference (kaggle-environments) names them; an agent's
  index in ``NAMES`` is its ``kind``;
- ``MEMORY``: how many int64 words one agent keeps from step to step of a match (0 if none), or
  a function of the configuration dict giving it (``memory_words`` reads either);
- ``act(kind, obs, i, player, step, cfg, memory, r) -> int``: agent ``kind``'s action for seat
  ``player`` of episode ``i``, called only while that seat is ACTIVE. ``obs`` is the engine's tuple
  of observation arrays (the spec's array fields, in order: shared ones (N, ...), the others
  (N, A, ...)), ``step`` is the number of steps the episode has taken (Kaggle's
  ``observation.step``), ``memory`` this agent's words for this match (zero when the match
  starts), ``r`` a record whose ``rng`` word is the agent's own random stream (``kernels.rng``).

An agent reads only what its seat observes, as Kaggle's agents do, and draws randomness only from
``r``: a match is then reproducible from its seed, whatever else runs beside it.
"""

import numba as nb
import numpy as np

from .rng import GOLDEN, integer, mix64

# The record an agent's random stream lives in (``kernels.rng`` reads and advances ``r.rng``).
AGENT_RNG = np.dtype([("rng", np.uint64)])
# Keeps the agents' streams apart from the episode's own.
_AGENTS = np.uint64(0x9E6C63D0676A9A99)


@nb.njit(cache=True)
def agent_words(episode_words, out, mask):
    """``out[i, k]``: the start of the stream of the agent in seat k of episode i, derived from the
    episode's own starting word (so it depends on the episode's seed only, never on the batch)."""
    for i in range(out.shape[0]):
        if mask[i]:
            for k in range(out.shape[1]):
                out[i, k] = mix64((episode_words[i] ^ _AGENTS) + np.uint64(k + 1) * GOLDEN)


def memory_words(module, config):
    """The words of memory one agent of a game's ``agents`` module keeps (at least 1, so every
    agent has a row to be handed), under ``config``."""
    words = module.MEMORY
    return max(int(words(config) if callable(words) else words), 1)


@nb.njit(cache=True, error_model="numpy")
def uniform_choice(r, allowed):
    """A uniform index among the true entries of ``allowed`` (-1 when there is none): Python's
    ``random.choice`` over the allowed list."""
    count = 0
    for k in range(allowed.shape[0]):
        if allowed[k]:
            count += 1
    if count == 0:
        return -1
    pick = integer(r, count)
    for k in range(allowed.shape[0]):
        if allowed[k]:
            if pick == 0:
                return k
            pick -= 1
    return -1


@nb.njit(cache=True, error_model="numpy")
def uniform_equal(r, values, value):
    """``uniform_choice(r, values == value)`` without making the mask (an allocation, which
    the rules' CUDA code cannot make): the same draw, the same index."""
    count = 0
    for k in range(values.shape[0]):
        if values[k] == value:
            count += 1
    if count == 0:
        return -1
    pick = integer(r, count)
    for k in range(values.shape[0]):
        if values[k] == value:
            if pick == 0:
                return k
            pick -= 1
    return -1
