"""PettingZoo's interfaces for every game of several agents: ``env(name)`` (AEC) and
``parallel_env(name)`` (Parallel), over a one-episode engine, with no per-game code.

Agents are ``player_0``, ``player_1``, ...; each observes ``{"observation": {field: array},
"action_mask": int8 array}``, its own view of the spec's fields (the shared ones, and its own of
the others) with the legal mask as PettingZoo's ``action_mask`` (the ``legal`` field for the agent
to move, all moves where the game has none, nothing for an agent not to move). Whose turn it is
follows Kaggle's statuses. In the AEC face the ACTIVE agents act, and the engine steps once every
ACTIVE agent has acted (one agent in a turn-based game, all of them in a simultaneous one). The
Parallel face takes every live agent's action each step and steps the engine once (the action of
an agent not to move is ignored, as Kaggle's games ignore it, and may be left out; a missing action
of an agent to move is a ValueError). Actions are integers: bools are refused (TypeError). The
rewards are the engine's; a game over terminates every agent; ``max_cycles`` steps of the engine
(plies of a turn-based game, rounds of a simultaneous one) truncate them.
"""

import numpy as np
from gymnasium import spaces

from vecenv import extras

try:
    from pettingzoo import AECEnv, ParallelEnv
except ImportError as e:
    raise extras.error("pettingzoo", "vecenv.pettingzoo") from e

from vecenv import registry
from vecenv.engine import Engine
from vecenv.gym.spaces import field_space
from vecenv.kernels.turns import ACTIVE

LEGAL = "legal"


class _Game:
    """The engine of one episode and what both faces derive from its spec."""

    def __init__(self, game, render_mode, max_cycles, configuration):
        spec = registry.get_spec(game)
        if spec.num_agents < 2:
            raise ValueError(f"{spec.name} is a one-agent game: use its Gymnasium Env")
        limit = {} if max_cycles is None else {"max_episode_steps": int(max_cycles)}
        self.engine = engine = Engine(
            game, num_envs=1, autoreset="disabled", **limit, **configuration
        )
        if "status" not in engine.state_dtype.names:
            raise ValueError(f"{spec.name} keeps no statuses: PettingZoo needs to know who acts")
        renderer = registry.game_module(game, "render")
        modes = [m for m in ("ansi", "rgb_array") if hasattr(renderer, m)] if renderer else []
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"render_mode must be one of {modes}, got {render_mode!r}")
        self.metadata = {"render_modes": modes, "name": spec.name, "is_parallelizable": True}
        self.render_mode = render_mode
        self.agents = [f"player_{k}" for k in range(engine.num_agents)]
        self.fields = [f for f in engine.observation if f.name != LEGAL]
        self.legal = next((f for f in engine.observation if f.name == LEGAL), None)
        self.low = int(engine.action.low[0])
        self.moves = int(engine.action.high[0]) - self.low + 1
        observation = spaces.Dict({f.name: field_space(f) for f in self.fields})
        mask = spaces.Box(0, 1, (self.moves,), dtype=np.int8)
        space = spaces.Dict({"observation": observation, "action_mask": mask})
        self.observation_spaces = dict.fromkeys(self.agents, space)
        action = spaces.Discrete(self.moves, start=self.low)
        self.action_spaces = dict.fromkeys(self.agents, action)
        shared = [f for f in self.fields if f.shared]
        self.board = shared[0] if shared else None
        self.row = np.zeros((1, engine.num_agents), dtype=np.int64)

    def active(self, k):
        return self.engine.states["status"][0, k] == ACTIVE

    def observe(self, k):
        engine = self.engine
        observation = {
            # np.array: a copy, and a 0-d array (not a numpy scalar) for a scalar field
            f.name: np.array(engine.obs[f.name][0] if f.shared else engine.obs[f.name][0, k])
            for f in self.fields
        }
        mask = np.zeros(self.moves, dtype=np.int8)
        if self.active(k):
            if self.legal is None:
                mask[:] = 1
            else:  # the mover's moves: a shared mask, or its own row of a per-agent one
                mask[:] = engine.obs[LEGAL][0] if self.legal.shared else engine.obs[LEGAL][0, k]
        return {"observation": observation, "action_mask": mask}

    def check(self, agent, action):
        # Discrete takes True for 1; the engine refuses bools, and so do we.
        if isinstance(action, (bool, np.bool_)) or (
            isinstance(action, np.ndarray) and action.dtype == np.bool_
        ):
            raise TypeError(f"{agent}'s action must be an integer, got {action!r}")
        if action not in self.action_spaces[agent]:
            raise ValueError(f"{agent}'s action {action!r} is outside {self.action_spaces[agent]}")

    def step(self, moves):
        """Step the engine with {agent index: move}; returns (rewards, terminated, truncated)."""
        row = self.row
        row[0] = self.low
        for k, move in moves.items():
            row[0, k] = move
        _, rewards, terminated, truncated = self.engine.step(row)
        return rewards[0], bool(terminated[0]), bool(truncated[0]) and not terminated[0]

    def state(self):
        if self.board is None:
            raise AttributeError(f"{self.metadata['name']} has no shared board to be its state")
        return self.engine.obs[self.board.name][0].copy()

    def render(self):
        if self.render_mode is None:
            return None
        return self.engine.render(0, self.render_mode)


class _Face:
    """What both faces share: spaces, state, render."""

    def _setup(self, game, render_mode, max_cycles, configuration):
        self._game = _Game(game, render_mode, max_cycles, configuration)
        self.metadata = self._game.metadata
        self.render_mode = render_mode
        self.possible_agents = list(self._game.agents)
        self.observation_spaces = self._game.observation_spaces
        self.action_spaces = self._game.action_spaces
        if self._game.board is not None:
            self.state_space = field_space(self._game.board)

    @property
    def engine(self):
        """The underlying one-episode engine."""
        return self._game.engine

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def state(self):
        return self._game.state()

    def render(self):
        return self._game.render()

    def close(self):
        pass


class GameAEC(_Face, AECEnv):
    """One episode of a game of several agents as a PettingZoo ``AECEnv``."""

    def __init__(self, game, render_mode=None, max_cycles=None, **configuration):
        AECEnv.__init__(self)
        self._setup(game, render_mode, max_cycles, configuration)

    def _index(self, agent):
        return self.possible_agents.index(agent)

    def _acting(self):
        return [a for a in self.agents if self._game.active(self._index(a))]

    def reset(self, seed=None, options=None):
        self.engine.reset(seed=seed, position=(options or {}).get("position"))
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._pending = {}
        acting = self._acting()
        self.agent_selection = acting[0] if acting else self.agents[0]

    def observe(self, agent):
        return self._game.observe(self._index(agent))

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._game.check(agent, action)
        self._cumulative_rewards[agent] = 0.0
        self._pending[self._index(agent)] = int(action)
        waiting = [a for a in self._acting() if self._index(a) not in self._pending]
        if waiting:  # a simultaneous game: the others act before the engine steps
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self.agent_selection = waiting[0]
            return
        rewards, terminated, truncated = self._game.step(self._pending)
        self._pending = {}
        self.rewards = {a: float(rewards[self._index(a)]) for a in self.agents}
        for a in self.agents:
            self.terminations[a] = terminated
            self.truncations[a] = truncated
        self._accumulate_rewards()
        acting = self._acting()
        if acting and not (terminated or truncated):
            self.agent_selection = acting[0]
        else:  # over: each agent in turn is stepped out with None
            self.agent_selection = self.agents[(self.agents.index(agent) + 1) % len(self.agents)]


class GameParallel(_Face, ParallelEnv):
    """One episode of a game of several agents as a PettingZoo ``ParallelEnv``."""

    def __init__(self, game, render_mode=None, max_cycles=None, **configuration):
        self._setup(game, render_mode, max_cycles, configuration)
        self.agents = []

    def reset(self, seed=None, options=None):
        self.engine.reset(seed=seed, position=(options or {}).get("position"))
        self.agents = list(self.possible_agents)
        observations = {a: self._game.observe(k) for k, a in enumerate(self.agents)}
        return observations, {a: {} for a in self.agents}

    def step(self, actions):
        index = {a: k for k, a in enumerate(self.possible_agents)}
        for agent, action in actions.items():
            if agent not in self.agents:
                raise ValueError(f"{agent} is no live agent ({self.agents})")
            self._game.check(agent, action)
        # A missing action of an agent to move would be played as the lowest move.
        missing = [a for a in self.agents if a not in actions and self._game.active(index[a])]
        if missing:
            raise ValueError(f"no action for {', '.join(missing)}, who must act this step")
        rewards, terminated, truncated = self._game.step(
            {index[a]: int(m) for a, m in actions.items()}
        )
        live = self.agents
        out = (
            {a: self._game.observe(index[a]) for a in live},
            {a: float(rewards[index[a]]) for a in live},
            dict.fromkeys(live, terminated),
            dict.fromkeys(live, truncated),
            {a: {} for a in live},
        )
        if terminated or truncated:
            self.agents = []
        return out


def env(game, **kwargs):
    """The AEC environment of ``game`` (a game of several agents)."""
    return GameAEC(game, **kwargs)


def parallel_env(game, **kwargs):
    """The Parallel environment of ``game``: every live agent's action in one call."""
    return GameParallel(game, **kwargs)


__all__ = ["GameAEC", "GameParallel", "env", "parallel_env"]
