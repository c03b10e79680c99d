"""A lock around numba's on-disk cache files, for the test session's processes that compile side
by side (the test process and the CUDA tests' workers, which share the caches).

numba rewrites a function's cache index (read it, add an entry under the first free data file
name, write it back) without a lock (numba issue 10128): two processes saving two signatures of one
function at once can both take the same data file name, and the index can end up naming the other
signature's machine code. Each read and write of a cache folder here holds an exclusive lock on a
file in that folder, so index and data files always agree.
"""

import functools
import os

try:
    import fcntl
except ImportError:  # not POSIX: no lock (the suite's processes compile side by side on Linux)
    fcntl = None

LOCK_NAME = "vecenv-tests.lock"


def _locked(method):
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        try:
            fd = os.open(os.path.join(self._cache_path, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:  # a folder numba cannot write either: it caches nothing there
            return method(self, *args, **kwargs)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return method(self, *args, **kwargs)
        finally:
            os.close(fd)  # releases the lock

    run.locked = True
    return run


def install():
    """Lock ``IndexDataCacheFile``'s save, load and flush in this process (once)."""
    if fcntl is None:
        return
    from numba.core import caching

    cls = caching.IndexDataCacheFile
    for name in ("save", "load", "flush"):
        method = getattr(cls, name)
        if not getattr(method, "locked", False):
            setattr(cls, name, _locked(method))
