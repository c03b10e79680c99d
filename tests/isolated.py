"""Reference packages that would pin what users run, installed apart from the test environment.

kaggle-environments pins ``gymnasium==1.2.0`` (and gymnax, OpenSpiel): installed as a test extra it
would hold the whole suite on that gymnasium. Its own code needs none of those pins to run the
games it is a reference for (connectx, rps, tictactoe: it imports ``requests`` and
``jsonschema``, which the test extra brings), so it is installed without its dependencies into a
folder of its own, in the user's cache, and that folder goes at the *end* of ``sys.path``: every
package the test environment has (gymnasium above all) wins over anything in it, and the suite runs
on the gymnasium the test extra resolves, the newest.

Plain Python, no pytest: the tests' and the benchmarks' conftest call ``install_on_import``, so
that the first ``import kaggle_environments`` anywhere fetches it (once per machine), and a run that
needs no reference never does.
"""

import importlib.abc
import importlib.machinery
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The release the Kaggle games and face are tested against (the behaviours that
# docs/faces/kaggle.md lists).
KAGGLE_ENVIRONMENTS = "1.33.2"


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vecenv" / "reference"


def folder(package, version):
    return cache_root() / f"{package}-{version}-nodeps"


def install(package, version):
    """``package==version`` without its dependencies in its own folder (once); returns the folder,
    or raises RuntimeError with pip's message. Installs into a temporary folder first and renames
    it, so that two runs at once never see half an install."""
    target = folder(package, version)
    if (target / ".complete").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{package}-", dir=target.parent))
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile"]
    cmd += ["--disable-pip-version-check", "--target", str(scratch), f"{package}=={version}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise RuntimeError(f"pip could not install {package}=={version}: {done.stderr[-400:]}")
    (scratch / ".complete").write_text("")
    try:
        scratch.rename(target)
    except OSError:  # another run finished first
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def add_to_path(package, version):
    """Put ``package==version`` (installed apart) at the end of ``sys.path``. Returns None, or the
    reason it cannot be had here (no network, say); the tests that need it then skip outside CI
    and fail in CI."""
    try:
        target = str(install(package, version))
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if target not in sys.path:
        sys.path.append(target)
    return None


class _OnImport(importlib.abc.MetaPathFinder):
    """Asked only after every other finder missed ``module``: installs its package apart, then
    finds it there."""

    def __init__(self, module, package, version):
        self.module, self.package, self.version = module, package, version
        self.reason = None

    def find_spec(self, name, path=None, target=None):
        if name != self.module or self.reason is not None:
            return None
        self.reason = add_to_path(self.package, self.version)
        if self.reason is not None:
            return None  # the import fails as usual; ``reason`` says why
        return importlib.machinery.PathFinder.find_spec(name)


def install_on_import(module, package, version):
    """Make ``import module`` install ``package==version`` apart on first use; returns the finder
    (its ``reason`` says why an install failed)."""
    for finder in sys.meta_path:
        if isinstance(finder, _OnImport) and finder.module == module:
            return finder
    finder = _OnImport(module, package, version)
    sys.meta_path.append(finder)
    return finder


def kaggle_on_import():
    return install_on_import("kaggle_environments", "kaggle-environments", KAGGLE_ENVIRONMENTS)
