"""Compiling ahead of time: games' compiled code written into vecenv's cache before it is needed.

A game's first step in a process with an empty cache compiles its rules and drivers (seconds); in
a later process the same step loads them from the cache (tenths of a second). ``warm`` does the
compiling up front, for the parts of a game a program is about to use, over several processes at
once, so that the processes that follow (a test suite's workers, the pages of the documentation,
a training run's evaluators) each load instead of each compiling:

- ``engine``: ``vecenv.make``'s reset, step and set_state (the array API);
- ``gym``: the Gymnasium vector face's step (one-agent games; the same for SB3 and PufferLib);
- ``agents``: the built-in agents moving inside the step (games of several agents: self-play,
  the opponents of the Gymnasium and PettingZoo faces);
- ``search``: the ``mcts`` agent's search (two-agent games of perfect information);
- ``threads``: the threaded step loop (used at large batches with several threads).

Every part compiles what the first use of it would, into the same cache (concurrent compiles of
one game are safe: ``vecenv.kernels.cache`` locks numba's index), so warming is never wrong, only
early.
"""

import concurrent.futures
import multiprocessing
import os
import time
from dataclasses import dataclass

import numpy as np

import vecenv

from . import registry

PARTS = ("engine", "gym", "agents", "search", "threads")
DEFAULT_PARTS = ("engine", "gym", "agents")


@dataclass(frozen=True)
class Warmed:
    game: str
    seconds: float
    error: str | None = None  # a game that does not compile: its message (the rest still warm)


def parts_of(text):
    """``PARTS`` named in a comma-separated ``text`` ("all" for every one), checked."""
    names = PARTS if text.strip() == "all" else tuple(p.strip() for p in text.split(",") if p)
    unknown = [p for p in names if p not in PARTS]
    if unknown or not names:
        raise ValueError(f"parts must be some of {', '.join(PARTS)} (or all), got {text!r}")
    return names


def warm_game(game, parts=DEFAULT_PARTS, **configuration):
    """Compile (or load) ``parts`` of ``game`` in this process; returns the seconds it took."""
    start = time.perf_counter()
    name = registry.resolve(game)
    spec = registry.get_spec(name)
    engine = vecenv.make(name, num_envs=2, seed=0, **configuration)
    actions = _first_actions(engine)
    if "engine" in parts:
        engine.step(actions)
        engine.set_state(engine.get_state())
        engine.reset(seed=1, mask=np.array([True, False]))
    if "gym" in parts and spec.num_agents == 1 and spec.gym.get("id"):
        import gymnasium

        envs = gymnasium.make_vec(f"vecenv/{spec.gym['id']}", num_envs=2, **configuration)
        envs.reset(seed=0)
        envs.step(actions)
        envs.close()
    if spec.num_agents >= 2:
        from . import search, seats, selfplay

        names = seats.builtin_names(name)
        own = [a for a in names if a != search.AGENT]
        if "agents" in parts and own:
            # Every built-in agent is one compiled function of the game: one pair compiles it.
            selfplay.play(name, (own[0],) * spec.num_agents, 2, seed=0, **configuration)
        # A game of hidden information has no mcts agent (the search would read every seat's
        # cards): nothing of it to compile.
        if "search" in parts and search.AGENT in names:
            # Seat 0 searches (a game whose seats move at once needs it named).
            search.MCTS(engine, 2).search(engine.get_state()[:1], seats=[0])
    if "threads" in parts:
        from .threads import PARALLEL_MIN_ENVS

        threaded = vecenv.make(
            name, num_envs=PARALLEL_MIN_ENVS, seed=0, num_threads=2, parallel=True, **configuration
        )
        threaded.step(_first_actions(threaded))
    return time.perf_counter() - start


def _first_actions(engine):
    """Actions every game takes without a bad-action error: each component's low bound (an
    illegal move is the game's to judge, which is compiled code too)."""
    action = engine.action
    low = np.asarray(action.low, dtype=np.float64).reshape(action.shape)
    shape = (engine.num_envs, engine.num_agents) + tuple(action.shape)
    actions = np.broadcast_to(low, shape).astype(action.kernel_dtype)
    return actions[:, 0] if engine.num_agents == 1 else actions


def _warm_one(game, parts):
    try:
        return Warmed(game, warm_game(game, parts))
    except Exception as e:  # reported per game: one broken game never stops the others
        return Warmed(game, 0.0, f"{type(e).__name__}: {e}")


def warm(games=None, parts=DEFAULT_PARTS, jobs=None, progress=None):
    """Warm ``games`` (default: every game found) over ``jobs`` processes (default: the CPUs
    this process may use); ``progress(done, total, warmed)`` after each game. Returns the
    ``Warmed`` of every game, in the order given."""
    games = list(registry.games()) if games is None else [registry.resolve(g) for g in games]
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(games) or 1))
    # Games registered at run time exist in this process only: warmed here.
    here = [g for g in games if jobs == 1 or registry.games()[g].origin == "registered"]
    results = {}

    def done(warmed):
        results[warmed.game] = warmed
        if progress is not None:
            progress(len(results), len(games), warmed)

    for game in here:
        done(_warm_one(game, parts))
    elsewhere = [g for g in games if g not in results]
    if elsewhere:
        # Processes of their own (spawned: numba's threads and a caller's state stay out of
        # them), the games handed out one at a time, those of several agents first: their agents
        # and search make them the longest to compile, and a long one started last keeps the
        # others' processes idle at the end.
        elsewhere.sort(key=lambda g: registry.get_spec(g).num_agents < 2)
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            futures = [pool.submit(_warm_one, g, parts) for g in elsewhere]
            for future in concurrent.futures.as_completed(futures):
                done(future.result())
    return [results[g] for g in games]
