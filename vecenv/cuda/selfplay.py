"""Self-play on the GPU: the built-in agents move inside the step kernel, several plies a call.

``DeviceSeats(engine)`` is ``vecenv.seats.Seats`` for a ``CudaEngine``, with its arrays in GPU
memory: who plays which seat (built-in agents only: a Python policy would need the host every
ply), each agent's memory and random stream (derived from the episode's seed, as on the CPU, so
the same seed plays the same moves on both), and the running totals. It pickles and deep-copies
with its engine (its arrays as host copies), continuing the same.
"""

import numpy as np
from numba import cuda

from vecenv import registry
from vecenv.kernels.agents import AGENT_RNG, agent_words, memory_words
from vecenv.seats import check_agent
from vecenv.spec import is_integer

from .engine import STEP_PLIES


class DeviceSeats:
    """The built-in agents of every seat of the episodes of a ``CudaEngine`` of several agents."""

    def __init__(self, engine):
        if engine.num_agents < 2:
            raise ValueError(f"{engine.name} is a one-agent game: it has no seats to fill")
        self.engine = engine
        m, a = engine.num_envs, engine.num_agents
        self.module = registry.game_module(engine.name, "agents")
        if self.module is None:
            raise ValueError(f"{engine.name} has no built-in agents")
        self.names = tuple(self.module.NAMES)
        self._kinds = np.full((m, a), -1, dtype=np.int64)
        words = memory_words(self.module, engine.config)
        self.kinds = cuda.to_device(self._kinds)
        self.memory = cuda.to_device(np.zeros((m, a, words), dtype=np.int64))
        self.rngs = cuda.to_device(np.zeros((m, a), dtype=AGENT_RNG))
        self.low = int(engine.action.low[0])
        self.actions = cuda.to_device(np.full(engine._flat_shape, self.low, engine._act_dtype))
        self.returns = cuda.to_device(np.zeros((m, a), dtype=np.float64))
        self.ends = cuda.to_device(np.zeros(m, dtype=np.int64))
        self._run = None
        self._seated = False
        self.reseed()

    _DEVICE = ("kinds", "memory", "rngs", "actions", "returns", "ends")

    # Pickled with its engine, its device arrays as host copies; the agents' module is looked up
    # again where it loads, and the prepared launch made again on its first step.
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("module", "_run")}
        state.update((k, getattr(self, k).copy_to_host()) for k in self._DEVICE)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in self._DEVICE:
            setattr(self, k, cuda.to_device(state[k]))
        self._run = None
        self.module = registry.game_module(self.engine.name, "agents")

    def assign(self, agent, seat_of):
        """Built-in ``agent`` (a name) plays seat ``seat_of[i]`` of episode i."""
        if not isinstance(agent, str):
            raise ValueError("on the GPU only built-in agents (names) play: policies need the host")
        check_agent(self.engine.name, agent)
        if agent not in self.names:
            raise ValueError(
                f"on the GPU only {self.engine.name}'s own agents ({', '.join(self.names)}) play: "
                f"{agent} moves on the host"
            )
        seat_of = np.asarray(seat_of, dtype=np.int64)
        self._kinds[np.arange(self.engine.num_envs), seat_of] = self.names.index(agent)
        self.kinds.copy_to_device(self._kinds)
        self._seated = bool((self._kinds >= 0).all())  # read by every step: checked once here

    def reseed(self):
        """Restart the agents' streams from their episodes' seeds (the engine's last seeding)."""
        m, a = self.engine.num_envs, self.engine.num_agents
        words = np.zeros((m, a), dtype=np.uint64)
        agent_words(self.engine._words, words, np.ones(m, dtype=np.bool_))
        rngs = np.zeros((m, a), dtype=AGENT_RNG)
        rngs["rng"] = words
        self.rngs.copy_to_device(rngs)

    def step(self, plies=1):
        """Every seat moves where it is to move, then every episode steps, ``plies`` times in
        one kernel launch; returns the engine's ``step`` result for the last ply."""
        if not is_integer(plies) or not 1 <= plies < 2**63:
            raise ValueError(f"plies must be a positive integer, got {plies!r}")
        if not self._seated:
            raise ValueError("every seat needs a built-in agent (assign every seat)")
        engine = self.engine
        if self._run is None:
            self._run = engine._seats_launch(self)
        self._run.update(STEP_PLIES, int(plies))
        # The kernel fills the agents' action rows: a seat that does not move shows the action's
        # lowest value, as on the CPU.
        return engine._finish(self._run, ValueError)
