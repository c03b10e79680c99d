"""pytest-benchmark setup of the suites, the comparison table printed at the end of a run, and the
regression check on normalised figures (``vecenv.perf.pytest_plugin``: ``--vecenv-fail-over``)."""

import importlib.util
import os
import sys

# Ray's local clusters on the loopback address only (see tests/conftest.py).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
sys.path.insert(0, os.path.dirname(__file__))
# The tests' helpers (the Kaggle reference, tests/isolated.py), behind every installed package.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.append(ROOT)
# Pgx installs a top-level package named ``tests`` of its own: ``tests`` here is this checkout's.
_tests = sys.modules.get("tests")
if _tests is None or not os.path.dirname(getattr(_tests, "__file__", "") or "").startswith(ROOT):
    _spec = importlib.util.spec_from_file_location(
        "tests", os.path.join(ROOT, "tests", "__init__.py"),
        submodule_search_locations=[os.path.join(ROOT, "tests")],
    )  # fmt: skip
    sys.modules["tests"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["tests"])

import report  # noqa: E402

from tests import isolated  # noqa: E402
from vecenv.perf import pytest_plugin  # noqa: E402

# kaggle-environments is installed apart, on its first import (see tests/isolated.py).
isolated.kaggle_on_import()

PLUGIN = "vecenv.perf.pytest_plugin"


def pytest_addoption(parser, pluginmanager):
    # Registered here rather than by ``pytest_plugins`` (which pytest allows only in the root
    # conftest): its options are added at once, as pytest_addoption replays for late plugins.
    if not pluginmanager.has_plugin(PLUGIN):
        pluginmanager.register(pytest_plugin, PLUGIN)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    # --benchmark-disable: every body ran once, untimed (the CI smoke run).
    smoke = bool(config.getoption("benchmark_disable", False))
    if not (smoke or report.RESULTS or report.EXTRA):
        return  # nothing was timed (no benchmark ran, or --benchmark-skip)
    terminalreporter.section("vecenv comparisons (same run)")
    for line in report.summary_lines(smoke):
        terminalreporter.write_line(line)
