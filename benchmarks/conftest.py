"""pytest-benchmark setup of the suites, and the comparison table printed at the end of a run."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import report  # noqa: E402


def _smoke(config):
    return bool(config.getoption("benchmark_disable", False)) or bool(
        config.getoption("benchmark_skip", False)
    )


@pytest.fixture
def smoke(request):
    """True when benchmarks are disabled (each body runs once, nothing is timed)."""
    return _smoke(request.config)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    smoke = _smoke(config)
    if not (smoke or report.RESULTS or report.EXTRA):
        return  # nothing was timed (no benchmark ran)
    terminalreporter.section("vecenv comparisons (same run)")
    for line in report.summary_lines(smoke):
        terminalreporter.write_line(line)
