"""The optional parts of vecenv, and the one line that tells a user how to get a missing one.

Each extra of pyproject.toml is a feature's packages. Where a feature finds one missing it raises
``MissingExtra`` (an ImportError) saying which feature needs which packages and the command that
installs them today: vecenv is installed from a clone until it is published, so ``pip install
".[arena]"`` in the clone's folder, beside the plain ``pip install flask ...`` that works anywhere.
The command line prints it as one line and exits with status 2.
"""

import importlib.util
import platform
import sys

# extra -> the modules its features import, the packages that provide them.
EXTRAS = {
    "train": {"torch": "torch", "matplotlib": "matplotlib"},
    "sb3": {"stable_baselines3": "stable-baselines3", "torch": "torch"},
    "pettingzoo": {"pettingzoo": "pettingzoo"},
    "arena": {"flask": "flask", "sqlalchemy": "sqlalchemy", "waitress": "waitress"},
    "tournament": {"openskill": "openskill"},
    "ray": {"ray": "ray"},
    "render": {"PIL": "pillow"},
    "game": {"pytest": "pytest", "hypothesis": "hypothesis"},
    "cuda": {"numba_cuda": "numba-cuda"},
    "docs": {"mkdocs": "mkdocs"},
}

# PyTorch's default wheels on Linux are CUDA builds of several GB; a machine without a GPU needs
# only the CPU build, from PyTorch's own index. The extras pin this release on Python 3.11 x86_64
# (pyproject.toml), so the CPU build asked for there is the same release.
TORCH_PINNED = "2.13.0"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def torch_cpu_command():
    """The command that installs PyTorch's CPU build, satisfying the extras' requirement here."""
    pinned = sys.version_info[:2] == (3, 11) and platform.machine() in ("x86_64", "AMD64")
    torch = f"torch=={TORCH_PINNED}" if pinned else "torch"
    return f"pip install {torch} --index-url {TORCH_INDEX}"


class MissingExtra(ImportError):
    """A feature's optional packages are not installed: the message says how to get them."""


def install_hint(extra, packages=None):
    """How to install ``extra`` (or only ``packages`` of it), as one phrase."""
    packages = packages or sorted(set(EXTRAS[extra].values()))
    hint = f'pip install ".[{extra}]" in vecenv\'s clone, or pip install {" ".join(packages)}'
    if "torch" in packages:
        hint += f" (no GPU? first {torch_cpu_command()}: a few hundred MB, not several GB)"
    return hint


def missing(extra, modules=None):
    """The packages of ``extra`` (or of those of its ``modules``) that are not installed."""
    needed = EXTRAS[extra]
    modules = needed if modules is None else modules
    return sorted({needed[m] for m in modules if not _importable(m)})


def require(extra, feature, modules=None):
    """Raise ``MissingExtra`` if ``feature`` (what the user asked for, in words) lacks any package
    of ``extra`` (or of its ``modules``)."""
    absent = missing(extra, modules)
    if absent:
        raise error(extra, feature, absent)


def error(extra, feature, absent=None):
    """The ``MissingExtra`` saying ``feature`` needs ``extra`` (or its ``absent`` packages): for a
    module whose import of the extra's package failed (``raise extras.error(...) from e``)."""
    absent = absent or missing(extra) or sorted(set(EXTRAS[extra].values()))
    return MissingExtra(f"{feature} needs {', '.join(absent)}: {install_hint(extra, absent)}")


def _importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a broken install
        return False
