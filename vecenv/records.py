"""State records as the engines hand them out and take them back: copies with their padding
zeroed (so that equal states are equal bytes) and the check of a pickled engine's records."""

import numpy as np


def _record_bytes(dtype, offset, covered):
    """Mark in ``covered`` the bytes of a record ``dtype`` at ``offset`` that hold a field."""
    if dtype.fields is not None:
        for sub, off, *_ in dtype.fields.values():
            _record_bytes(sub, offset + off, covered)
    elif dtype.subdtype is not None and dtype.base.fields is not None:
        base = dtype.base
        for k in range(dtype.itemsize // base.itemsize):
            _record_bytes(base, offset + k * base.itemsize, covered)
    else:
        covered[offset : offset + dtype.itemsize] = True


def copy_records(states, where):
    """The records ``states[where]`` (``where`` an int or index array) as a copy whose padding
    bytes are zero: numpy copies records field by field, leaving an aligned record's padding as
    whatever the fresh memory held, so equal states would differ in ``tobytes()``."""
    dtype = states.dtype
    covered = np.zeros(dtype.itemsize, dtype=np.bool_)
    _record_bytes(dtype, 0, covered)
    raw = np.ascontiguousarray(states).view(np.uint8).reshape(len(states), dtype.itemsize)
    out = raw[np.atleast_1d(where)]  # a copy, bytes and all
    out[:, ~covered] = 0
    return out.view(dtype).reshape(np.shape(where))


def check_loaded_states(check_state, saved, dtype, num_envs):
    """A pickled engine's state records pass ``set_state``'s checks (``check_state``) before they
    are copied in: a garbled pickle raises ValueError naming its first bad episode."""
    if not isinstance(saved, np.ndarray) or saved.dtype != dtype or saved.shape != (num_envs,):
        raise ValueError("a pickled engine's _states does not fit this game")
    try:
        check_state(saved)
    except ValueError as whole:
        # Only on failure: find the episode to name, one record at a time.
        for i in range(num_envs):
            try:
                check_state(saved[i : i + 1])
            except ValueError as one:
                raise ValueError(f"a pickled engine's episode {i} has a bad state: {one}") from None
        raise ValueError(f"a pickled engine's states are bad: {whole}") from None
