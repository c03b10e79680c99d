"""The bytes a make would allocate, checked against a memory budget before anything is allocated.

A configuration is checked key by key against its spec's maxima, but sizes multiply: rows x
columns x num_envs of a board game, or a registered game's observation shape, can ask for more
memory than the machine has. ``check`` refuses such a make with a ValueError naming the sizes, so
that a typo fails at once instead of swapping or meeting the out-of-memory killer.

The default budget is 4 GiB, or half the physical memory where that is less: far above what any
built-in game needs at realistic batch sizes (a million connectx episodes take about 250 MB),
and below what would push a small machine into swap. ``VECENV_MEMORY_BUDGET`` (bytes, or with a
K/M/G/T suffix: ``16G``) or a make's ``memory_budget`` argument raises or lowers it.
"""

import math
import os
import re

import numpy as np

ENV_VAR = "VECENV_MEMORY_BUDGET"
DEFAULT_BUDGET = 4 * 2**30
MAX_NUM_ENVS = 2**30  # far beyond any budget already; keeps every index an int32 on a GPU
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def physical_memory():
    """The machine's physical memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def default_budget():
    physical = physical_memory()
    return DEFAULT_BUDGET if not physical else min(DEFAULT_BUDGET, physical // 2)


def parse_size(value, what):
    """Bytes from an int or a string such as ``"8G"``, ``"512MiB"`` or ``"1000000"``."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        size = int(value)
    else:
        match = _SIZE.match(value) if isinstance(value, str) else None
        if match is None:
            raise ValueError(
                f"{what} must be a number of bytes, optionally with a K, M, G or T suffix "
                f"(e.g. 8G), got {value!r}"
            )
        size = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if size <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return size


def budget(memory_budget=None):
    """The budget in bytes: the argument, else ``VECENV_MEMORY_BUDGET``, else the default."""
    if memory_budget is not None:
        return parse_size(memory_budget, "memory_budget")
    if os.environ.get(ENV_VAR):
        return parse_size(os.environ[ENV_VAR], ENV_VAR)
    return default_budget()


def check_num_envs(num_envs, is_integer):
    if not is_integer(num_envs) or not 1 <= num_envs <= MAX_NUM_ENVS:
        raise ValueError(f"num_envs must be a positive integer, at most 2**30, got {num_envs!r}")


def field_bytes(fields):
    """The bytes of a record of ``(name, dtype[, shape])`` fields, plus alignment's padding at
    most (computed without making the dtype, which numpy refuses past a few GiB)."""
    total = 0
    for field in fields:
        shape = field[2] if len(field) > 2 else ()
        shape = (shape,) if isinstance(shape, (int, np.integer)) else shape
        total += np.dtype(field[1]).itemsize * math.prod(int(d) for d in shape) + 8
    return total


def observation_bytes(fields, num_agents):
    """One episode's observation arrays (a field not ``shared`` is stored once per agent)."""
    return sum(
        (1 if f.shared else num_agents) * math.prod(f.shape) * f.dtype.itemsize for f in fields
    )


def check(game, num_envs, per_episode, fixed, memory_budget=None):
    """Raise ValueError if ``num_envs`` episodes of ``per_episode`` bytes, plus ``fixed`` bytes,
    exceed the budget; ``per_episode`` is a dict of what makes up an episode's bytes."""
    limit = budget(memory_budget)
    each = sum(per_episode.values())
    total = num_envs * each + fixed
    if total > limit:
        parts = ", ".join(f"{name} {show(b)}" for name, b in per_episode.items() if b)
        episodes = f"{num_envs} episode{'s' if num_envs != 1 else ''}"
        raise ValueError(
            f"{game}: {episodes} of {show(each)} each ({parts}) need {show(total)}, "
            f"over the memory budget of {show(limit)}; lower num_envs or the sizes in the "
            f"configuration, or raise the budget with {ENV_VAR} (e.g. {ENV_VAR}=16G) or "
            "make(..., memory_budget=...)"
        )
    return total


def show(nbytes):
    """``nbytes`` for a person: 1.5 GiB, 512.0 MiB, 100 B."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        scale = _UNITS[unit[0]]
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"
