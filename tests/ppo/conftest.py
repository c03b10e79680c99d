"""The trainer's tests need PyTorch (the train extra): skipped without it, failed in CI."""

import pytest

from tests.envs.reference import need


@pytest.fixture(autouse=True)
def torch_installed():
    need("torch", "PyTorch (vecenv[train])")
