"""A game's specification: the JSON file in its folder, read once and turned into typed parts.

The format is kaggle-environments' (``name``, ``title``, ``description``, ``version``, ``agents``,
``configuration``, ``observation``, ``action``, ``reward``) plus what arrays need: each observation
field has ``shape``, ``dtype``, ``low``/``high`` (and ``shared`` when stored once for all agents);
the action is either Kaggle's integer schema (``minimum``/``maximum``: a discrete action) or an
``array`` with ``shape``, ``dtype``, ``low`` and ``high`` (a continuous one). ``gym`` holds the
registration details (id, max_episode_steps, reward_threshold) and ``render`` the frame rate.
Every face derives its spaces and specs from this object; none hard-codes a game.

Shapes, action bounds and observation bounds may depend on the configuration: a string there is an
arithmetic expression over integer configuration keys (``"rows * columns"``, ``"columns - 1"``).
``observation_fields(config)`` and ``action_spec(config)`` resolve them; ``observation`` and
``action`` are the same at the default configuration. A configuration entry's ``high`` is a
maximum for the engine only (Kaggle's exported schema leaves it out).
"""

import ast
import json
import math
import numbers
import operator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import protocol

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.USub: operator.neg,
}


def is_integer(value):
    """An int or numpy integer, and not a bool (which Python counts as an integer)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def evaluate(expression, config):
    """The value of an arithmetic expression over configuration keys (no other names, no calls)."""

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and node.id in config:
            return config[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.operand))
        raise ValueError(f"cannot evaluate {expression!r} over configuration {sorted(config)}")

    return ev(ast.parse(expression, mode="eval"))


def _bound(value, dtype, config):
    """JSON has no infinity: "inf"/"-inf" and "max"/"-max" (the dtype's largest finite) stand in;
    any other string is an expression over the configuration."""
    if isinstance(value, str):
        if value.lstrip("-") in ("max", "inf"):
            big = np.finfo(dtype).max if value.lstrip("-") == "max" else np.inf
            return -big if value.startswith("-") else big
        return evaluate(value, config)
    return value


def _number(value):
    """A configuration number from JSON, where "inf" and "-inf" stand for the infinities."""
    return float(value) if isinstance(value, str) and value.lstrip("-") == "inf" else value


def _flatten(values):
    if isinstance(values, (list, tuple)):
        return [x for v in values for x in _flatten(v)]
    return [values]


def _bounds(values, shape, dtype, config):
    kind = np.float64 if np.dtype(dtype).kind == "f" else np.dtype(dtype)
    arr = np.array([_bound(v, dtype, config) for v in _flatten(values)], dtype=kind)
    if arr.size == 1:
        # One bound for every cell: a read-only broadcast, no memory of the shape's size (reading
        # a spec, as listing the games does, must not allocate a huge observation's bounds).
        return np.broadcast_to(arr.astype(dtype)[0], shape)
    return arr.reshape(shape).astype(dtype)


def _flat_bounds(values, shape, dtype, config):
    """A continuous action's bounds per flat component, as float64."""
    arr = _bounds(values, shape, dtype, config)
    if arr.size and all(stride == 0 for stride in arr.strides):  # one bound: stay a broadcast
        return np.broadcast_to(np.float64(arr.flat[0]), (arr.size,))
    return arr.astype(np.float64).ravel()


# kaggle-environments' base configuration, which every Kaggle game's configuration extends.
KAGGLE_BASE_CONFIGURATION = {
    "episodeSteps": {
        "description": "Maximum number of steps in the episode.",
        "type": "integer",
        "minimum": 1,
        "default": 1000,
    },
    "actTimeout": {
        "description": "Maximum runtime (seconds) to obtain an action from an agent.",
        "type": "number",
        "minimum": 0,
        "default": 6,
    },
    "runTimeout": {
        "description": "Maximum runtime (seconds) of an episode (not necessarily DONE).",
        "type": "number",
        "minimum": 0,
        "default": 1200,
    },
}


def _discrete_bound(entry, key, kaggle_key, config):
    """A discrete action's bound for the engine: ``low``/``high`` where the game narrows Kaggle's
    schema (connectx's has no maximum; the engine's is ``columns - 1``), else the schema's."""
    value = entry.get(key, entry.get(kaggle_key))
    return np.array([_bound(value, np.int64, config)], dtype=np.float64)


def _config_entry(key, entry):
    kind = entry.get("type", "number")
    default = entry.get("default")
    # ``high`` narrows Kaggle's schema for the engine alone, as a discrete action's does: a Kaggle
    # game keeps the reference's schema (connectx has no maximum) and still has bounded sizes.
    maximum = entry.get("maximum")
    if "high" in entry:
        maximum = entry["high"] if maximum is None else min(maximum, entry["high"])
    return ConfigEntry(
        name=key,
        type=kind,
        default=_number(default) if kind == "number" else default,
        minimum=entry.get("minimum"),
        maximum=maximum,
        enum=tuple(entry["enum"]) if "enum" in entry else None,
        description=entry.get("description", ""),
        infinite=bool(entry.get("infinite", False)),
    )


@dataclass(frozen=True)
class ObservationField:
    name: str
    shape: tuple
    dtype: np.dtype
    low: np.ndarray
    high: np.ndarray
    shared: bool
    description: str


@dataclass(frozen=True)
class ActionSpec:
    discrete: bool
    shape: tuple  # one agent's action shape: () for a discrete choice
    dtype: np.dtype  # what the public spaces use
    low: np.ndarray  # per flat component, float64
    high: np.ndarray
    description: str

    @property
    def width(self):
        """Flat components of one agent's action."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def kernel_dtype(self):
        """The dtype actions have inside the kernels: exact for every value the space admits."""
        return np.dtype(np.int64) if self.discrete else np.dtype(np.float64)


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    type: str  # "integer", "number", "boolean" or "string" (an enum)
    default: object
    minimum: object = None
    maximum: object = None
    enum: tuple = None
    description: str = ""
    infinite: bool = False  # a number that may be +-inf (the spec says "infinite": true)

    @property
    def record_dtype(self):
        return {"integer": np.int64, "number": np.float64, "boolean": np.bool_}.get(
            self.type, np.int64
        )

    def describe_allowed(self):
        if self.enum is not None:
            return f"one of {list(self.enum)}"
        if self.type == "boolean":
            return "a boolean"
        lo = "-inf" if self.minimum is None else self.minimum
        hi = "inf" if self.maximum is None else self.maximum
        kind = "an integer" if self.type == "integer" else "a number"
        finite = "" if self.type == "integer" or self.infinite else " (finite)"
        return f"{kind} in [{lo}, {hi}]{finite}"

    def check(self, value):
        """Return ``value`` normalised, or raise ValueError naming the key and what is allowed."""

        def fail():
            raise ValueError(
                f"configuration {self.name!r} must be {self.describe_allowed()}, got {value!r}"
            )

        if self.enum is not None:
            if value not in self.enum:
                fail()
            return value
        if self.type == "boolean":
            if not isinstance(value, (bool, np.bool_)):
                fail()
            return bool(value)
        if isinstance(value, (bool, np.bool_)):
            fail()
        if self.type == "integer":
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                value = int(value)
            if not isinstance(value, (int, np.integer)):
                fail()
            value = int(value)
            if not -(2**63) <= value < 2**63:  # the kernels hold it as an int64
                fail()
        else:
            if not isinstance(value, (int, float, np.integer, np.floating)):
                fail()
            value = float(value)
            if math.isnan(value) or (math.isinf(value) and not self.infinite):
                fail()
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            fail()
        return value

    def record_value(self, value):
        return self.enum.index(value) if self.enum is not None else value


def _agent_counts(agents):
    """A spec's ``agents``: a non-empty list of counts, each 1 to ``protocol.MAX_AGENTS``."""
    limit = protocol.MAX_AGENTS
    if (
        not isinstance(agents, (list, tuple))
        or not agents
        or not all(is_integer(a) and 1 <= a <= limit for a in agents)
    ):
        raise ValueError(f"agents must be a list of counts from 1 to {limit}, got {agents!r}")
    return tuple(int(a) for a in agents)


class GameSpec:
    """The parsed specification of one game."""

    def __init__(self, raw, folder=None):
        self.raw = raw
        self.folder = folder
        self.name = raw["name"]
        self.title = raw.get("title", self.name)
        self.description = raw.get("description", "")
        self.version = raw.get("version", "1.0.0")
        self.agents = _agent_counts(raw.get("agents", [1]))
        self.kaggle = raw.get("kaggle")  # a Kaggle game: played by the Kaggle face
        self.configuration = {
            key: _config_entry(key, entry) for key, entry in self._raw_configuration().items()
        }
        defaults = {key: entry.default for key, entry in self.configuration.items()}
        self.observation = self.observation_fields(defaults)
        self.action = self.action_spec(defaults)
        self.reward = raw.get("reward", {})
        self.gym = raw.get("gym", {})
        self.render = raw.get("render", {})

    def _raw_configuration(self):
        """The configuration's entries. A Kaggle game starts from Kaggle's base configuration
        (episodeSteps, actTimeout, runTimeout), where a bare value sets a base entry's default."""
        entries = dict(KAGGLE_BASE_CONFIGURATION) if self.kaggle is not None else {}
        for key, entry in self.raw.get("configuration", {}).items():
            if isinstance(entry, dict):
                entries[key] = entry
            elif key in entries:
                entries[key] = {**entries[key], "default": entry}
            else:
                raise ValueError(f"{self.name}: configuration {key!r} sets a default of no entry")
        return entries

    @classmethod
    def load(cls, path):
        path = Path(path)
        with open(path) as f:
            return cls(json.load(f), folder=path.parent)

    @staticmethod
    def _shape(entry, config):
        return tuple(int(_bound(n, np.int64, config)) for n in entry.get("shape", ()))

    def observation_fields(self, config):
        """The observation fields with shapes and bounds resolved for ``config``."""
        fields = []
        for name, entry in self.raw["observation"].items():
            if not isinstance(entry, dict):
                continue  # a Kaggle game setting the default of a face-kept field
            shape = self._shape(entry, config)
            dtype = np.dtype(entry.get("dtype", "float32"))
            fields.append(
                ObservationField(
                    name=name,
                    shape=shape,
                    dtype=dtype,
                    low=_bounds(entry.get("low", "-inf"), shape, dtype, config),
                    high=_bounds(entry.get("high", "inf"), shape, dtype, config),
                    shared=bool(entry.get("shared", False)),
                    description=entry.get("description", ""),
                )
            )
        return tuple(fields)

    def action_spec(self, config):
        """One agent's action with shape and bounds resolved for ``config``."""
        entry = self.raw["action"]
        if entry.get("type") == "integer":
            return ActionSpec(
                discrete=True,
                shape=(),
                dtype=np.dtype(entry.get("dtype", "int64")),
                low=_discrete_bound(entry, "low", "minimum", config),
                high=_discrete_bound(entry, "high", "maximum", config),
                description=entry.get("description", ""),
            )
        shape = self._shape(entry, config)
        dtype = np.dtype(entry.get("dtype", "float32"))
        return ActionSpec(
            discrete=False,
            shape=shape,
            dtype=dtype,
            low=_flat_bounds(entry["low"], shape, dtype, config),
            high=_flat_bounds(entry["high"], shape, dtype, config),
            description=entry.get("description", ""),
        )

    @property
    def num_agents(self):
        """The (largest) number of agents a game is played by."""
        return max(self.agents)

    def resolve_configuration(self, overrides):
        """Defaults overlaid with ``overrides``, each checked; unknown keys are a ValueError."""
        unknown = sorted(set(overrides) - set(self.configuration))
        if unknown:
            raise ValueError(
                f"{self.name} has no configuration {unknown[0]!r}; "
                f"known keys: {sorted(self.configuration)}"
            )
        config = {}
        for key, entry in self.configuration.items():
            config[key] = entry.check(overrides.get(key, entry.default))
        return config

    def config_dtype(self):
        fields = [(k, e.record_dtype) for k, e in self.configuration.items()]
        return np.dtype(fields or [("unused", np.int64)], align=True)

    def config_record(self, config):
        """The configuration as a one-element record array the kernels read."""
        rec = np.zeros(1, dtype=self.config_dtype())
        for key, entry in self.configuration.items():
            rec[key] = entry.record_value(config[key])
        return rec
