"""One episode of a Kaggle game on the engine, read and written in Kaggle's terms.

``Table`` holds a one-episode engine and translates both ways: Kaggle's actions (anything an agent
returned) into the engine's action row plus statuses for the agents that failed, and the engine's
record and observation arrays into Kaggle's per-agent states. Nothing here knows a game: the spec
says which observation fields exist, which are shared, which are absent at which value.
"""

import numpy as np

import vecenv
from vecenv.kernels.turns import ACTIVE, ERROR, INVALID, STATUS_NAMES, TIMEOUT

from .errors import DeadlineExceeded
from .schema import action_schema, check_value, kaggle_specification
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
        self.arrays = dict(zip(self.engine.obs, self.engine._obs, strict=True))
        self.fields = [f for f in self.engine.observation if f.name in self.kaggle_fields()]
        raw = spec.raw["observation"]
        self.absent = {f.name: raw[f.name].get("absent") for f in self.fields}
        self.record = self.engine._states[0:1]
        self._actions = np.zeros((1, self.num_agents), dtype=np.int64)

    def kaggle_fields(self):
        return kaggle_specification(self.spec)["observation"]

    # -- the engine's side ---------------------------------------------------------------------

    @property
    def codes(self):
        return self.record["status"][0]

    def reset(self, seed=None):
        self.engine.reset(seed=seed)

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
        for name, schema in self.kaggle_fields().items():
            if name == "remainingOverageTime":
                obs[name] = overage
            elif name == "step":
                if with_shared:
                    obs[name] = self.step_count
            elif name in self.arrays:
                if schema.get("shared", False) and not with_shared:
                    continue
                arr = self.arrays[name]
                value = _plain(arr[0] if schema.get("shared", False) else arr[0, k])
                if value != self.absent[name] or self.absent[name] is None:
                    obs[name] = value
            elif "defaults" in schema and len(schema["defaults"]) > k:
                obs[name] = schema["defaults"][k]
            elif "default" in schema:
                obs[name] = schema["default"]
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
