"""The header every game's state record starts with.

The engine owns these fields; a game's rules own the rest:
- ``rng``: the episode's random stream (see ``rng.py``),
- ``step``: steps taken in the current episode (for time limits, and rules scoring the last step),
- ``done``: why the episode ended at its last step (0 running, bit 0 terminated, bit 1 truncated);
  next-step autoreset resets an episode whose ``done`` is set, disabled autoreset freezes it.
"""

import numpy as np

HEADER = [("rng", np.uint64), ("step", np.int64), ("done", np.uint8)]
HEADER_NAMES = tuple(name for name, _ in HEADER)

TERMINATED = 1
TRUNCATED = 2
HELD = 4  # set only during ``Engine.step_only``: the episode sits this step out


def state_dtype(fields):
    """The record dtype of a game: the header followed by the game's ``(name, dtype[, shape])``."""
    names = {f[0] for f in fields}
    clash = names.intersection(HEADER_NAMES)
    if clash:
        raise ValueError(f"state fields {sorted(clash)} are reserved by the engine header")
    return np.dtype(HEADER + list(fields), align=True)


# A continuous action component must lie in [-ACTION_MAX, ACTION_MAX], float32's finite range
# (the spaces' dtype): a float64 beyond it (1e300) means as little to the rules as NaN, and turns
# rewards into infinities. Compared as ``not abs(a) <= ACTION_MAX``, NaN fails too.
ACTION_MAX = float(np.finfo(np.float32).max)

# Autoreset modes, as gymnasium's AutoresetMode.
NEXT_STEP = 0
SAME_STEP = 1
DISABLED = 2
