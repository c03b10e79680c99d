import importlib.util
import os

import pytest


def require_numba_cuda():
    """Skip the module where numba-cuda (the ``cuda`` extra) is missing, except in CI (``CI``
    set), where its tests must run."""
    if importlib.util.find_spec("numba_cuda") is None and not os.environ.get("CI"):
        pytest.skip(
            'numba-cuda is not installed: pip install ".[cuda]" in vecenv\'s clone',
            allow_module_level=True,
        )
