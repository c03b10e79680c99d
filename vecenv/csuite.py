"""The CSuite face: deepmind/csuite's interface over one-episode engines.

``vecenv.csuite.load("catch")`` returns an environment with csuite's methods: ``start(seed)``,
``step(action) -> (observation, reward)``, ``render()``, ``get_state()``/``set_state(state)``,
``observation_spec()``/``action_spec()`` (dm_env specs), ``get_config()``; ``EnvName`` lists the
games; ``DMEnvFromCSuite`` (also as ``dm_env_wrapper.DMEnvFromCSuite``) adapts one to
``dm_env.Environment``. Batched use goes through ``vecenv.make`` or the Gymnasium faces instead.

csuite environments are continuing: an episode never terminates and has no time limit here.
Randomness comes from the episode's own stream (``vecenv.kernels.rng``), not from numpy, so draws
follow csuite's distributions but not its numbers. ``start(seed)`` gives the stream that episode 0
of ``vecenv.make(game, seed=seed)`` has. A state from ``get_state()`` is the engine's record (a
numpy record: ``state.paddle_x``, ``state["paddle_x"]``), random stream included, so restoring it
with ``set_state`` replays the same steps exactly.

No game is written here: everything comes from the specifications. A game is a csuite environment
when its spec has a top-level ``"csuite"`` object with these keys:

- ``name`` (required): its ``EnvName`` value (``"catch"``).
- ``observation_name``: the ``name`` of the observation spec; the observation field's name when
  absent, and ``None`` (dm_env's default) when null.
- ``action_name``: the ``name`` of the action spec; ``"action"`` when absent.
- ``observation_spec``: ``"BoundedArray"`` (default; bounds are the field's ``low``/``high``,
  written as scalars where they are uniform), ``"DiscreteArray"`` (an integer field of shape ()
  with ``low`` 0: ``num_values`` is ``high + 1``) or ``"Array"`` (no bounds).
- ``action_spec``: ``"DiscreteArray"`` (the default for integer actions, which must start at 0)
  or ``"BoundedArray"`` (the default for array actions).
- ``params``: the attributes of ``get_config()``'s object, in order, each an expression over the
  configuration (``{"rows": "rows", "observation_dim": "rows * columns + 3"}``) or a constant;
  when absent, the configuration keys in spec order.
- ``invalid_action``: the message of the ValueError an invalid action raises, with ``{action}``
  standing for it; a generic message when absent.

The single observation field is csuite's observation; the configuration keys are csuite's
constructor parameters (``seed`` excluded: ``load`` takes it beside them); the spec has no
``episodeSteps``.
"""

import copy
import dataclasses
import enum
import numbers
from collections.abc import Mapping

import numpy as np
from dm_env import specs

from . import csuite_dm as dm_env_wrapper
from . import registry
from .csuite_dm import DMEnvFromCSuite
from .engine import Engine
from .inputs import SEED_LIMIT, fresh_seed
from .spec import evaluate, is_integer

__all__ = ["EnvName", "Environment", "load", "DMEnvFromCSuite", "dm_env_wrapper"]

# csuite's message for stepping before starting, word for word.
STEP_WITHOUT_START_ERR = (
    "Environment state has not been initialized. `start` must be called before calling `step`."
)
_RENDER_WITHOUT_START_ERR = (
    "Environment state has not been initialized. `start` must be called before calling `render`."
)
# One Params dataclass per game (and attribute list), so configurations compare equal.
_PARAMS_TYPES = {}


def _csuite_games():
    """{csuite name: game folder} for every spec with a "csuite" section."""
    games = {}
    for folder, spec in registry.specs().items():
        section = spec.raw.get("csuite")
        if section is not None:
            games[section["name"]] = folder
    return games


_GAMES = _csuite_games()

EnvName = enum.Enum("EnvName", {value.upper(): value for value in sorted(_GAMES)}, module=__name__)
EnvName.__doc__ = "The csuite environments, valued by their csuite names."


def _check_seed(seed, what="seed"):
    """A seed as an int in [0, 2**64); larger ones are hashed down, as numpy accepts them."""
    if not is_integer(seed):
        raise TypeError(f"{what} must be a non-negative integer or None, got {seed!r}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"{what} must be a non-negative integer or None, got {seed!r}")
    if seed >= SEED_LIMIT:
        seed = int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
    return seed


def _bound(values):
    """A scalar where every component is the same (as csuite writes its bounds), else the array."""
    flat = np.asarray(values).ravel()
    if flat.size and (flat == flat[0]).all():
        return flat[0]
    return values


class Environment:
    """One csuite environment over a one-episode engine; made by :func:`load`."""

    def __init__(self, name, settings=None):
        name = EnvName(name)
        game = _GAMES[name.value]
        spec = registry.get_spec(game)
        if settings is None:
            settings = {}
        if not isinstance(settings, Mapping):
            raise TypeError(f"settings must be a dict, got {type(settings).__name__}")
        unknown = sorted(set(settings) - set(spec.configuration) - {"seed"})
        if unknown:
            known = ", ".join(list(spec.configuration) + ["seed"])
            raise TypeError(
                f"{name.value} got an unexpected setting {unknown[0]!r}; known: {known}"
            )
        settings = dict(settings)
        seed = settings.pop("seed", None)
        self._seed = None if seed is None else _check_seed(seed)
        if spec.num_agents != 1:
            raise ValueError(f"{spec.name} is played by {spec.num_agents} agents; csuite needs one")
        self._name = name
        self._section = spec.raw["csuite"]
        self._engine = Engine(
            game, num_envs=1, seed=0, autoreset="disabled", max_episode_steps=0, **settings
        )
        engine = self._engine
        if len(engine.observation) != 1:
            raise ValueError(f"{spec.name} has several observation fields; csuite needs one")
        field = engine.observation[0]
        buffer = engine.obs[field.name]
        # Index with an Ellipsis: a view even for a scalar observation (shape ()).
        self._obs = buffer[0, ...] if field.shared else buffer[0, 0, ...]
        self._observation_spec = self._make_observation_spec(field)
        self._action_spec = self._make_action_spec(engine.action)
        self._params_type, self._params = self._make_params(spec, engine.config)
        self._flat = np.zeros((1, engine.action.width), dtype=engine.action.kernel_dtype)
        self._started = False

    # -- specs ---------------------------------------------------------------------------------

    def _make_observation_spec(self, field):
        section = self._section
        name = section.get("observation_name", field.name)
        kind = section.get("observation_spec", "BoundedArray")
        if kind == "DiscreteArray":
            if field.shape != () or field.dtype.kind not in "iu" or int(field.low) != 0:
                raise ValueError(
                    f"{self._name.value}: a DiscreteArray observation needs an integer field of "
                    "shape () with low 0"
                )
            return specs.DiscreteArray(int(field.high) + 1, dtype=field.dtype, name=name)
        if kind == "Array":
            return specs.Array(field.shape, field.dtype, name=name)
        if kind == "BoundedArray":
            return specs.BoundedArray(
                field.shape, field.dtype, _bound(field.low), _bound(field.high), name=name
            )
        raise ValueError(f"{self._name.value}: unknown observation_spec {kind!r}")

    def _make_action_spec(self, action):
        section = self._section
        name = section.get("action_name", "action")
        kind = section.get("action_spec", "DiscreteArray" if action.discrete else "BoundedArray")
        if kind == "DiscreteArray":
            if not action.discrete or int(action.low[0]) != 0:
                raise ValueError(
                    f"{self._name.value}: a DiscreteArray action needs integer actions from 0"
                )
            return specs.DiscreteArray(int(action.high[0]) + 1, dtype=action.dtype, name=name)
        if kind == "BoundedArray":
            low = action.low.reshape(action.shape).astype(action.dtype)
            high = action.high.reshape(action.shape).astype(action.dtype)
            return specs.BoundedArray(
                action.shape, action.dtype, _bound(low), _bound(high), name=name
            )
        raise ValueError(f"{self._name.value}: unknown action_spec {kind!r}")

    def _make_params(self, spec, config):
        entries = self._section.get("params")
        if entries is None:
            entries = {key: key for key in spec.configuration}
        values = {
            key: evaluate(value, config) if isinstance(value, str) else value
            for key, value in entries.items()
        }
        key = (spec.name, tuple(values))
        params_type = _PARAMS_TYPES.get(key)
        if params_type is None:
            fields = [(name, type(value)) for name, value in values.items()]
            params_type = dataclasses.make_dataclass("Params", fields)
            params_type.__module__ = __name__
            params_type.__doc__ = f"Parameters of a {spec.title} instance."
            _PARAMS_TYPES[key] = params_type
        return params_type, values

    def observation_spec(self):
        """The dm_env spec every observation conforms to."""
        return self._observation_spec

    def action_spec(self):
        """The dm_env spec of the actions ``step`` takes."""
        return self._action_spec

    def get_config(self):
        """A fresh copy of the environment's parameters (csuite's ``Params``)."""
        return self._params_type(**copy.deepcopy(self._params))

    # -- episodes ------------------------------------------------------------------------------

    @property
    def started(self):
        """True once ``start`` (or ``set_state``) has given the environment a state."""
        return self._started

    @property
    def engine(self):
        """The underlying one-episode engine."""
        return self._engine

    def start(self, seed=None):
        """Start (or restart) the environment and return the first observation.

        ``seed`` None takes the ``seed`` the environment was loaded with; when that is None too,
        every start draws a fresh seed, as ``np.random.default_rng(None)`` does.
        """
        if seed is None:
            seed = self._seed
        seed = fresh_seed() if seed is None else _check_seed(seed)
        self._engine.reset(seed=seed)
        self._started = True
        return self._obs.copy()

    def _invalid_action(self, action):
        template = self._section.get("invalid_action")
        if template is not None:
            return ValueError(template.format(action=action))
        return ValueError(f"Invalid action: expected {self._action_spec!r}, received {action!r}.")

    def _set_action(self, action):
        spec = self._engine.action
        if spec.discrete:
            value = action
            if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biuf":
                value = value.item()
            # csuite checks ``action in [0, 1, ...]``: any number equal to a valid index passes.
            integral = isinstance(value, numbers.Integral) or (
                isinstance(value, numbers.Real) and float(value).is_integer()
            )
            if not integral:
                raise self._invalid_action(action)
            value = int(value)
            if not spec.low[0] <= value <= spec.high[0]:
                raise self._invalid_action(action)
            self._flat[0, 0] = value
            return
        try:
            arr = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError):
            raise self._invalid_action(action) from None
        if arr.shape != spec.shape or not np.isfinite(arr).all():
            raise self._invalid_action(action)
        self._flat[0] = arr.ravel()

    def step(self, action):
        """Take ``action``; return the next observation (a fresh array) and the reward (a float)."""
        if not self._started:
            raise RuntimeError(STEP_WITHOUT_START_ERR)
        self._set_action(action)
        self._engine.step_flat(self._flat)
        return self._obs.copy(), float(self._engine.rewards[0, 0])

    def render(self):
        """An RGB frame of the current state: uint8 of shape (height, width, 3)."""
        if not self._started:
            raise RuntimeError(_RENDER_WITHOUT_START_ERR)
        frame = np.asarray(self._engine.render(0, "rgb_array"))
        return frame.astype(np.uint8, copy=False)

    # -- state ---------------------------------------------------------------------------------

    def get_state(self):
        """A copy of the full state (random stream included); None before ``start``."""
        if not self._started:
            return None
        return self._engine.get_state(0).view(np.recarray)

    def set_state(self, state):
        """Restore a state from ``get_state``; a bad one raises ValueError and changes nothing."""
        if not isinstance(state, (np.ndarray, np.void)):
            raise ValueError(f"state must be a record from get_state(), got {type(state).__name__}")
        record = np.asarray(state)
        names = record.dtype.names or ()
        if "done" in names and (np.asarray(record["done"]) != 0).any():
            raise ValueError(
                "Invalid state: field 'done' must be 0 (a continuing environment never ends)."
            )
        self._engine.set_state(record, 0)
        self._started = True

    def __repr__(self):
        return f"<vecenv.csuite.Environment {self._name.value!r}>"


def load(name, settings=None):
    """Load a csuite environment.

    Args:
        name: an ``EnvName`` or its value (``"catch"``).
        settings: keyword arguments of csuite's constructor, as a dict: the game's parameters
            (see its specification) and ``seed``. An unknown key raises TypeError, a bad value
            ValueError.
    """
    return Environment(name, settings)
