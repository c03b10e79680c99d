"""Work that waits for a module's import: ``import vecenv`` stays cheap.

``import vecenv`` needs neither numba (a fifth of a second) nor gymnasium, but two things must
happen once they are imported: numba must find vecenv's cache locator in place before the first
jitted function of vecenv is defined (``cache.install``), and gymnasium must know the ``vecenv/``
ids before ``gymnasium.make`` is called (``vecenv.gym.registration``). ``when_imported`` runs a
callback right after a module's import completes, or at once if it already has: whichever of
``import vecenv`` and ``import gymnasium`` comes first, the ids are there when gymnasium is.

It imports nothing of vecenv.
"""

import importlib.util
import sys
import warnings

_waiting = {}  # module name -> callbacks


class _Watcher:
    """A finder that steps aside for a watched module's own import, then runs its callbacks."""

    def find_spec(self, name, path=None, target=None):
        if name not in _waiting:
            return None
        callbacks = _waiting.pop(name)
        if not _waiting and self in sys.meta_path:
            sys.meta_path.remove(self)
        # The module's real spec, from the finders after this one (this one no longer watches
        # ``name``, so it cannot recurse).
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_call(module):
            exec_module(module)
            for callback in callbacks:
                _call(callback, name)

        spec.loader.exec_module = exec_then_call
        return spec


_WATCHER = _Watcher()


def _call(callback, name):
    try:
        callback()
    except Exception as e:  # never break the import of someone else's module
        warnings.warn(f"vecenv: setting up after {name}'s import failed: {e!r}", stacklevel=3)


def when_imported(name, callback):
    """Call ``callback()`` once the top-level module ``name`` is imported (now, if it is)."""
    if name in sys.modules:
        callback()
        return
    _waiting.setdefault(name, []).append(callback)
    if _WATCHER not in sys.meta_path:
        sys.meta_path.insert(0, _WATCHER)
