"""One episode of a Kaggle game on the engine, read and written in Kaggle's terms.

``Table`` holds a one-episode engine and translates both ways: Kaggle's actions (anything an agent
returned) into the engine's action row plus statuses for the agents that failed, and the engine's
record and observation arrays into Kaggle's per-agent states. Nothing here knows a game: the spec
says which observation fields exist, which are shared, which are absent at which value.
"""

import copy

import numpy as np

import vecenv
from vecenv.kernels.turns import ACTIVE, ERROR, INVALID, STATUS_NAMES, TIMEOUT

from .errors import DeadlineExceeded
from .schema import action_schema, cached_specification, check_value
from .structs import Struct

FAILED = {ERROR, INVALID, TIMEOUT}
CODES = {name: code for code, name in enumerate(STATUS_NAMES)}


def is_timeout(action):
    """A timed-out agent's action: this face's DeadlineExceeded or kaggle-environments' own."""
    return isinstance(action, DeadlineExceeded) or type(action).__name__ == "DeadlineExceeded"


def _plain(value):
    """A numpy value as the JSON-like Python value Kaggle's states hold."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        v = float(value)
        return int(v) if v.is_integer() else v
    return value


class Table:
    """A one-episode engine of game ``name`` with Kaggle's view of it."""

    def __init__(self, name, engine_config, seed=None):
        self.engine = vecenv.make(
            name, num_envs=1, seed=seed, autoreset="disabled", **engine_config
        )
        spec = self.engine.spec
        self.spec = spec
        self.num_agents = spec.num_agents
        self.schema = action_schema(spec)
        action = self.engine.action
        self.low, self.high = int(action.low[0]), int(action.high[0])
        # One past the range: the move a Kaggle game's rules refuse (kernels/turns); the engine
        # of this table lets it through to them.
        self.refused = self.high + 1
        self.engine._act_high = self.engine._act_high + 1
        arrays = dict(zip(self.engine.obs, self.engine._obs, strict=True))
        raw = spec.raw["observation"]
        # How each of Kaggle's observation fields is read, worked out once: (name, where from,
        # shared, the array or the value, the value meaning absent).
        self.plan = []
        for name, schema in cached_specification(spec)["observation"].items():
            shared = schema.get("shared", False)
            if name in ("remainingOverageTime", "step"):
                self.plan.append((name, name, shared, None, None))
            elif name in arrays:
                self.plan.append((name, "array", shared, arrays[name], raw[name].get("absent")))
            elif "defaults" in schema or "default" in schema:  # one value per seat, or for all
                value = (schema.get("defaults", []), schema.get("default"), "default" in schema)
                self.plan.append((name, "defaults", shared, value, None))
        self.record = self.engine._states[0:1]
        self._actions = np.zeros((1, self.num_agents), dtype=np.int64)

    # -- the engine's side ---------------------------------------------------------------------

    @property
    def codes(self):
        return self.record["status"][0]

    def reset(self, seed=None):
        self.engine.reset(seed=seed)

    def start(self, states, step):
        """Start from Kaggle's agent ``states`` (filled in by the schema, as a state given
        through ``steps``), ``step`` steps into the episode. A position the rules cannot
        represent raises the engine's ``PositionError``."""
        self.start_position(self.position(states, step))

    def start_position(self, position):
        self.engine.reset(position=position)

    def position(self, states, step):
        """The engine's position for Kaggle's agent ``states``: the shared fields as the first
        agent's state holds them (Kaggle's interpreters read them there), the others per agent;
        a field at Kaggle's default is the game's start."""
        observation = {}
        for name, source, shared, _, absent in self.plan:
            if source != "array":
                continue
            schema = cached_specification(self.spec)["observation"][name]
            if shared:
                value = states[0]["observation"].get(name)
                if value is not None and value != schema.get("default"):
                    observation[name] = value
                continue
            values = [s["observation"].get(name) for s in states]
            defaults = schema.get("defaults", [schema.get("default")] * len(states))
            if values != list(defaults[: len(values)]):
                observation[name] = [absent if v is None else v for v in values]
        return {
            "observation": observation,
            "status": [s["status"] for s in states],
            "reward": [s["reward"] for s in states],
            "step": step,
        }

    def play(self, actions):
        """Step with Kaggle's actions, one per agent (an exception means the agent failed).
        Returns the actions as Kaggle records them (None for a failed agent)."""
        codes = self.codes
        recorded = [None] * self.num_agents
        row = self._actions[0]
        for k, action in enumerate(actions):
            row[k] = self.low
            if is_timeout(action):
                codes[k] = TIMEOUT
                continue
            if isinstance(action, BaseException):
                codes[k] = ERROR
                continue
            err, data = check_value(self.schema, action)
            if err is not None:
                codes[k] = INVALID
                continue
            recorded[k] = data
            if isinstance(data, int) and self.low <= data <= self.high:
                row[k] = data
            else:
                # Passes Kaggle's schema but is no move of the game (an integral float too, where
                # Kaggle's connectx raises a TypeError): the rules refuse it as they refuse any
                # action past the range, and only if it is this agent's turn, as Kaggle's do.
                row[k] = self.refused
        self.engine.step(self._actions)
        return recorded

    # -- Kaggle's side -------------------------------------------------------------------------

    def statuses(self):
        return [STATUS_NAMES[c] for c in self.codes]

    def rewards(self):
        reward = self.record["reward"][0]
        return [None if c in FAILED else _plain(reward[k]) for k, c in enumerate(self.codes)]

    @property
    def done(self):
        return not (self.codes == ACTIVE).any()

    @property
    def step_count(self):
        return int(self.record["step"][0])

    def observation(self, k, overage, with_shared):
        """Agent ``k``'s observation as Kaggle's state holds it: its own fields, and the shared
        ones (and ``step``) when ``with_shared`` (Kaggle keeps those in the first agent's only)."""
        obs = {}
        for name, source, shared, value, absent in self.plan:
            if shared and not with_shared:
                continue
            if source == "remainingOverageTime":
                obs[name] = overage
            elif source == "step":
                obs[name] = self.step_count
            elif source == "array":
                value = _plain(value[0] if shared else value[0, k])
                if absent is None or value != absent:
                    obs[name] = value
            else:
                defaults, default, has_default = value
                if len(defaults) > k:
                    obs[name] = defaults[k]
                elif has_default:
                    obs[name] = copy.deepcopy(default)
        return obs

    def state(self, recorded, overages):
        """Every agent's Kaggle state after the last step."""
        rewards = self.rewards()
        statuses = self.statuses()
        return [
            Struct(
                action=recorded[k],
                reward=rewards[k],
                info=Struct(),
                observation=Struct(**self.observation(k, overages[k], k == 0)),
                status=statuses[k],
            )
            for k in range(self.num_agents)
        ]
