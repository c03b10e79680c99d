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
# Runs are also bounded by what they hold: a connectx run of 1000 x 1000 keeps about 27 MB (its
# Kaggle states are Python lists), so 1024 of them would take 27 GB. The least recently used go
# first past either bound, and no agent keeps more than its share; an evicted run is played
# again from its state when it next acts (slower, never wrong).
CACHE_BYTES = 256 * 2**20
AGENT_RUNS = 64  # the live runs one agent may hold
AGENT_BYTES = 64 * 2**20  # and their bytes


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
    """Live runs by the state they are in, the least recently used evicted first: at most
    ``size`` runs of at most ``max_bytes`` together (each run's ``nbytes()``, an estimate from
    above, where it has one), and per owner (the agent playing it, where known) at most
    ``owner_runs`` of ``owner_bytes``. A run larger than a bound alone is not kept at all."""

    def __init__(
        self,
        size=CACHE_SIZE,
        max_bytes=CACHE_BYTES,
        owner_runs=AGENT_RUNS,
        owner_bytes=AGENT_BYTES,
    ):
        self._live = OrderedDict()  # key -> [live, bytes, owner]
        self._bytes = 0
        self._owners = {}  # owner -> [runs, bytes]
        self.configure(size, max_bytes, owner_runs, owner_bytes)

    def configure(self, size=None, max_bytes=None, owner_runs=None, owner_bytes=None):
        """Change the bounds (None: keep one); runs past them are evicted now."""
        for name, value in (
            ("size", size),
            ("max_bytes", max_bytes),
            ("owner_runs", owner_runs),
            ("owner_bytes", owner_bytes),
        ):
            if value is None:
                continue
            if not (is_integer(value) and value >= 1):
                raise ValueError(f"the cache's {name} must be a positive integer, got {value!r}")
            setattr(self, name, int(value))
        self._evict(None)

    def __len__(self):
        return len(self._live)

    @property
    def nbytes(self):
        """The bytes of the runs kept (their estimates)."""
        return self._bytes

    def find(self, state, rebuild, owner=None):
        """``(key, live)``: the run ``state`` is in, from the cache or ``rebuild(state)`` (which
        raises StateError for a state it cannot continue); kept in the cache either way, as
        ``owner``'s where given."""
        key = state_key(state)
        entry = self._live.get(key)
        if entry is None:
            live = rebuild(state)
            self.keep(key, live, owner)
            return key, live
        if owner is not None and entry[2] != owner:
            self.keep(key, entry[0], owner)  # counted as its owner's from now on
        else:
            self._live.move_to_end(key)
        return key, entry[0]

    def take(self, key):
        """Remove the run under ``key`` (before it changes, or once it is over)."""
        entry = self._live.pop(key, None)
        if entry is not None:
            self._count(entry, -1)

    def keep(self, key, live, owner=None):
        self.take(key)
        size = int(live.nbytes()) if hasattr(live, "nbytes") else 0
        if size > self.max_bytes or (owner is not None and size > self.owner_bytes):
            return  # kept by no one: played again from its state when it acts
        entry = [live, size, owner]
        self._live[key] = entry
        self._count(entry, 1)
        self._evict(owner)

    def _count(self, entry, sign):
        _, size, owner = entry
        self._bytes += sign * size
        if owner is None:
            return
        counts = self._owners.setdefault(owner, [0, 0])
        counts[0] += sign
        counts[1] += sign * size
        if counts[0] <= 0:
            del self._owners[owner]

    def _evict(self, owner):
        while self._live and (len(self._live) > self.size or self._bytes > self.max_bytes):
            self._count(self._live.popitem(last=False)[1], -1)
        counts = self._owners.get(owner) if owner is not None else None
        while counts and (counts[0] > self.owner_runs or counts[1] > self.owner_bytes):
            oldest = next(k for k, entry in self._live.items() if entry[2] == owner)
            self.take(oldest)
            counts = self._owners.get(owner)


def engine_bytes(engine):
    """The bytes of a live run's engine arrays (records, observations, outputs)."""
    total = engine.states.nbytes
    for name in ("obs", "rewards", "terminated", "truncated"):
        value = getattr(engine, name, None)
        arrays = value.values() if isinstance(value, dict) else (value,)
        total += sum(getattr(a, "nbytes", 0) for a in arrays)
    return total


def check_state(state, game):
    """``state`` if it is a state object of ``game``'s; StateError otherwise."""
    if not isinstance(state, dict):
        raise StateError("a state is an object")
    if state.get("game") != game:
        raise StateError(f"a state of {state.get('game')!r}, not {game!r}")
    return state
