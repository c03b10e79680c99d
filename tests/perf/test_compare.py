"""The regression check's statistics on synthetic rounds: no timing anywhere."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecenv.perf import compare

THRESHOLD = 0.10


def rounds(seed, n, spread, scale=1.0, outliers=0.0):
    """``n`` per-round figures: log-normal noise of ``spread`` around ``scale``, and a share of
    rounds disturbed by other work (slower by up to 5x), as on a shared machine."""
    rng = np.random.default_rng(seed)
    x = scale * np.exp(rng.normal(0.0, spread, n))
    hit = rng.random(n) < outliers
    x[hit] *= rng.uniform(1.0, 5.0, hit.sum())
    return x


noise = st.floats(0.001, 0.05)
disturbed = st.floats(0.0, 0.2)
sizes = st.integers(30, 200)


# derandomize: the same examples in every run, so a rare draw cannot make CI flaky.
@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=sizes, m=sizes, spread=noise, outliers=disturbed)
def test_the_same_distribution_is_never_called_slower(seed, n, m, spread, outliers):
    base = rounds(seed, n, spread, outliers=outliers)
    now = rounds(seed + 1, m, spread, outliers=outliers)
    c = compare.compare(base, now, THRESHOLD)
    assert c.verdict == "same"
    assert c.low <= c.change <= c.high


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(40, 200),
    m=st.integers(40, 200),
    spread=noise,
    outliers=st.floats(0.0, 0.2),
)
def test_a_30_percent_slowdown_is_called_slower(seed, n, m, spread, outliers):
    base = rounds(seed, n, spread, outliers=outliers)
    now = rounds(seed + 1, m, spread, scale=1.3, outliers=outliers)
    c = compare.compare(base, now, THRESHOLD)
    assert c.slower
    assert 0 < c.low <= c.change <= c.high
    assert abs(c.change - 0.3) < 0.15


def timed_rounds(seed, n, scale=1.0, disturbed=0.4):
    """(time over calibration, calibration seconds) of ``n`` rounds, a share of them disturbed:
    some in the benchmark round (slower), some in the calibration round (the ratio then lower)."""
    rng = np.random.default_rng(seed)
    cal = 3e-4 * np.exp(rng.normal(0, 0.01, n))
    t = scale * 1.2e-3 * np.exp(rng.normal(0, 0.01, n))
    hit = rng.random(n) < disturbed
    half = rng.random(n) < 0.5
    t[hit & half] *= rng.uniform(2, 8, (hit & half).sum())
    cal[hit & ~half] *= rng.uniform(2, 8, (hit & ~half).sum())
    return t / cal, cal


def test_steady_rounds_leave_the_disturbed_ones_out():
    x, cal = timed_rounds(0, 200)
    kept = compare.steady(x, cal)
    assert 100 <= kept.size <= 140  # about the 60% undisturbed
    assert np.all(np.abs(kept / 4.0 - 1) < 0.1)
    assert compare.steady(x).size == 200  # no calibration times: every round counts
    assert compare.steady(x[:4], cal[:4]).size == 4  # too few to judge: all kept
    with pytest.raises(ValueError, match="calibration times"):
        compare.steady(x, cal[:-1])


@pytest.mark.parametrize(("scale", "verdict"), [(1.0, "same"), (1.15, "slower"), (0.8, "faster")])
def test_a_run_taken_in_a_bad_spell_is_still_judged(scale, verdict):
    # 40% of both runs' rounds disturbed: the plain median has no clear interval, steady rounds do.
    bx, bc = timed_rounds(1, 150)
    nx, nc = timed_rounds(2, 150, scale=scale)
    rows = compare.compare_figures(
        {"f": {"samples": bx, "calibration": bc}}, {"f": {"samples": nx, "calibration": nc}}, 0.1
    )
    assert rows[0].change.verdict == verdict
    assert abs(rows[0].change.change - (scale - 1)) < 0.03
    assert rows[0].rounds[1] == rows[0].rounds[3] == 150 and rows[0].rounds[0] < 120


def test_a_speed_up_is_called_faster_and_never_fails():
    c = compare.compare(rounds(1, 50, 0.02), rounds(2, 50, 0.02, scale=0.7), THRESHOLD)
    assert c.verdict == "faster" and c.high < 0
    rows = compare.compare_figures(
        {"a": {"samples": rounds(1, 50, 0.02)}},
        {"a": {"samples": rounds(2, 50, 0.02, scale=0.7)}},
        THRESHOLD,
    )
    assert compare.regressions(rows) == []


def test_over_the_threshold_but_unclear_is_not_called():
    # Two rounds a side, far apart: the change is large, the interval spans zero.
    c = compare.compare([1.0, 3.0], [1.0, 4.0], THRESHOLD)
    assert c.change > THRESHOLD and c.low <= 0 and c.verdict == "same"


def test_a_clear_change_under_the_threshold_is_not_called():
    c = compare.compare(rounds(1, 200, 0.001), rounds(2, 200, 0.001, scale=1.05), THRESHOLD)
    assert c.low > 0 and c.verdict == "same"


def test_the_verdict_is_reproducible():
    a, b = rounds(3, 40, 0.05, outliers=0.2), rounds(4, 40, 0.05, scale=1.12, outliers=0.2)
    assert compare.compare(a, b, THRESHOLD) == compare.compare(a, b, THRESHOLD)


def test_bad_samples_are_dropped_and_too_few_refused():
    c = compare.compare([1.0, np.nan, 1.0, -1.0, 1.0], [1.0, np.inf, 1.0, 1.0], THRESHOLD)
    assert c.baseline == 1.0 and c.now == 1.0 and c.verdict == "same"
    with pytest.raises(ValueError, match="at least 2 rounds"):
        compare.compare([1.0], [1.0, 2.0], THRESHOLD)
    with pytest.raises(ValueError, match="threshold"):
        compare.compare([1.0, 1.0], [1.0, 1.0], -0.1)


@pytest.mark.parametrize(
    ("text", "value"), [("10%", 0.1), ("2.5%", 0.025), ("0.1", 0.1), (" 0% ", 0)]
)
def test_thresholds(text, value):
    assert compare.parse_threshold(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "ten", "-5%", "nan", "%", "inf"])
def test_bad_thresholds(text):
    with pytest.raises(ValueError, match="threshold"):
        compare.parse_threshold(text)


def test_table_and_json(tmp_path):
    base = {
        "slow": {"samples": rounds(1, 40, 0.01)},
        "info": {"samples": rounds(2, 40, 0.01), "gate": False},
        "gone": {"samples": rounds(3, 40, 0.01)},
    }
    now = {
        "slow": {"samples": rounds(4, 40, 0.01, scale=1.5)},
        "info": {"samples": rounds(5, 40, 0.01, scale=1.5), "gate": False},
        "new": {"samples": rounds(6, 40, 0.01)},
    }
    rows = compare.compare_figures(base, now, THRESHOLD)
    assert [r.figure for r in rows] == ["slow", "info", "new", "gone"]
    assert [r.figure for r in compare.regressions(rows)] == ["slow"]  # "info" is not gated
    lines = compare.table(rows, THRESHOLD)
    head = ["figure", "baseline", "now", "change", "[95%", "interval]", "rounds", "verdict"]
    assert lines[0].split() == head
    assert lines[1].split()[-1] == "SLOWER"
    assert lines[2].endswith("slower (not gated)")
    assert "not in the baseline" in lines[3] and "not measured now" in lines[4]
    assert lines[1].split()[-3:-1] == ["40/40", "40/40"]  # no calibration: every round kept
    assert lines[-1].startswith("1 figure(s) slower by more than 10%")
    out = tmp_path / "c.json"
    compare.write_json(rows, THRESHOLD, out, baseline="b.json")
    import json

    doc = json.loads(out.read_text())
    assert doc["failed"] and doc["baseline"] == "b.json"
    assert doc["figures"][0]["rounds"] == [40, 40, 40, 40]
    assert doc["figures"][0]["verdict"] == "slower"
