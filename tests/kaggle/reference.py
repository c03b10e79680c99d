"""kaggle-environments, the reference the Kaggle games and face are tested against.

It is installed apart from the test environment (``tests/isolated.py``: it pins gymnasium 1.2.0, and
the suite runs on the newest), fetched from PyPI on first use and kept in the user's cache. Outside
CI a test needing it skips with the reason; in CI (the ``CI`` environment variable set) a missing
reference fails the test instead.

kaggle-environments dropped tictactoe from its releases after 1.20.0. ``make("tictactoe")`` here
registers the tictactoe of kaggle-environments 1.20.0 (interpreter, agents and specification, from
that release's wheel, fetched from PyPI once and kept in the user's cache) into the installed
kaggle-environments, so tictactoe is checked against Kaggle's own rules too.
"""

import functools
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests import isolated

TICTACTOE_RELEASE = "1.20.0"


def _unavailable(reason):
    if os.environ.get("CI"):
        pytest.fail(f"the reference is required in CI: {reason}")
    pytest.skip(reason)


@functools.cache
def _import():
    finder = isolated.kaggle_on_import()
    try:
        import kaggle_environments
    except Exception as exc:  # not to be had here, or its import fails here
        return None, f"kaggle-environments does not import here: {finder.reason or repr(exc)}"
    return kaggle_environments, None


def kaggle():
    """The kaggle_environments module, or skip (fail in CI)."""
    module, reason = _import()
    if module is None:
        _unavailable(reason)
    return module


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "vecenv" / "reference" / f"kaggle-environments-{TICTACTOE_RELEASE}"


@functools.cache
def _tictactoe_module():
    folder = _cache_dir() / "kaggle_environments" / "envs" / "tictactoe"
    if not (folder / "tictactoe.py").exists():
        download = _cache_dir().parent / "wheels"
        download.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(download)]
        cmd.append(f"kaggle-environments=={TICTACTOE_RELEASE}")
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        wheels = list(download.glob(f"kaggle_environments-{TICTACTOE_RELEASE}-*.whl"))
        if done.returncode != 0 or not wheels:
            return (
                None,
                f"cannot fetch kaggle-environments {TICTACTOE_RELEASE}: {done.stderr[-300:]}",
            )
        with zipfile.ZipFile(wheels[0]) as wheel:
            members = [m for m in wheel.namelist() if "/envs/tictactoe/" in m]
            wheel.extractall(_cache_dir(), members)
    spec = importlib.util.spec_from_file_location(
        "kaggle_tictactoe_reference", folder / "tictactoe.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, None


def make(name, configuration=None, **kwargs):
    """``kaggle_environments.make(name, configuration, **kwargs)``, tictactoe included."""
    env = kaggle()
    if name == "tictactoe" and "tictactoe" not in env.environments:
        module, reason = _tictactoe_module()
        if module is None:
            _unavailable(reason)
        env.register(
            "tictactoe",
            {
                "specification": module.specification,
                "interpreter": module.interpreter,
                "renderer": module.renderer,
                "html_renderer": module.html_renderer,
                "agents": module.agents,
            },
        )
    return env.make(name, configuration=configuration, **kwargs)
