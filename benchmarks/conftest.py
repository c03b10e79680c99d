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
    ran = any(
        rep.nodeid.startswith("benchmarks/") or "/benchmarks/" in rep.nodeid
        for key in ("passed", "failed", "skipped")
        for rep in terminalreporter.stats.get(key, [])
        if hasattr(rep, "nodeid")
    )
    if not ran and not report.RESULTS:
        return
    terminalreporter.section("vecenv comparisons (same run)")
    for line in report.summary_lines(_smoke(config)):
        terminalreporter.write_line(line)
