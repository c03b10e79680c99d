"""Agents in the seats of an engine of several agents: ``Seats(engine)`` puts a built-in agent
(the game's numba policy, moving inside the compiled step) or a batched Python policy in each seat
of every episode.

It is the engine's own machinery, below every face: the Gymnasium opponent
(``vecenv.opponent``), the AISysProj environment, ``vecenv.selfplay.play``'s matches and the PPO
league all seat their agents with it.
"""

import importlib
import importlib.util
import inspect
import os
import re
import sys
import sysconfig

import numba
import numpy as np

from vecenv import registry, search, search_checks, variants
from vecenv.kernels.agents import AGENT_RNG, agent_words, memory_words
from vecenv.kernels.turns import ACTIVE, INVALID

from .spec import is_integer

# A trained player named by its file: FILE.pt, or FILE.pt:N (an AlphaZero network searching N
# simulations a move; 0: the network alone). ``vecenv.tournament`` reads the file (PyTorch).
CHECKPOINT = re.compile(r"(?P<path>.+\.pt)(?::(?P<simulations>\d+))?")


def is_checkpoint(agent):
    return isinstance(agent, str) and CHECKPOINT.fullmatch(agent) is not None


def checkpoint_agent(spelling, game):
    """The player saved in the file ``spelling`` names (``CHECKPOINT``), trained on ``game``:
    loaded by ``vecenv.tournament`` (the layer above, found through ``vecenv.variants``)."""
    return variants.find("player", "checkpoint")(spelling, game)


def builtin_names(game):
    """The names of the agents every seat of ``game`` may be given: its own (``agents.py``:
    those moving inside the engine, then its host agents) and, for a two-agent game of perfect
    information, ``mcts`` (``vecenv.search``: two agents only)."""
    module = registry.game_module(game, "agents")
    names = tuple(module.NAMES) if module is not None else ()
    names += host_names(game)
    if registry.get_spec(game).num_agents == 2 and not registry.hidden_information(game):
        names += (search.AGENT,)
    return names


def host_names(game):
    """The game's host agents: built-in agents that move from Python (``HOST_AGENTS`` of its
    ``agents.py``; connectx's ``perfect``)."""
    module = registry.game_module(game, "agents")
    return tuple(getattr(module, "HOST_AGENTS", ())) if module is not None else ()


def check_agent(game, agent):
    """A ValueError unless ``agent`` is one of the game's built-in names (its host agents
    included), the search agent (``mcts``, ``mcts:N`` or a ``search.MCTSAgent``) or a
    callable."""
    if search.agent_spec(agent) is not None:
        search_checks.check_searchable_game(game)
        return
    module = registry.game_module(game, "agents")
    names = tuple(module.NAMES) if module is not None else ()
    names += host_names(game)
    if isinstance(agent, str) and agent not in names:
        known = ", ".join(builtin_names(game))
        raise ValueError(f"unknown agent {agent!r} for {game}; built-in agents: {known}")
    if not isinstance(agent, str) and not callable(agent):
        raise ValueError(f"an agent must be a built-in name or a callable, got {agent!r}")


def function_agent(reference, arguments=("obs", "legal")):
    """The function ``package.module:function`` names, as a policy called with ``arguments``:
    ValueError unless it names a callable of a module of the user's (Python's standard library
    and built-in modules hold no policies: ``os:system`` is refused, never called) whose
    signature takes those arguments."""
    module_name, _, name = reference.partition(":")
    if not module_name or not name:
        raise ValueError(f"{reference!r}: a policy is named package.module:function")
    module = import_users(module_name, reference, "a function of your own module")
    function = module
    for part in name.split("."):
        function = getattr(function, part, None)
    if not callable(function):
        raise ValueError(f"{reference!r} names no function")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read: it is tried as it is
        return function
    try:
        signature.bind(*arguments)
    except TypeError:
        wanted = ", ".join(arguments)
        raise ValueError(
            f"{reference!r} is no policy: it takes {signature}, a policy takes ({wanted})"
        ) from None
    return function


def import_users(module_name, reference, wanted):
    """The module ``module_name`` that a command line's ``reference`` names, imported; a
    ValueError saying what was ``wanted`` where it is part of Python itself (its standard
    library or a built-in module: looked up without running it, so ``antigravity`` opens no
    browser and ``os:system`` is never called) or cannot be imported."""
    top = module_name.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise ValueError(f"{reference!r}: no module {top!r} to import")
    if _standard(top, spec.origin):
        raise ValueError(f"{reference!r}: {top} is part of Python itself; name {wanted}")
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"{reference!r}: cannot import {module_name!r} ({exc})") from None
    except Exception as exc:  # the module's own code failed
        raise ValueError(f"{reference!r}: importing it failed: {exc!r}"[:300]) from None


def _standard(name, origin):
    """Whether the top-level module ``name`` found at ``origin`` is Python's own."""
    if name in sys.builtin_module_names or name in sys.stdlib_module_names:
        return True
    if not origin or origin in ("built-in", "frozen"):
        return True
    path = os.path.realpath(origin)
    for kind in ("stdlib", "platstdlib"):
        root = os.path.realpath(sysconfig.get_paths()[kind])
        inside = os.path.commonpath([root, path]) == root
        if inside and "site-packages" not in path and "dist-packages" not in path:
            return True
    return False


def _array(name, doc):
    """A read-only attribute holding one of ``Seats``' arrays."""
    return property(lambda self: getattr(self, name), doc=doc)


class Seats:
    """Who plays which seat of every episode of an engine of A agents, and their moves.

    Built-in agents keep, per episode and seat, their memory and random stream (derived from the
    episode's seed, so an episode's moves never depend on the others); Python policies are called
    once per ply for the whole batch."""

    # The compiled step takes these arrays without checking their types: they can be read and
    # written in place, never replaced.
    kinds = _array(
        "_kinds", "(N, A) int64: each seat's built-in agent (its index in ``names``), -1 for none"
    )
    memory = _array("_memory", "(N, A, words) int64: each built-in agent's memory")
    rngs = _array("_rngs", "(N, A) records: each built-in agent's random stream")
    actions = _array("_actions", "(N, A): the moves of the last ``step``")
    returns = _array("_returns", "(N, A) float64: rewards summed over every ``step``")
    ends = _array("_ends", "(N,) int64: episodes ended over every ``step``")

    def __init__(self, engine):
        self.engine = engine
        m, a = engine.num_envs, engine.num_agents
        self.module = registry.game_module(engine.name, "agents")
        self.names = tuple(self.module.NAMES) if self.module is not None else ()
        self._kinds = np.full((m, a), -1, dtype=np.int64)  # -1: not a built-in agent
        words = memory_words(self.module, engine.config) if self.module is not None else 1
        self._memory = np.zeros((m, a, words), dtype=np.int64)
        self._rngs = np.zeros((m, a), dtype=AGENT_RNG)
        self.reseed()
        self.policies = []  # (policy, seat of each episode)
        self._bind()
        self.low = int(engine.action.low[0])
        # ``step``'s moves (in the engine's action type), and its running totals per episode:
        # each agent's rewards and the episodes ended (set them to zero to start over).
        self._actions = np.zeros((m, a), dtype=engine._act_dtype)
        self._returns = np.zeros((m, a), dtype=np.float64)
        self._ends = np.zeros(m, dtype=np.int64)

    def _bind(self):
        drivers = self.engine._drivers
        threaded = self.engine.num_threads > 1
        self._act = drivers.act_agents_parallel if threaded else drivers.act_agents

    # Pickled with its engine, the agents' memories and streams and the Python policies (which
    # must pickle themselves); modules and compiled code are looked up again where it loads.
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("module", "_act")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.module = registry.game_module(self.engine.name, "agents")
        self._bind()

    def assign(self, agent, seat_of):
        """``agent`` plays seat ``seat_of[i]`` of episode i, instead of whoever played it: a
        built-in agent's name, ``mcts``/``mcts:N``, a batched Python policy, or a trained
        player's file (``FILE.pt``, ``FILE.pt:N``: see ``CHECKPOINT``)."""
        if is_checkpoint(agent):
            agent = checkpoint_agent(agent, self.engine.name)
        check_agent(self.engine.name, agent)
        rows = np.arange(self.engine.num_envs)
        searcher = search.agent_spec(agent)
        if searcher is not None:  # the search: it moves where a Python policy would
            self._kinds[rows, seat_of] = -1
            seats = np.asarray(seat_of, dtype=np.int64)
            self.policies.append((search.SeatSearch(self.engine, searcher), seats))
        elif isinstance(agent, str) and agent not in self.names:  # a host agent
            self._kinds[rows, seat_of] = -1
            seats = np.asarray(seat_of, dtype=np.int64)
            self.policies.append((HostSeat(self.engine, self.module, agent), seats))
        elif isinstance(agent, str):
            self._kinds[rows, seat_of] = self.names.index(agent)
        else:
            self._kinds[rows, seat_of] = -1
            self.policies.append((agent, np.asarray(seat_of, dtype=np.int64)))

    def reseed(self, mask=None):
        """Restart the agents' streams (where ``mask``) from their episodes' seeds (the words the
        engine's last seeded reset started the episodes from)."""
        m = self.engine.num_envs
        mask = np.ones(m, dtype=np.bool_) if mask is None else mask
        words = np.zeros((m, self.engine.num_agents), dtype=np.uint64)
        agent_words(self.engine._words, words, mask)
        self._rngs["rng"][mask] = words[mask]

    def new_matches(self, mask):
        """The episodes where ``mask`` start new matches: their agents forget."""
        self._memory[mask] = 0

    def moves(self, actions):
        """Every seat's move where it is to move (the action's lowest value elsewhere)."""
        engine = self.engine
        actions[:] = self.low
        if engine.num_threads > 1:
            numba.set_num_threads(engine.num_threads)
        self._act(
            engine._states, engine._cfg, engine._obs, self._kinds, self._memory, self._rngs, actions
        )
        self._python_moves(actions)

    def step(self, plies=1):
        """Every seat moves where it is to move, then every episode steps, ``plies`` times:
        ``moves`` and the engine's ``step`` in one compiled pass over the episodes, each episode
        playing its plies in a row (Python policies move first, for the whole batch, so with
        them each ply is a call of its own). The same moves and states as ``plies`` rounds of
        ``moves`` and ``step``. ``actions`` holds each seat's latest move of the call (the
        action's lowest value for a seat that did not move), ``returns`` and ``ends`` add up
        the rewards and the episodes ended; returns the engine's ``step`` result for the last
        ply."""
        if not is_integer(plies) or not 1 <= plies < 2**63:
            raise ValueError(f"plies must be a positive integer, got {plies!r}")
        engine = self.engine
        flat = self._actions.reshape(engine._flat_shape)
        per_call = 1 if self.policies else int(plies)
        for _ in range(int(plies) // per_call):
            self._actions[:] = self.low
            self._python_moves(self._actions)
            result = engine._step_agents(
                flat, self._kinds, self._memory, self._rngs, per_call, self._returns, self._ends
            )
        return result

    def _python_moves(self, actions):
        if not self.policies:
            return
        status = self.engine._states["status"]
        for policy, seat_of in self.policies:
            if isinstance(policy, (search.SeatSearch, HostSeat)):
                policy.moves(self, seat_of, actions)
            else:
                _python_moves(self.engine, policy, seat_of, status, self._kinds, actions)


class HostSeat:
    """A host agent (``HOST_AGENTS`` of the game's ``agents.py``) in the seats of an engine's
    episodes: where its seat is to move it plays all such episodes in one call, each
    drawing from its seat's random stream (the seats' ``rngs``), as the built-in agents do, so
    its moves depend on its own episode only."""

    def __init__(self, engine, module, name):
        self.name = name
        self.agent = module.host_agent(name, engine.config)

    def moves(self, seats, seat_of, actions):
        """The moves of the episodes where seat ``seat_of[i]`` is this agent's and to move, into
        ``actions``."""
        engine = seats.engine
        states = engine._states
        rows = np.arange(engine.num_envs)
        to_move = (
            (states["done"] == 0)
            & (states["status"][rows, seat_of] == ACTIVE)
            & (seats.kinds[rows, seat_of] < 0)
        )
        if not to_move.any():
            return
        moving, seat = rows[to_move], seat_of[to_move]
        obs = {}
        for f in engine.observation:
            arr = engine.obs[f.name]
            obs[f.name] = arr[moving] if f.shared else arr[moving, seat]
        rngs = np.zeros(moving.size, dtype=AGENT_RNG)
        rngs["rng"] = seats.rngs["rng"][moving, seat]
        out = np.asarray(self.agent.act(obs, rngs))
        if out.shape != (moving.size,) or not np.issubdtype(out.dtype, np.integer):
            raise ValueError(
                f"host agent {self.name} must return ({moving.size},) integers, got "
                f"{out.dtype} {out.shape}"
            )
        seats.rngs["rng"][moving, seat] = rngs["rng"]
        actions[moving, seat] = out


def agent_name(agent):
    if isinstance(agent, search.MCTSAgent):
        return agent.name
    return agent if isinstance(agent, str) else getattr(agent, "__name__", type(agent).__name__)


def _python_moves(engine, policy, seat_of, status, kinds, actions):
    """One batched call of a Python policy for its seat in every match; its actions go where it
    is to move and no built-in agent has taken the seat since. A result of the wrong shape or
    type is a ValueError naming the policy; a move out of the action's range makes that match's
    seat INVALID, as Kaggle rules an out-of-schema action, and leaves every other match alone."""
    rows = np.arange(engine.num_envs)
    obs = {}
    for f in engine.observation:
        arr = engine.obs[f.name]
        obs[f.name] = arr if f.shared else arr[rows, seat_of]
    legal = obs.get("legal")
    try:
        out = np.asarray(policy(obs, legal))
    except Exception as exc:  # the policy is the user's: its failure is said in one line
        raise ValueError(
            f"policy {agent_name(policy)} failed: {type(exc).__name__}: {exc}"[:500]
        ) from None
    if out.shape != (engine.num_envs,) or not np.issubdtype(out.dtype, np.integer):
        raise ValueError(
            f"policy {agent_name(policy)} must return ({engine.num_envs},) integers, "
            f"got {out.dtype} {out.shape}"
        )
    to_move = (status[rows, seat_of] == ACTIVE) & (kinds[rows, seat_of] < 0)
    low, high = int(engine.action.low[0]), int(engine.action.high[0])
    bad = to_move & ((out < low) | (out > high))
    status[rows[bad], seat_of[bad]] = INVALID
    ok = to_move & ~bad
    actions[rows[ok], seat_of[ok]] = out[ok]
