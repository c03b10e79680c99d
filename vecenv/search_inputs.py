"""What a search (``vecenv.search``) is handed, checked before anything is compiled or
allocated: the game, the settings' numbers, a mask, and a Python evaluator's answers. Each check
raises ValueError naming what is wrong."""

import dataclasses
import math

import numpy as np

from . import registry
from .spec import is_integer


def positive(value, what, high):
    if not is_integer(value) or not 1 <= value <= high:
        raise ValueError(f"{what} must be an integer in [1, {high}], got {value!r}")
    return int(value)


def finite(value, what, low=-math.inf, high=math.inf, low_open=False):
    """``value`` as a float, or ValueError unless it is a finite number in the interval."""
    x = float(value) if isinstance(value, (int, float, np.number)) else math.nan
    inside = (low < x if low_open else low <= x) and x <= high
    if isinstance(value, bool) or not math.isfinite(x) or not inside:
        left = "(" if low_open else "["
        raise ValueError(f"{what} must be a finite number in {left}{low}, {high}], got {value!r}")
    return x


def check_perfect_information(game):
    """A ValueError for a game with hidden information (``registry.hidden_information``): the
    search reads and steps whole records, the cards no seat may see included, so its moves would
    be a cheat's."""
    if registry.hidden_information(game):
        raise ValueError(
            f"{registry.resolve(game)} has hidden information: the search would read every "
            "agent's cards from the records it steps; mcts plays games of perfect information"
        )


@dataclasses.dataclass(frozen=True)
class Searchable:
    """What the search needs of a game it can search: the action value of index 0, the number
    of actions, (the observation field index, shared) of its ``legal`` mask or None, and whether
    it declares chance."""

    low: int
    num_actions: int
    legal: tuple
    chance: bool


def searchable(engine, device="cpu"):
    """``Searchable`` of the engine's game, or ValueError saying why it cannot be searched: one
    or two agents (two keep Kaggle's statuses), one discrete action each, perfect information;
    the GPU search plays two-agent games without chance."""
    name = engine.name
    check_perfect_information(name)
    action = engine.action
    chance = registry.chance(name)
    if engine.num_agents not in (1, 2):
        raise ValueError(f"{name} has {engine.num_agents} agents: the search plays one or two")
    if device != "cpu" and (engine.num_agents == 1 or chance):
        raise ValueError(
            f"{name}: the GPU search plays two-agent games without chance; search it on the CPU"
        )
    if not action.discrete or action.shape != ():
        raise ValueError(f"{name}'s actions are not one discrete choice: it cannot be searched")
    fields = engine.state_dtype.fields
    status = fields.get("status")
    if engine.num_agents == 2 and (
        status is None or status[0].shape != (2,) or fields.get("reward") is None
    ):
        raise ValueError(
            f"{name} keeps no Kaggle statuses and rewards (vecenv.kernels.turns): the search "
            "finds the seat to move from them"
        )
    low = int(action.low[0])
    num_actions = int(action.high[0]) - low + 1
    if not 1 <= num_actions <= 2**20:
        raise ValueError(f"{name} has {num_actions} actions: too many to search")
    legal = None
    for k, f in enumerate(engine.observation):
        if f.name != "legal":
            continue
        if f.dtype != np.bool_ or f.shape != (num_actions,):
            raise ValueError(
                f"{name}'s 'legal' observation must be bool of shape ({num_actions},), "
                f"one per action; it is {f.dtype} {f.shape}"
            )
        legal = (k, f.shared)
    return Searchable(low, num_actions, legal, chance)


def bool_mask(mask, n, what):
    m = np.asarray(mask)
    if m.dtype != np.bool_ or m.shape != (n,):
        raise ValueError(f"{what} must be a bool array of shape ({n},), got {m.dtype} {m.shape}")
    return m


def float_array(value, shape, what, limit=np.inf):
    """The evaluator's ``value`` as a float64 array of ``shape`` with finite real entries of at
    most ``limit`` in size, or ValueError naming it."""
    if np.iscomplexobj(value):
        raise ValueError(f"the evaluator's {what} must be real numbers")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the evaluator's {what} must be numbers: {exc}") from None
    if arr.shape != shape:
        raise ValueError(f"the evaluator's {what} must have shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"the evaluator's {what} must be finite")
    if (np.abs(arr) > limit).any():
        raise ValueError(
            f"the evaluator's {what} must be within +-{limit:.3g} (a node's mean of up to "
            "every simulation's value would overflow)"
        )
    return np.ascontiguousarray(arr)
