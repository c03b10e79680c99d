"""What callers hand the engines, checked before a kernel sees it: seeds, actions and autoreset
modes (shared by the CPU engine, the GPU engine and the faces that check before they forward)."""

import numpy as np

from vecenv.kernels.state import DISABLED, NEXT_STEP, SAME_STEP

from .spec import is_integer

AUTORESET_MODES = {"next_step": NEXT_STEP, "same_step": SAME_STEP, "disabled": DISABLED}
SEED_LIMIT = 2**64


def check_seed(seed):
    """``seed`` as an int in [0, 2**64), or ValueError."""
    if not is_integer(seed):
        raise ValueError(f"a seed must be a non-negative integer, got {seed!r}")
    if not 0 <= int(seed) < SEED_LIMIT:
        raise ValueError(f"a seed must be in [0, 2**64), got {seed!r}")
    return int(seed)


def fresh_seed():
    """A seed from the operating system's entropy, for engines made without one."""
    return int(np.random.SeedSequence().entropy) % SEED_LIMIT


def autoreset_mode(mode):
    """Normalise an autoreset mode given as a name, a gymnasium AutoresetMode or its value."""
    value = getattr(mode, "value", mode)
    if isinstance(value, str):
        key = value.lower().replace("-", "").replace("_", "")  # "NextStep", "next_step", ...
        for name in AUTORESET_MODES:
            if name.replace("_", "") == key:
                return name
    raise ValueError(f"autoreset must be one of {sorted(AUTORESET_MODES)}, got {mode!r}")


def check_action_dtype(game, discrete, dtype):
    """Raise ValueError unless actions of ``dtype`` can be taken without a silent cast: integers
    for a discrete game, integers or floats for a continuous one. Structured, object, bool,
    complex and time dtypes are refused; a non-native byte order is converted."""
    if dtype.kind not in "iu" and (discrete or dtype.kind != "f"):
        want = "integers" if discrete else "numbers"
        raise ValueError(f"{game} actions must be {want}, got dtype {dtype}")


def action_array(game, actions):
    """``actions`` as an ndarray the checks can trust, or TypeError. A masked array is refused:
    ``np.asarray`` would silently drop its mask and step with whatever lies under it. Other
    ndarray subclasses (memmap, matrix, ...) are read as plain arrays."""
    if type(actions) is np.ndarray:
        return actions
    if isinstance(actions, np.ma.MaskedArray):
        raise TypeError(f"{game} actions must be a plain numpy array, got a masked array")
    a = np.asarray(actions)
    return a if type(a) is np.ndarray else a.view(np.ndarray)
