"""pytest-benchmark, judged on normalised figures: a pytest plugin.

Register it in the suite's root ``conftest.py`` (``pytest_plugins = ["vecenv.perf.pytest_plugin"]``)
and time rounds with ``calibrated_rounds(benchmark, round_fn, rounds)``: each round then follows a
calibration round, and the benchmark's ``extra_info["vecenv_perf"]`` keeps every round's time over
its calibration (the normalised figure), so pytest-benchmark's own storage keeps them
(``--benchmark-autosave``, ``--benchmark-save``, ``--benchmark-json``).

With ``--benchmark-compare``, the end of the run prints each benchmark's normalised figure against
the compared run (baseline, now, change with its bootstrap interval, verdict), and with
``--vecenv-fail-over=10%`` the run fails when a figure is slower by more than that with a clear
interval (``vecenv.perf.compare``). pytest-benchmark's own ``--benchmark-compare-fail`` still works
beside it, on the raw times.

Two kinds of benchmark are compared and shown but not gated (``--vecenv-gate-all`` gates them
too): one that sets ``extra_info["gate"] = False`` (a peer or reference it is measured against:
its slowdown is not a regression of the code under test), and one whose ``extra_info["threads"]``
is at least the number of CPUs the process may use: on a machine shared with other work it waits
for whichever core another process holds, so its figure measures the other tenants as much as the
code (on a loaded 2-vCPU machine, before disturbed rounds were left out, two-thread figures moved
by 40% and more between runs of the same code; with steady rounds they held in 20 runs, but one
busy neighbour is enough to move them).
"""

import os

import pytest

from . import compare
from .calibrate import Calibration

KEY = "vecenv_perf"
_calibration = []  # made (compiled, memory touched) once per process


def calibration():
    if not _calibration:
        _calibration.append(Calibration())
    return _calibration[0]


def calibrated_rounds(benchmark, round_fn, rounds, warmup_rounds=1):
    """``benchmark.pedantic(round_fn, rounds=rounds, ...)`` with a calibration round timed before
    every round; the rounds' normalised figures go into ``benchmark.extra_info["vecenv_perf"]``.
    Once, untimed, when benchmarks are disabled."""
    if benchmark.disabled:
        benchmark(round_fn)
        return
    cal = calibration()
    before = []

    def setup():
        before.append(cal.time_round())

    benchmark.pedantic(round_fn, setup=setup, rounds=rounds, warmup_rounds=warmup_rounds)
    data = list(benchmark.stats.stats.data)[-rounds:]
    cal_s = before[-len(data) :]
    benchmark.extra_info[KEY] = {
        "calibration_s": cal_s,
        "norm": [t / c for t, c in zip(data, cal_s, strict=True)],
    }


def pytest_addoption(parser):
    group = parser.getgroup("vecenv-perf", "vecenv regression check on normalised figures")
    group.addoption(
        "--vecenv-fail-over",
        metavar="PCT",
        default=None,
        help="with --benchmark-compare: fail when a benchmark's time over the calibration kernel "
        "is slower than the compared run by more than PCT (e.g. 10%%) with a clear interval",
    )
    group.addoption(
        "--vecenv-gate-all",
        action="store_true",
        default=False,
        help="gate every benchmark: references and those on every CPU too",
    )
    group.addoption(
        "--vecenv-compare-json",
        metavar="FILE",
        default=None,
        help="with --benchmark-compare: also write the normalised figures' comparison to FILE",
    )


def _session(config):
    return getattr(config, "_benchmarksession", None)


def _baseline(bs):
    """{fullname: figure} of the compared run (the last one loaded), and its path."""
    mapping = getattr(bs, "compared_mapping", None) or {}
    if not mapping:
        return None, None
    path = list(mapping)[-1]
    figures = {}
    for name, bench in mapping[path].items():
        perf = (bench.get("extra_info") or {}).get(KEY)
        if perf and perf.get("norm"):
            figures[name] = {"samples": perf["norm"], "calibration": perf.get("calibration_s")}
    return figures, path


def usable_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def gated(extra_info, gate_all=False):
    """Whether a benchmark's slowdown fails the check: not for a reference, nor when it runs on
    every CPU."""
    if gate_all:
        return True
    if extra_info.get("gate") is False:
        return False
    threads = extra_info.get("threads")
    return not isinstance(threads, int) or threads < (usable_cpus() or 1)


def _now(bs, gate_all):
    figures = {}
    for bench in bs.benchmarks:
        info = getattr(bench, "extra_info", None) or {}
        perf = info.get(KEY)
        if perf and perf.get("norm"):
            figures[bench.fullname] = {
                "samples": perf["norm"],
                "calibration": perf.get("calibration_s"),
                "gate": gated(info, gate_all),
            }
    return figures


def pytest_configure(config):
    text = config.getoption("vecenv_fail_over", None)
    config._vecenv_perf = {"threshold": None, "lines": None, "failed": False}
    if text is not None:
        try:
            config._vecenv_perf["threshold"] = compare.parse_threshold(text)
        except ValueError as e:
            raise pytest.UsageError(f"--vecenv-fail-over: {e}") from None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    state = getattr(config, "_vecenv_perf", None)
    bs = _session(config)
    if state is None or bs is None or not getattr(bs, "compare", None):
        return
    baseline, path = _baseline(bs)
    now = _now(bs, config.getoption("vecenv_gate_all", False))
    if not baseline or not now:
        state["lines"] = [
            "no normalised figures to compare (the compared run or this one has none: time "
            "rounds with vecenv.perf.pytest_plugin.calibrated_rounds)"
        ]
        return
    threshold = state["threshold"] if state["threshold"] is not None else 0.10
    # Only what ran now is compared: a -k selection must not report the rest as missing.
    rows = [r for r in compare.compare_figures(baseline, now, threshold) if r.figure in now]
    state["lines"] = [f"against {path}"] + compare.table(rows, threshold)
    out = config.getoption("vecenv_compare_json", None)
    if out:
        compare.write_json(rows, threshold, out, baseline=str(path))
    if state["threshold"] is not None and compare.regressions(rows):
        state["failed"] = True
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = getattr(config, "_vecenv_perf", None)
    if not state or not state["lines"]:
        return
    terminalreporter.section("vecenv regression check: time over calibration, per round")
    for line in state["lines"]:
        terminalreporter.write_line(line)
    if state["failed"]:
        terminalreporter.write_line(
            f"FAILED: a figure slower by more than {state['threshold']:.0%} (--vecenv-fail-over)",
            red=True,
        )
