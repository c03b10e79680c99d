"""Agents as kaggle-environments resolves and runs them.

An agent is a built-in name, a callable ``(observation, configuration)``, a path to a Python file or
Python source (its last callable is the agent, compiled on first use), or any other value (always
played as the action); a URL, a remote agent in Kaggle, is refused. Built-in agents are the game's
numba policies (``envs/<game>/agents.py``); for a user they are also callables with Kaggle's
signature (``builtin_callables``). Every two-agent game also plays the search agent ``mcts``
(``mcts:N``, or a ``vecenv.search.MCTSAgent``), which is not among the game's ``agents`` (those
are Kaggle's); ``search_callable`` makes it a callable with Kaggle's signature. So does a game's
host agents (``HOST_AGENTS``: connectx's ``perfect``), named as the built-in ones are:
``host_callable`` makes one a callable, and ``PolicyCallable`` a batched Python policy (a
trained network alone).
"""

import contextlib
import copy
import io
import os
import random
import sys
import traceback
from time import perf_counter
from urllib.parse import urlparse

import numpy as np

from vecenv import registry
from vecenv.kernels.agents import AGENT_RNG, memory_words
from vecenv.kernels.turns import ACTIVE

from .errors import DeadlineExceeded, InvalidArgument
from .structs import Struct, structify


class UnknownAgent(InvalidArgument, FileNotFoundError):
    """An agent named by a string that is no built-in agent, file or Python source."""


def agents_module(game):
    module = registry.game_module(game, "agents")
    if module is None:
        return None
    return module


def _argcount(fn):
    code = getattr(fn, "__code__", None)
    return code.co_argcount if code is not None else 2


class Policy:
    """A built-in numba agent for one seat of a one-episode engine: its memory and random stream.
    ``reset`` starts a new match; the random stream is seeded from Python's ``random`` (as Kaggle's
    own agents draw from it), so ``random.seed`` makes matches repeatable."""

    def __init__(self, module, kind, config, config_record):
        self.module = module
        self.kind = kind
        self.cfg = config_record
        self.memory = np.zeros(memory_words(module, config), dtype=np.int64)
        self.rng = np.zeros(1, dtype=AGENT_RNG)
        self.reset()

    def reset(self):
        self.memory[:] = 0
        self.rng["rng"] = random.getrandbits(64)

    def __call__(self, obs_arrays, i, seat, step):
        return int(
            self.module.act(
                self.kind, obs_arrays, i, seat, step, self.cfg[0], self.memory, self.rng[0]
            )
        )


class BuiltinCallable:
    """A built-in agent with Kaggle's signature ``agent(observation, configuration)``: the
    observation (a dict or Struct, as Kaggle gives it) is laid into one-episode arrays and the
    numba policy plays from them (without a configuration, the game's defaults). The seat is found
    from a per-agent field whose spec lists per-seat ``defaults`` (connectx's ``mark``); a new
    match starts at step 0."""

    def __init__(self, game, name):
        self.game = game
        self.name = name
        self.module = agents_module(game)
        self.kind = self.module.NAMES.index(name)
        self.spec = registry.get_spec(game)
        self._key = None
        self._policy = None
        self.__name__ = name

    def _setup(self, configuration):
        known = {k: configuration[k] for k in self.spec.configuration if k in configuration}
        config = self.spec.resolve_configuration(known)
        key = tuple(sorted(config.items()))
        if key != self._key:
            self._key = key
            self.fields = self.spec.observation_fields(config)
            self._policy = Policy(self.module, self.kind, config, self.spec.config_record(config))
        return config

    def reset(self):
        if self._policy is not None:
            self._policy.reset()

    def _seat(self, observation):
        return observed_seat(self.spec, self.fields, observation)

    def __call__(self, observation, configuration=None):
        self._setup({} if configuration is None else configuration)
        step = int(observation.get("step", 0))
        if step == 0:
            self._policy.reset()
        seat = self._seat(observation)
        agents = self.spec.num_agents
        arrays = []
        raw = self.spec.raw["observation"]
        for f in self.fields:
            head = (1,) if f.shared else (1, agents)
            arr = np.zeros(head + f.shape, dtype=f.dtype)
            value = observation.get(f.name, raw[f.name].get("absent"))
            if value is not None:
                index = (0,) if f.shared else (0, seat)
                arr[index] = np.asarray(value, dtype=f.dtype).reshape(f.shape)
            arrays.append(arr)
        return self._policy(tuple(arrays), 0, seat, step)


class SearchPolicy:
    """The search agent for one seat of a one-episode engine: it searches the engine's episode.
    Its random stream is seeded from Python's ``random`` at every new match, as the built-in
    agents' are."""

    def __init__(self, agent, engine):
        from vecenv.search import MCTSAgent  # the search is built on the faces, not under them

        assert isinstance(agent, MCTSAgent)
        self.mcts = agent.searcher(engine)
        self.words = np.zeros(1, dtype=AGENT_RNG)
        self.reset()

    def reset(self):
        self.words["rng"] = random.getrandbits(64)

    def __call__(self, engine, seat):
        """Seat ``seat``'s move in the engine's episode (it must be to move)."""
        result = self.mcts._search(
            engine._states, self.words, np.ones(1, dtype=np.bool_), np.array([seat])
        )
        return int(result.action[0])


class SearchCallable:
    """The search agent with Kaggle's signature ``agent(observation, configuration)``: the
    position is rebuilt from the observation through the game's ``position`` hook (the seat
    found as ``BuiltinCallable`` finds it, to move; the shared fields, the seat's own, the
    observation's ``step``), then searched. Where one agent's observation does not determine
    the state (rps: an agent does not observe its own last sign), the search starts from what
    the shared fields and the step determine."""

    def __init__(self, game, agent):
        self.game = game
        self.agent = agent
        self.spec = registry.get_spec(game)
        self.__name__ = agent.name
        self._key = None

    def _setup(self, configuration):
        import vecenv

        known = {k: configuration[k] for k in self.spec.configuration if k in configuration}
        config = self.spec.resolve_configuration(known)
        key = tuple(sorted(config.items()))
        if key != self._key:
            self._key = key
            self.fields = self.spec.observation_fields(config)
            self.engine = vecenv.make(self.game, num_envs=1, seed=0, autoreset="disabled", **config)
            self.policy = self._policy()

    def _policy(self):
        return SearchPolicy(self.agent, self.engine)

    def reset(self):
        if self._key is not None:
            self.policy.reset()

    def __call__(self, observation, configuration=None):
        from vecenv.kernels.position import PositionError

        self._setup({} if configuration is None else configuration)
        step = int(observation.get("step", 0))
        if step == 0:
            self.policy.reset()
        seat = observed_seat(self.spec, self.fields, observation)
        shared, own = {}, {}
        start = self.engine.reset()
        for f in self.fields:
            if f.name not in observation:
                continue
            if f.shared:
                shared[f.name] = observation[f.name]
            else:
                rows = np.array(start[f.name][0])
                rows[seat] = np.asarray(observation[f.name], dtype=f.dtype).reshape(f.shape)
                own[f.name] = rows
        movers = self.engine.states["status"][0] == ACTIVE
        status = [
            "ACTIVE" if k == seat or (movers.all() and movers[k]) else "INACTIVE"
            for k in range(self.spec.num_agents)
        ]
        try:
            position = {"observation": {**shared, **own}, "status": status, "step": step}
            self.engine.reset(position=position)
        except PositionError:
            position = {"observation": shared, "status": status, "step": step}
            self.engine.reset(position=position)
        return self.policy(self.engine, seat)


def search_callable(game, name):
    """The search agent ``name`` ("mcts", "mcts:N" or an ``MCTSAgent``) of a two-agent game as a
    Kaggle-signature callable (``SearchCallable``)."""
    from vecenv.search import agent_spec

    agent = agent_spec(name)
    if agent is None:
        raise ValueError(f"{name!r} is no search agent (mcts, mcts:N)")
    if registry.get_spec(game).num_agents != 2:
        raise ValueError(f"{game} is not a two-agent game: mcts plays two-agent games")
    return SearchCallable(game, agent)


class HostPolicy:
    """A host agent (``HOST_AGENTS`` of the game's ``agents.py``) for one seat of a
    one-episode engine: its random stream is seeded from Python's ``random`` at every new match,
    as the built-in agents' are."""

    def __init__(self, name, engine):
        self.agent = agents_module(engine.name).host_agent(name, engine.config)
        self.words = np.zeros(1, dtype=AGENT_RNG)
        self.reset()

    def reset(self):
        self.words["rng"] = random.getrandbits(64)

    def __call__(self, engine, seat):
        """Seat ``seat``'s move in the engine's episode (it must be to move)."""
        obs = {}
        for f in engine.observation:
            arr = engine.obs[f.name]
            obs[f.name] = arr[:1] if f.shared else arr[:1, seat]
        return int(np.asarray(self.agent.act(obs, self.words))[0])


class HostCallable(SearchCallable):
    """A host agent with Kaggle's signature ``agent(observation, configuration)``: the position
    is rebuilt from the observation as ``SearchCallable`` rebuilds it, then played."""

    def __init__(self, game, name):
        self.game = game
        self.name = name
        self.spec = registry.get_spec(game)
        self.__name__ = name
        self._key = None

    def _policy(self):
        return HostPolicy(self.name, self.engine)


def host_callable(game, name):
    """The host agent ``name`` of ``game`` (connectx's ``perfect``) as a Kaggle-signature
    callable (``HostCallable``); a name the game has not is a ValueError."""
    names = host_names(game)
    if name not in names:
        raise ValueError(f"{name!r} is no host agent of {game} ({', '.join(names) or 'none'})")
    return HostCallable(game, name)


class NetworkPolicy:
    """A batched Python policy ``policy(obs, legal)`` (``selfplay``'s: each field's rows, the
    seat's own for per-agent fields) for one seat of a one-episode engine."""

    def __init__(self, policy, engine):
        self.policy = policy
        self.engine = engine

    def reset(self):
        pass  # nothing kept between moves

    def __call__(self, engine, seat):
        obs = {}
        for f in engine.observation:
            arr = engine.obs[f.name]
            obs[f.name] = arr if f.shared else arr[:, seat]
        return int(np.asarray(self.policy(obs, obs.get("legal")))[0])


class PolicyCallable(SearchCallable):
    """A batched Python policy (a trained network playing alone) with Kaggle's signature
    ``agent(observation, configuration)``: the position is rebuilt from the observation as
    ``SearchCallable`` rebuilds it, and the policy reads the engine's observation of it."""

    def __init__(self, game, policy, name=None):
        self.game = game
        self.agent = policy
        self.spec = registry.get_spec(game)
        self.__name__ = name or getattr(policy, "__name__", type(policy).__name__)
        self._key = None

    def _policy(self):
        return NetworkPolicy(self.agent, self.engine)


def host_names(game):
    module = agents_module(game)
    return tuple(getattr(module, "HOST_AGENTS", ())) if module is not None else ()


def observed_seat(spec, fields, observation):
    """The seat whose observation ``observation`` is: found from a per-agent field whose spec
    lists per-seat ``defaults`` (connectx's ``mark``); 0 where none tells."""
    raw = spec.raw["observation"]
    for field in fields:
        defaults = raw[field.name].get("defaults") if not field.shared else None
        if defaults and observation.get(field.name) in defaults:
            return defaults.index(observation[field.name])
    return 0


def builtin_callables(game):
    """The game's built-in agents by name, each a Kaggle-signature callable."""
    module = agents_module(game)
    if module is None:
        return {}
    return {name: BuiltinCallable(game, name) for name in module.NAMES}


def _last_callable(source, path):
    """Run ``source`` and return the last callable it defines (Kaggle's rule for agent files)."""
    namespace = {}
    added = False
    if path is not None:
        sys.path.append(os.path.dirname(path))
        added = True
    try:
        exec(compile(source, path or "<string>", "exec"), namespace)
    except Exception as exc:
        raise InvalidArgument(f"Invalid raw Python: {exc!r}") from exc
    finally:
        if added:
            sys.path.pop()
    found = [v for v in namespace.values() if callable(v)]
    if not found:
        raise InvalidArgument("the agent's Python source defines no callable")
    return found[-1]


def _source_agent(raw, path):
    """An agent from Python source, compiled on its first call (an error there is the agent's)."""
    agent = None

    def source_agent(observation, configuration):
        nonlocal agent
        if agent is None:
            agent = _last_callable(raw, path)
        args = [observation, configuration][: _argcount(agent)]
        return agent(*args)

    return source_agent


def _names_search(raw):
    """Whether ``raw`` names the search agent (the name, or an ``MCTSAgent``)."""
    if isinstance(raw, str):
        return raw == "mcts" or raw.startswith("mcts:")
    return type(raw).__name__ == "MCTSAgent" and type(raw).__module__ == "vecenv.search"


def _is_url(raw):
    """A URL as Kaggle tells one (a scheme and a host), which would be a remote agent there."""
    try:
        parsed = urlparse(raw)
    except ValueError:
        return False
    return bool(parsed.scheme and parsed.netloc)


def resolve(raw, game, builtin_names):
    """What Kaggle makes of an agent: ("builtin", name), ("host", name), ("search", MCTSAgent)
    or ("callable", fn)."""
    if isinstance(raw, str) and raw in builtin_names:
        return "builtin", raw
    if isinstance(raw, str) and raw in host_names(game):
        return "host", raw
    if _names_search(raw):
        from vecenv.search import agent_spec

        try:
            return "search", agent_spec(raw)
        except ValueError as exc:
            raise UnknownAgent(str(exc)) from None
    if callable(raw):
        return "callable", raw
    if not isinstance(raw, str):
        value = copy.deepcopy(raw)
        return "callable", lambda: value
    if _is_url(raw):
        raise InvalidArgument(f"URL agents are not supported: {raw}")
    if os.path.exists(raw):
        with open(raw, encoding="utf-8") as f:
            return "callable", _source_agent(f.read(), raw)
    if (len(raw) < 100 and ("/" in raw or "\\" in raw)) or len(raw) < 20:
        known = ", ".join(tuple(builtin_names) + host_names(game)) or "none"
        raise UnknownAgent(
            f"Could not find agent {raw!r}: not a built-in agent of {game} ({known}), "
            "a file, or Python source"
        )
    return "callable", _source_agent(raw, None)


class Agent:
    """One seat's agent in a run: acts on Kaggle's observation, timed and (unless ``debug``) with
    its output captured, as Kaggle's ``Agent.act``."""

    def __init__(self, raw, environment, seat):
        self.environment = environment
        self.seat = seat
        self.kind, target = resolve(raw, environment.name, environment._builtin_names)
        if self.kind == "builtin":
            table = environment._table
            self.policy = Policy(
                agents_module(environment.name),
                environment._builtin_names.index(target),
                table.engine.config,
                table.engine._cfg,
            )
        elif self.kind == "search":
            self.policy = SearchPolicy(target, environment._table.engine)
        elif self.kind == "host":
            self.policy = HostPolicy(target, environment._table.engine)
        else:
            self.fn = target

    def act(self, observation_of):
        """(action, log) for the current state; ``observation_of()`` builds Kaggle's observation
        (only user agents need it: built-in ones read the engine's arrays)."""
        env = self.environment
        config = env.configuration
        overage = env._overage[self.seat]
        if self.kind == "builtin":
            table = env._table
            start = perf_counter()
            action = self.policy(table.engine._obs, 0, self.seat, table.step_count)
            out = err = ""
        elif self.kind in ("search", "host"):
            start = perf_counter()
            action = self.policy(env._table.engine, self.seat)
            out = err = ""
        else:
            args = [structify(observation_of()), structify(dict(config))]
            args = args[: _argcount(self.fn)]
            if env.debug:
                start = perf_counter()
                action = self.fn(*args)
                out = err = ""
            else:
                out_buffer, err_buffer = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out_buffer), contextlib.redirect_stderr(err_buffer):
                    try:
                        start = perf_counter()
                        action = self.fn(*args)
                    except Exception as exc:
                        traceback.print_exc(file=err_buffer)
                        action = exc
                limit = config.get("maxLogLength", 10000)
                out, err = out_buffer.getvalue(), err_buffer.getvalue()
                if limit is not None:
                    out, err = out[:limit], err[:limit]
        duration = perf_counter() - start
        if duration - config.actTimeout > overage:
            action = DeadlineExceeded()
        return action, {"duration": round(duration, 6), "stdout": out, "stderr": err}

    def reset(self):
        if self.kind in ("builtin", "search", "host"):
            self.policy.reset()


def shared_observation(state, seat, hidden, shared):
    """Agent ``seat``'s observation as Kaggle hands it to the agent: its own fields, the shared
    ones from the first agent's, hidden ones removed."""
    obs = dict(state[seat].observation)
    for key in shared:
        if key in state[0].observation:
            obs[key] = copy.deepcopy(state[0].observation[key])
    for key in hidden:
        obs.pop(key, None)
    return Struct(**obs)
