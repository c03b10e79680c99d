"""A fence around a Python process: the packages it names are hidden from it, as they would be
from a fresh virtualenv that never installed them.

A folder holding ``sitecustomize.py`` goes first on the process's ``PYTHONPATH`` and the fence, as
JSON, in ``VARIABLE``; Python imports that file at start-up (``site``), before any code of the
process. It hides the distributions named (their top-level modules are not found where they were
installed, though a copy another package vendors elsewhere still is) and importlib.metadata lists
neither them nor their entry points (pytest's plugins, say). The docs' examples run behind the
fence of their page's extras (``markdown_blocks``), the suite's collection behind one of its
optional pieces (``test_optional_pieces``).
"""

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

VARIABLE = "VECENV_FENCE"

SITECUSTOMIZE = f"""
import importlib.machinery, json, os, re, site, sys

_fence = json.loads(os.environ.get({VARIABLE!r}) or "{{}}")
_modules = frozenset(_fence.get("modules", ()))
_distributions = frozenset(_fence.get("distributions", ()))
_sites = [os.path.realpath(p) for p in site.getsitepackages()]


def _installed(spec):
    places = list(spec.submodule_search_locations or ()) + [spec.origin or ""]
    return any(os.path.dirname(os.path.realpath(p)) in _sites for p in places if p)


class _Fence:
    def __init__(self, inner):
        self.inner = inner

    def find_spec(self, name, path=None, target=None):
        spec = self.inner.find_spec(name, path, target)
        if spec is not None and "." not in name and name in _modules and _installed(spec):
            return None
        return spec

    def find_distributions(self, *args, **kwargs):
        for found in self.inner.find_distributions(*args, **kwargs):
            name = re.sub(r"[-_.]+", "-", found.metadata["Name"] or "").lower()
            if name not in _distributions:
                yield found

    def __getattr__(self, name):  # invalidate_caches and the rest
        return getattr(self.inner, name)


if _modules or _distributions:
    sys.meta_path[:] = [
        _Fence(f) if f is importlib.machinery.PathFinder else f for f in sys.meta_path
    ]
"""


def encode(modules, distributions):
    """The fence hiding ``distributions`` (canonical names) and the top-level ``modules``."""
    return json.dumps({"modules": sorted(modules), "distributions": sorted(distributions)})


@functools.cache
def folder():
    """The folder to put first on ``PYTHONPATH`` (made once, removed at exit)."""
    made = Path(tempfile.mkdtemp(prefix="vecenv-fence-"))
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    (made / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return made
