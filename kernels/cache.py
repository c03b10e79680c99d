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
numba's own locators.

**Keys that survive a reinstall.** numba names a function's cache folder by a hash of its source
file's full path, so ``pip install .`` after ``pip install -e .`` (or a move of the virtualenv)
would recompile everything. Here the folder is named by the function's module instead
(``vecenv.envs.chess.rules``), and an entry is still only served for the same source: numba's index
holds a hash of the file's contents (not its time stamp) and the function's first line. A game
from a plain folder has its folder's path in its module's name (``vecenv.registry``), so two games
of one name in two places never share entries.

**Folders that are the user's own.** The generated drivers in the cache are Python that vecenv
imports, and numba's entries machine code it runs: a folder another local user could write is a
way to run their code as this user. Every folder is made with mode 0700, and one that exists
already is used only when this user owns it and nobody else may write it; otherwise
``CacheFolderError`` names the folder and ``VECENV_CACHE_DIR``.

**Entries that survive damage and company.** numba rewrites a function's index without a lock
(numba issue 10128: two processes saving two signatures of one function at once can both take the
same data file, leaving the index naming the other's machine code), and reads a damaged index or
data file with an exception on every later run. In vecenv's folders every read and write of an
index holds a lock on its folder, every index and data file carries a digest of its contents, and
an entry that does not match its digest (truncated, garbled) is dropped with one warning and
compiled again.

This module imports neither numba nor anything of vecenv, so that ``import vecenv`` stays cheap:
``install_when_numba_loads`` puts the locator in place the moment numba is imported (at once if it
already is), before any jitted function of vecenv or of a game can be defined.
"""

import functools
import hashlib
import os
import stat
import sys
import tempfile
import warnings
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: index writes are not locked (numba's own behaviour)
    fcntl = None

# Module-name prefixes whose jitted functions are cached here: vecenv itself, its generated
# drivers, games imported from plain folders; the registry adds entry-point games' packages.
_OWNED = {"vecenv", "vecenv_games", "vecenv_drivers_"}

ENV_VARIABLE = "VECENV_CACHE_DIR"
LOCK_NAME = "vecenv.lock"
# What precedes the pickled payload of every index and data file written in vecenv's folders.
_DIGEST_MAGIC = b"vecenv-sha256:"
_DIGEST_SIZE = len(_DIGEST_MAGIC) + 32


class CacheFolderError(RuntimeError):
    """vecenv's cache folder is not safely this user's own (or cannot be made)."""


class DamagedCacheWarning(UserWarning):
    """A compiled entry in vecenv's cache was damaged; it was dropped and compiled again."""


def root():
    """vecenv's cache folder (created and checked once per process and setting)."""
    return _usable(_chosen())


def _chosen():
    """The folder the settings name (``VECENV_CACHE_DIR``, else the platform's)."""
    chosen = os.environ.get(ENV_VARIABLE)
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
    """``chosen``, made and checked, or a per-user folder in the temporary directory where
    ``chosen`` cannot be made or written. Cached: every jitted function's locator asks."""
    path = Path(chosen)
    if _made(path) and _writable(path):
        return own_folder(path)
    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    fallback = Path(tempfile.gettempdir()) / f"vecenv-{uid}"
    try:
        fallback.mkdir(mode=0o700, exist_ok=True)
    except OSError as e:
        raise CacheFolderError(
            f"vecenv's cache folder {path} cannot be written, nor {fallback} made ({e}); "
            f"set {ENV_VARIABLE} to a folder of your own"
        ) from None
    return own_folder(fallback, why=f"{path} cannot be written, so vecenv falls back to it")


def own_folder(path, why=None):
    """``path`` (an existing folder) if this user owns it and nobody else may write it, else
    ``CacheFolderError`` naming it. Where the platform has no owners (Windows), ``path``."""
    path = Path(path)
    if not hasattr(os, "getuid"):
        return path
    info = path.stat()  # a link is judged by what it points to
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "is not a folder"
    elif info.st_uid != os.getuid():
        problem = f"belongs to another user (uid {info.st_uid})"
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"may be written by others (mode {stat.S_IMODE(info.st_mode):o})"
    if problem:
        reason = f" ({why})" if why else ""
        raise CacheFolderError(
            f"vecenv's cache folder {path}{reason} {problem}: vecenv runs the code it caches, so "
            f"it uses only a folder of your own that nobody else can write. Set {ENV_VARIABLE} "
            f"to such a folder, or fix this one (chmod 700 {path})."
        )
    return path


def _made(path):
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    return True


def _writable(path):
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def folder(name):
    """A subfolder of the cache (``drivers``, ``numba``, ...), made private."""
    path = root() / name
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


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


def _subfolder(module_name):
    """A function's cache folder under ``numba/``: its module's name (file-name safe), so that
    the same sources share entries wherever vecenv is installed."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in module_name)


@functools.cache
def _locator_class():
    """numba's user-directory locator, aimed at vecenv's folder and only for vecenv's modules.
    Made on first use: numba is imported by then."""
    from numba.core import caching

    # numba 0.59-0.6x name these with a leading underscore, later releases without.
    base = getattr(caching, "UserProvidedCacheLocator", None) or (caching._UserProvidedCacheLocator)

    class VecenvCacheLocator(base):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(folder("numba") / _subfolder(py_func.__module__))

        def get_source_stamp(self):
            return source_stamp(self._py_file)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not owns(getattr(py_func, "__module__", None) or ""):
                return None
            # numba's own checks: the source file exists and the folder can be written.
            return super(base, cls).from_function(py_func, py_file)

    return VecenvCacheLocator


def inlined_files(py_file):
    """The files whose code a jitted function of ``py_file`` may carry inlined into its machine
    code: ``py_file`` itself for a generated module (its name carries a digest of all it
    compiles from); else vecenv's kernels, and the game's whole folder for a game's module (the
    folder holding ``<name>.json``), or vecenv's whole package for one of vecenv's own."""
    path = Path(py_file).resolve()
    if path.parent == _generated_folder():
        return (path,)
    kernels = Path(__file__).resolve().parent
    files = sorted(kernels.glob("*.py"))
    for folder in path.parents:
        if (folder / f"{folder.name}.json").is_file():  # a game folder
            return (*files, *sorted(folder.rglob("*.py")))
        if folder == kernels:
            return tuple(files)
        if (folder / "__init__.py").is_file() and not (folder.parent / "__init__.py").is_file():
            return (*files, *sorted(folder.rglob("*.py")))  # a top package: vecenv's own
    return (*files, path)


def _generated_folder():
    try:
        return (root() / "drivers").resolve()
    except (OSError, CacheFolderError):
        return None


@functools.cache
def source_stamp(py_file):
    """What numba's index keeps to tell whether its entries of ``py_file``'s functions are still
    those of the sources: a digest of every file their machine code may have inlined
    (``inlined_files``), not of ``py_file`` alone as numba's own stamp is. An edit of a helper in
    another file (a kernel's, a game's module) then retires every entry that inlined it. Read
    once per file and process, as vecenv reads a game's sources once per process."""
    files = inlined_files(py_file)
    return _digest(tuple((str(p), *_signature(p)) for p in files))


def _signature(path):
    try:
        info = os.stat(path)
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)


@functools.cache
def _digest(files):
    """The digest of the files' contents (cached by their paths, times and sizes)."""
    digest = hashlib.sha256()
    for path, *_ in files:
        try:
            digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
        except OSError:
            digest.update(b"missing")
    return digest.hexdigest()


def _is_ours(cache_file):
    """Whether a numba ``IndexDataCacheFile`` lives in vecenv's folder (checked once each)."""
    mine = getattr(cache_file, "_vecenv_owned", None)
    if mine is None:
        try:
            mine = Path(cache_file._cache_path).is_relative_to(folder("numba"))
        except (OSError, CacheFolderError):
            mine = False
        cache_file._vecenv_owned = mine
    return mine


_reported = set()


def _report_damage(where, error):
    if where not in _reported:
        _reported.add(where)
        warnings.warn(
            f"vecenv's compile cache entry {where} was damaged ({type(error).__name__}: "
            f"{error}); it was dropped and is compiled again",
            DamagedCacheWarning,
            stacklevel=3,
        )


def _patch_cache_files(caching):
    """Wrap numba's index-and-data file class for vecenv's folders only: a lock around each read
    and write of an index, a digest on every file written, a damaged entry dropped."""
    cls = caching.IndexDataCacheFile
    if getattr(cls, "_vecenv_patched", False):
        return
    save, load, flush = cls.save, cls.load, cls.flush
    dump, load_index, load_data = cls._dump, cls._load_index, cls._load_data

    def locked(method):
        @functools.wraps(method)
        def run(self, *args, **kwargs):
            if fcntl is None or not _is_ours(self):
                return method(self, *args, **kwargs)
            fd = os.open(os.path.join(self._cache_path, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                return method(self, *args, **kwargs)
            finally:
                os.close(fd)  # releases the lock

        return run

    def _dump(self, obj):
        data = dump(self, obj)
        if not _is_ours(self):
            return data
        return _DIGEST_MAGIC + hashlib.sha256(data).digest() + data

    def _checked_loads(self, data):
        """The payload of a file written by ``_dump``, or ValueError."""
        head, body = data[:_DIGEST_SIZE], data[_DIGEST_SIZE:]
        if not head.startswith(_DIGEST_MAGIC) or hashlib.sha256(body).digest() != head[-32:]:
            raise ValueError("its contents do not match their digest")
        return caching.pickle.loads(body)

    def _load_index(self):
        if not _is_ours(self):
            return load_index(self)
        try:
            with open(self._index_path, "rb") as f:
                version = caching.pickle.load(f)
                data = f.read()
        except FileNotFoundError:
            return {}
        except Exception as e:  # a garbled header: numba's own pickle of its version
            _report_damage(self._index_path, e)
            return {}
        if version != self._version:
            return {}  # another numba's entries: numba's rule
        try:
            stamp, overloads = _checked_loads(self, data)
        except Exception as e:
            _report_damage(self._index_path, e)
            return {}
        return overloads if stamp == self._source_stamp else {}

    def _load_data(self, name):
        if not _is_ours(self):
            return load_data(self, name)
        path = self._data_path(name)
        with open(path, "rb") as f:
            data = f.read()
        try:
            return _checked_loads(self, data)
        except Exception as e:
            _report_damage(path, e)
            raise FileNotFoundError(path) from None  # numba's load: "no entry", compile again

    cls.save = locked(save)
    cls.load = locked(load)
    cls.flush = locked(flush)
    cls._dump = _dump
    cls._load_index = _load_index
    cls._load_data = _load_data
    cls._vecenv_patched = True


def install():
    """Put the locator first in numba's list, guard numba's cache files and type calls between
    vecenv's functions by plain types (``literals``), once; later ``cache=True`` functions of
    vecenv's modules use them. Imports numba."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    locator = _locator_class()
    if locator not in impl._locator_classes:
        impl._locator_classes.insert(0, locator)
    _patch_cache_files(caching)
    from . import literals

    literals.install(owns)


def install_when_numba_loads():
    """``install`` now if numba is imported, else the moment it is (importing numba costs a
    fifth of a second that ``import vecenv`` need not pay)."""
    from .imports import when_imported

    when_imported("numba", install)
