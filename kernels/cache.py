"""Where every compiled artefact of vecenv lives: one cache folder per user, never the package.

numba's ``cache=True`` writes its index and machine code (``*.nbi``, ``*.nbc``) into a
``__pycache__`` folder beside each source file. For an installed vecenv that is
``site-packages/vecenv/**``: pip's uninstall does not know those files, leaves the folders behind,
and they then shadow a later editable install as an empty namespace package. For a user's game it
is the user's own folder. So vecenv gives numba a locator of its own, placed before numba's, that
sends the entries of vecenv's modules, its games' and the games registered from outside to

    $VECENV_CACHE_DIR, else the platform's user cache folder + /vecenv

(``~/.cache/vecenv`` on Linux, honouring ``XDG_CACHE_HOME``; ``~/Library/Caches/vecenv`` on macOS;
``%LOCALAPPDATA%\\vecenv`` on Windows), and falls back to a per-user folder in the temporary
directory when that one cannot be written. Every other numba function of the process keeps
numba's own locators. The entries stay keyed as numba keys them: by the source file's full path
(its folder's hash names the subfolder) and its contents' hash, so editing a file, moving a game
or installing another vecenv never serves stale machine code.

This module imports nothing of vecenv: ``vecenv/__init__.py`` installs the locator before any
jitted function is defined.
"""

import functools
import os
import sys
import tempfile
from pathlib import Path

from numba.core import caching

# Module-name prefixes whose jitted functions are cached here: vecenv itself, its generated
# drivers, games imported from plain folders; the registry adds entry-point games' packages.
_OWNED = {"vecenv", "vecenv_games", "vecenv_drivers_"}

# numba 0.59-0.6x name these with a leading underscore, later releases without.
_UserProvided = (
    getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator
)
_CacheImpl = getattr(caching, "CacheImpl", None) or caching._CacheImpl


def root():
    """vecenv's cache folder (created, and checked writable once per process and setting)."""
    return _usable(_chosen())


def _chosen():
    """The folder the settings name (``VECENV_CACHE_DIR``, else the platform's)."""
    chosen = os.environ.get("VECENV_CACHE_DIR")
    if not chosen:
        if sys.platform == "win32":
            base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        elif sys.platform == "darwin":
            base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
                os.path.expanduser("~"), ".cache"
            )
        chosen = os.path.join(base, "vecenv")
    return chosen


@functools.cache
def _usable(chosen):
    """``chosen``, created, or a per-user folder in the temporary directory where it cannot be
    written. Cached: every jitted function's locator asks, and a probe costs a file."""
    path = Path(chosen)
    if not _writable(path):
        uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
        path = Path(tempfile.gettempdir()) / f"vecenv-{uid}"
        path.mkdir(parents=True, exist_ok=True)
    return path


def folder(name):
    """A subfolder of the cache (``drivers``, ``numba``, ...), created."""
    path = root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _writable(path):
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def own(package):
    """Cache the jitted functions of modules under ``package`` (a module name) here too."""
    _OWNED.add(package)


def owns(module_name):
    return any(
        module_name == prefix
        or module_name.startswith(prefix + ".")
        or (prefix.endswith("_") and module_name.startswith(prefix))
        for prefix in _OWNED
    )


class VecenvCacheLocator(_UserProvided):
    """numba's user-directory locator, aimed at vecenv's folder and only for vecenv's modules."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(folder("numba") / self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if not owns(getattr(py_func, "__module__", None) or ""):
            return None
        # numba's own checks: the source file exists and the folder can be written.
        return super(_UserProvided, cls).from_function(py_func, py_file)


def install():
    """Put the locator first in numba's list (once); later ``cache=True`` functions use it."""
    classes = _CacheImpl._locator_classes
    if VecenvCacheLocator not in classes:
        classes.insert(0, VecenvCacheLocator)
