"""The search's checks of what it is handed (``vecenv.search``), each refused with a ValueError
naming it: the game (one it can search: perfect information, one discrete action per agent) and
the settings, before anything is compiled or allocated; the trees' memory budget; at each search
the masks and the searching seats; the evaluator's answers."""

import dataclasses
import math
import os

import numpy as np

from vecenv.kernels.turns import ACTIVE

from . import memory, registry
from .spec import is_integer

# The trees' default memory: more positions than it holds are searched in batches (the same
# results), so a large batch never takes the whole memory budget.
TREE_BYTES = 256 * 2**20
# The float settings' range: every sum and product the selections form of them (Gumbel's
# ``(maxvisit_init + visits) * value_scale`` over Q in [0, 1], PUCT's ``sqrt(N) * (c_init +
# log((N + c_base + 1) / c_base))``, a Dirichlet draw's logarithm ``log(u) / alpha``) stays
# finite inside it, so a search never answers NaN; past it a setting means nothing more anyway.
SETTING_LIMIT = 1e100


def positive(value, what, high):
    if not is_integer(value) or not 1 <= value <= high:
        raise ValueError(f"{what} must be an integer in [1, {high}], got {value!r}")
    return int(value)


def finite(value, what, low=-math.inf, high=math.inf, low_open=False):
    """``value`` as a float, or ValueError unless it is a finite number in the interval."""
    try:
        x = float(value) if isinstance(value, (int, float, np.floating, np.integer)) else math.nan
    except OverflowError:  # an int past float's range
        x = math.inf
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


def check_searchable_game(game):
    """A ValueError for a game the agent ``mcts`` cannot play: one of hidden information
    (``check_perfect_information``) or of more than two agents (the search backs a value up
    for one agent, or for two whose gains are each other's losses)."""
    check_perfect_information(game)
    agents = registry.get_spec(game).num_agents
    if agents > 2:
        raise ValueError(
            f"{registry.resolve(game)} has {agents} agents: the search plays games of one or two"
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


def searching_seats(states, mask, seats, num_agents, name):
    """The seat searching each position of ``states`` (``seats``, checked, where given) and which
    positions run (not over, with a seat to move): a one-agent game's agent moves until its
    episode ends. ``mask``: the positions to search, where a seat must be to move."""
    n = states.shape[0]
    if num_agents == 1:
        if seats is not None and not (np.asarray(seats) == 0).all():
            raise ValueError(f"{name} has one agent: seats must be 0")
        return np.zeros(n, dtype=np.int64), states["done"] == 0
    active = states["status"] == ACTIVE
    running = (states["done"] == 0) & active.any(axis=1)
    if seats is None:
        both = mask & running & active.all(axis=1)
        if both.any():
            raise ValueError(
                f"both seats are to move in position {int(np.flatnonzero(both)[0])}: name "
                "the searching seat with seats="
            )
        return np.where(active[:, 0], 0, 1), running
    seats = np.asarray(seats)
    if seats.shape != (n,) or seats.dtype.kind not in "iu" or not np.isin(seats, (0, 1)).all():
        raise ValueError(f"seats must be ({n},) integers 0 or 1")
    seats = seats.astype(np.int64)
    idle = mask & running & ~active[np.arange(n), seats]
    if idle.any():
        i = int(np.flatnonzero(idle)[0])
        raise ValueError(f"seat {seats[i]} is not to move in position {i}")
    return seats, running


def tree_budget(memory_budget):
    """The bytes the trees may take and where that figure comes from: ``memory_budget`` where
    given, else ``VECENV_MEMORY_BUDGET`` where set (the user's own figure, which the command
    line's agents read too), else the less of ``TREE_BYTES`` and vecenv's default budget."""
    if memory_budget is not None:
        return memory.budget(memory_budget), "memory_budget="
    if os.environ.get(memory.ENV_VAR):
        return memory.budget(), memory.ENV_VAR
    budget = min(memory.budget(), TREE_BYTES)
    return budget, f"the trees' default share; {memory.ENV_VAR} replaces it"


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
