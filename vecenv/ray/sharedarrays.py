"""Arrays in one shared-memory segment of this machine, made by one process and mapped by others.

The distributed ``VectorEnv`` keeps a step's actions and results in them: a worker on the
driver's machine reads and writes its slice in place, so no array travels. A process on another
machine finds no segment of that name (or one without the maker's random token) and ``attach``
returns None: its arrays travel in Ray's messages instead.

A segment's mapping ends when its last view goes, never before: numpy keeps no buffer export
that would stop ``mmap.close``, so an explicit close under a live view (an array a caller still
holds) would leave that view pointing at unmapped memory.
"""

import contextlib
import os
import weakref
from multiprocessing import resource_tracker, shared_memory

import numpy as np

_ALIGN = 64
_TOKEN = 16  # the segment starts with the maker's random bytes


def _views(mapping, fields):
    return {
        key: np.ndarray(shape, dtype=np.dtype(dtype), buffer=mapping, offset=offset)
        for key, offset, shape, dtype in fields
    }


def _take_mapping(shm):
    """``shm``'s mapping, taken from it so that its ``close`` (also at its collection) can never
    unmap it: the mapping then lives as long as the views made on it. ``shm`` keeps its name."""
    mapping = shm._mmap
    shm._buf.release()
    shm._buf = shm._mmap = None
    shm.close()  # its file descriptor only
    return mapping


def _remove(shm):
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
        shm = shared_memory.SharedMemory(create=True, size=max(offset, 1))
        mapping = _take_mapping(shm)
        token = os.urandom(_TOKEN)
        mapping[:_TOKEN] = token
        self.layout = (shm.name, token, offset, tuple(fields))
        self.arrays = _views(mapping, fields)
        self._remove = weakref.finalize(self, _remove, shm)

    def close(self):
        """Remove the segment's name; its memory goes with the last view."""
        self.arrays = {}
        self._remove()


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
    return _views(_take_mapping(shm), fields)
