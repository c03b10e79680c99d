"""The reference packages the games are tested against (OpenSpiel, MinAtar): test extras.

Outside CI a test needing one skips with the reason; in CI (``CI`` set) a missing one fails.
"""

import importlib
import os

import pytest


def need(module, package):
    """``module`` imported, or a skip (a failure in CI) saying ``package`` is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{package} is required in CI: {exc}")
        # Allowed at a module's top too, where a whole test file needs the package.
        pytest.skip(f"{package} is not installed here: {exc}", allow_module_level=True)
