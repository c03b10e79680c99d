"""What every AISysProj environment here shares: run seeds, state errors, JSON numbers and the
cache of live runs.

A run's state is plain JSON from which the run is played again; a live object (a match, an
episode) is kept per state so that a run played in order costs one step per action, not a replay.
"""

import json
from collections import OrderedDict

from vecenv.inputs import fresh_seed
from vecenv.spec import is_integer

SEED_BOUND = 2**53  # seeds stay exact as JSON numbers everywhere
# An arena server keeps about a hundred runs open at once, each cached under its latest state;
# a smaller cache evicts runs between two of their actions and pays a replay for every action.
CACHE_SIZE = 1024


class StateError(ValueError):
    """A run state this environment cannot continue."""


def plain(value):
    """A reward or return as a JSON number (an int when integral)."""
    if value is None:
        return None
    value = float(value)
    return int(value) if value.is_integer() else value


def new_seed(seed=None):
    """A new run's seed: ``seed`` checked, or a fresh one."""
    if seed is None:
        return fresh_seed() % SEED_BOUND
    if not (is_integer(seed) and 0 <= seed < SEED_BOUND):
        raise ValueError(f"a run's seed must be an integer in [0, 2**53), got {seed!r}")
    return int(seed)


def check_seed(seed):
    """A state's seed, or StateError."""
    if not (is_integer(seed) and 0 <= seed < SEED_BOUND):
        raise StateError(f"seed {seed!r} is not an integer in [0, 2**53)")
    return int(seed)


def state_key(state):
    """The cache key of a state: its JSON text (StateError for what is no JSON)."""
    try:
        return json.dumps(state, sort_keys=True)
    except (TypeError, ValueError):
        raise StateError("a state is JSON") from None


class LiveCache:
    """Live runs by the state they are in, the least recently used evicted first."""

    def __init__(self, size=CACHE_SIZE):
        if not (is_integer(size) and size >= 1):
            raise ValueError(f"a cache size must be a positive integer, got {size!r}")
        self.size = int(size)
        self._live = OrderedDict()

    def __len__(self):
        return len(self._live)

    def find(self, state, rebuild):
        """``(key, live)``: the run ``state`` is in, from the cache or ``rebuild(state)`` (which
        raises StateError for a state it cannot continue); kept in the cache either way."""
        key = state_key(state)
        live = self._live.get(key)
        if live is None:
            live = rebuild(state)
            self.keep(key, live)
        else:
            self._live.move_to_end(key)
        return key, live

    def take(self, key):
        """Remove the run under ``key`` before it changes (its state is no longer ``key``)."""
        self._live.pop(key, None)

    def keep(self, key, live):
        self._live[key] = live
        self._live.move_to_end(key)
        while len(self._live) > self.size:
            self._live.popitem(last=False)


def check_state(state, game):
    """``state`` if it is a state object of ``game``'s; StateError otherwise."""
    if not isinstance(state, dict):
        raise StateError("a state is an object")
    if state.get("game") != game:
        raise StateError(f"a state of {state.get('game')!r}, not {game!r}")
    return state
