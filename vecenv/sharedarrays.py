"""Arrays in one shared-memory segment of this machine, made by one process and mapped by others.

The distributed ``VectorEnv``'s compiled transport uses them for the results of a step: a worker
on the driver's machine writes its slice in place, so only a small message travels. A process on
another machine finds no segment of that name (or one without the maker's random token) and
``attach`` returns None: it sends its arrays in the message instead.
"""

import contextlib
import os
import weakref
from multiprocessing import resource_tracker, shared_memory

import numpy as np

_ALIGN = 64
_TOKEN = 16  # the segment starts with the maker's random bytes


def _views(buf, fields):
    return {
        key: np.ndarray(shape, dtype=np.dtype(dtype), buffer=buf, offset=offset)
        for key, offset, shape, dtype in fields
    }


def _release(shm):
    with contextlib.suppress(BufferError):  # views still alive: the mapping ends with them
        shm.close()
    with contextlib.suppress(FileNotFoundError):
        shm.unlink()


class SharedArrays:
    """Zeroed arrays shaped as ``templates`` (name -> array) in one new segment; ``layout`` is
    what another process passes to ``attach``. The segment is removed on ``close`` or when this
    object is collected."""

    def __init__(self, templates):
        fields, offset = [], _TOKEN
        for key, t in templates.items():
            offset = -(-offset // _ALIGN) * _ALIGN
            fields.append((key, offset, tuple(t.shape), t.dtype.str))
            offset += t.nbytes
        self.shm = shared_memory.SharedMemory(create=True, size=max(offset, 1))
        token = os.urandom(_TOKEN)
        self.shm.buf[:_TOKEN] = token
        self.layout = (self.shm.name, token, offset, tuple(fields))
        self.arrays = _views(self.shm.buf, fields)
        self._release = weakref.finalize(self, _release, self.shm)

    def close(self):
        self.arrays = {}
        self._release()


def attach(layout):
    """The arrays of ``layout`` where its segment is on this machine, else None. The segment
    stays the maker's: this process never removes it."""
    name, token, size, fields = layout
    try:
        shm = shared_memory.SharedMemory(name=name)
    except (FileNotFoundError, OSError):
        return None
    # Python < 3.13 registers an attached segment for removal when this process ends.
    resource_tracker.unregister(shm._name, "shared_memory")
    if shm.size < size or bytes(shm.buf[:_TOKEN]) != token:
        shm.close()
        return None
    arrays = _views(shm.buf, fields)
    arrays["_segment"] = shm  # keeps the mapping open as long as the arrays
    return arrays
