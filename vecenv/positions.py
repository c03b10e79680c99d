"""Starting positions: episodes that begin where the caller says, not at the game's start.

``Engine.reset(position=...)`` takes a position as a dict:

- ``"observation"``: {field: value} for any of the game's observation fields; shared fields have
  the field's shape, per-agent ones a leading axis of agents (a one-agent game may leave it out);
  a field left out takes its value at the game's start;
- ``"status"``, ``"reward"``: one per agent, Kaggle's status names (or codes) and rewards, for
  games played by several agents: who is to move follows the statuses;
- ``"step"``: the steps already taken (for the time limit and rules that count rounds), 0 if left
  out;
- the game's own keys, where its rules name them in ``POSITION_KEYS`` (chess: ``"fen"``), handed
  to its position hook as given.

Everything here is checked against the game's spec before the game's ``position`` hook
(``kernels/position.py``) builds the records, and the records are checked as ``set_state`` checks
them, so a bad position raises ``PositionError`` and leaves every episode as it was.
"""

from collections.abc import Mapping

import numpy as np

from vecenv.kernels.position import PositionError
from vecenv.kernels.turns import STATUS_NAMES

from .spec import is_integer

KEYS = ("observation", "status", "reward", "step")


def _where(field, index, shared):
    """(agent, field with its cell) of the first bad value at ``index``."""
    if shared:
        cell = index
        agent = None
    else:
        agent, cell = index[0], index[1:]
    cell = "".join(f"[{i}]" for i in cell)
    return agent, f"observation.{field}{cell}"


def _observation_field(field, value, num_agents):
    name = f"observation.{field.name}"
    shape = field.shape if field.shared else (num_agents,) + field.shape
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nesting and the like
        raise PositionError(name, f"is no array of numbers ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise PositionError(name, f"must hold numbers, got {value!r:.80}")
    if not field.shared and num_agents == 1 and arr.shape == field.shape:
        arr = arr.reshape(shape)
    if arr.shape != shape:
        if arr.ndim == 1 and len(shape) == 1:
            raise PositionError(name, f"has {arr.size} values; the game's has {shape[0]}")
        raise PositionError(name, f"must have shape {shape}, got {arr.shape}")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise PositionError(name, "must be finite")
    cast = arr.astype(field.dtype)
    if not np.array_equal(cast, arr):
        raise PositionError(name, f"must be values of dtype {field.dtype}")
    bad = (cast < field.low) | (cast > field.high)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        agent, where = _where(field.name, index, field.shared)
        lo = field.low[index[0 if field.shared else 1 :]]
        hi = field.high[index[0 if field.shared else 1 :]]
        raise PositionError(where, f"{cast[index]} is outside the game's [{lo}, {hi}]", agent)
    return cast


def _per_agent(name, values, num_agents):
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__"):
        raise PositionError(name, f"must give one value per agent, got {values!r:.80}")
    if len(values) != num_agents:
        raise PositionError(
            name, f"must give {num_agents} values, one per agent, got {len(values)}"
        )
    return list(values)


def _statuses(values, num_agents):
    codes = []
    for k, value in enumerate(_per_agent("status", values, num_agents)):
        if isinstance(value, str) and value in STATUS_NAMES:
            codes.append(STATUS_NAMES.index(value))
        elif is_integer(value) and 0 <= value < len(STATUS_NAMES):
            codes.append(int(value))
        else:
            raise PositionError("status", f"{value!r} is none of {list(STATUS_NAMES)}", k)
    return np.asarray(codes, dtype=np.int8)


def _rewards(values, num_agents):
    out = np.zeros(num_agents, dtype=np.float64)
    for k, value in enumerate(_per_agent("reward", values, num_agents)):
        number = isinstance(value, (int, float, np.integer, np.floating))
        if not number or isinstance(value, (bool, np.bool_)) or not np.isfinite(value):
            raise PositionError("reward", f"{value!r} is no finite number", k)
        out[k] = value
    return out


def checked(engine, position):
    """``position`` checked against the game's spec: (the dict the hook is given, the step)."""
    if not isinstance(position, Mapping):
        raise PositionError("position", f"must be a dict, got {type(position).__name__}")
    own = tuple(getattr(engine.rules, "POSITION_KEYS", ()))
    unknown = [key for key in position if key not in KEYS + own]
    if unknown:
        known = ", ".join(KEYS + own)
        raise PositionError(str(unknown[0]), f"is no part of a position ({known})")
    observation = position.get("observation", {})
    if not isinstance(observation, Mapping):
        raise PositionError("observation", f"must be a dict, got {type(observation).__name__}")
    fields = {f.name: f for f in engine.observation}
    given = {"observation": {}}
    for name, value in observation.items():
        if name not in fields:
            raise PositionError(
                f"observation.{name}", f"is none of the game's fields ({', '.join(fields)})"
            )
        given["observation"][name] = _observation_field(fields[name], value, engine.num_agents)
    for key, parse in (("status", _statuses), ("reward", _rewards)):
        if key in position:
            given[key] = parse(position[key], engine.num_agents)
    for key in own:  # the game's own keys (chess's "fen"), as given: its hook checks them
        if key in position:
            given[key] = position[key]
    step = position.get("step", 0)
    limit = engine.max_episode_steps
    if not is_integer(step) or step < 0 or (limit is not None and step >= limit):
        bound = "" if limit is None else f" below the time limit {limit}"
        raise PositionError("step", f"must be an integer >= 0{bound}, got {step!r}")
    return given, int(step)


def records(engine, position, count):
    """``count`` state records (engine header zeroed) for ``position``: one dict for all, or a
    sequence of ``count`` dicts."""
    hook = getattr(engine.rules, "position", None)
    if hook is None:
        raise ValueError(
            f"{engine.name} takes no starting positions: its rules define no position hook"
        )
    if isinstance(position, Mapping):
        positions = [position] * count
    else:
        positions = list(position) if isinstance(position, (list, tuple)) else None
        if positions is None or len(positions) != count:
            raise PositionError(
                "position", f"must be a dict or a list of {count} dicts (one per episode reset)"
            )
    out = np.zeros(count, dtype=engine.state_dtype)
    built = {}  # the same dict builds the same record: build it once
    for j, p in enumerate(positions):
        if id(p) in built:
            out[j] = out[built[id(p)]]
            continue
        try:
            given, step = checked(engine, p)
            hook(out[j], engine.config, given)
        except PositionError as exc:
            if count == 1 or isinstance(position, Mapping):
                raise
            raise PositionError(exc.field, f"{exc.reason} (position {j})", exc.agent) from None
        out[j]["step"] = step
        built[id(p)] = j
    try:
        engine.check_state(out)
    except ValueError as exc:
        raise PositionError("position", f"gives a state the rules cannot run: {exc}") from None
    return out
