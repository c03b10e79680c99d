"""Whether a figure changed between two runs: the size of the change, its interval, a verdict.

A figure is a set of per-round samples (a benchmark's round time over the calibration round before
it, or over the peer's round next to it); its value is the median of its samples. The change between
a baseline and now is ``median(now) / median(baseline) - 1`` (positive: slower).

Rounds that other work disturbed are left out first (``steady``): a round whose own time, or whose
calibration round's, is more than 1.5 times the run's 10th percentile of those times. Other work
only ever adds time, so such a round measured the machine, not the code. Without this a run taken
in a bad spell (on a loaded 2-vCPU machine, 40% of a baseline's rounds disturbed) has no clear
median, and every comparison with it is blind; with it, the same pairs of runs were judged right.

Its interval is a percentile bootstrap: both sets of rounds are resampled with replacement, many
times, and the change recomputed each time. A bootstrap rather than a rank test (Mann-Whitney U):
with a few dozen rounds a rank test calls a 2% shift "significant" yet says nothing of its size,
while the gate must ask "slower by more than the threshold?". The bootstrap interval is on the same
scale as the threshold, assumes no distribution (round times are skewed: other work only adds time),
and the median keeps the rounds that other processes disturbed from moving it.

A change is called only when it is both larger than the threshold and statistically clear (the
interval excludes zero): a slowdown then fails the gate, a speed-up is reported.
"""

import json
from dataclasses import asdict, dataclass

import numpy as np

STEADY = 1.5  # a round slower than this times the run's 10th percentile was disturbed
MIN_STEADY = 5  # fewer steady rounds than this: keep them all
RESAMPLES = 2000
CONFIDENCE = 0.95
SEED = 20240917  # fixed: the same two runs always get the same interval and verdict


@dataclass(frozen=True)
class Change:
    baseline: float  # median of the baseline's samples
    now: float  # median of this run's samples
    change: float  # now / baseline - 1
    low: float  # the interval of the change
    high: float
    verdict: str  # "slower", "faster" or "same"

    @property
    def slower(self):
        return self.verdict == "slower"


def bootstrap_medians(samples, rng, resamples):
    """The medians of ``resamples`` resamples (with replacement) of ``samples``."""
    x = np.asarray(samples, dtype=np.float64)
    picks = rng.integers(0, x.size, size=(resamples, x.size))
    return np.median(x[picks], axis=1)


def check_settings(confidence, threshold):
    """ValueError unless ``confidence`` is in (0, 1) and ``threshold`` is non-negative."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not threshold >= 0:
        raise ValueError(f"threshold must be non-negative, got {threshold}")


def clean(samples):
    """The finite, positive samples as a float64 array (a bad sample is dropped, not trusted)."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    return x[np.isfinite(x) & (x > 0)]


def steady(samples, calibration=None):
    """The samples of the rounds no other work disturbed (all of them without calibration times,
    or when fewer than MIN_STEADY are left)."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    if calibration is None:
        return clean(x)
    c = np.asarray(calibration, dtype=np.float64).ravel()
    if c.shape != x.shape:
        raise ValueError(f"{x.size} samples but {c.size} calibration times")
    ok = np.isfinite(x) & (x > 0) & np.isfinite(c) & (c > 0)
    x, c = x[ok], c[ok]
    if x.size < MIN_STEADY:
        return x
    t = x * c  # the round's own time (in the samples' unit)
    keep = (t <= STEADY * np.percentile(t, 10)) & (c <= STEADY * np.percentile(c, 10))
    return x[keep] if keep.sum() >= MIN_STEADY else x


def compare(baseline, now, threshold, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED):
    """The Change from ``baseline`` samples to ``now`` samples; ``threshold`` a fraction (0.1)."""
    check_settings(confidence, threshold)
    base, cur = clean(baseline), clean(now)
    if base.size < 2 or cur.size < 2:
        raise ValueError(
            f"a comparison needs at least 2 rounds on each side, got {base.size} and {cur.size}"
        )
    rng = np.random.default_rng(seed)
    m0, m1 = float(np.median(base)), float(np.median(cur))
    ratios = bootstrap_medians(cur, rng, resamples) / bootstrap_medians(base, rng, resamples)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail]) - 1.0
    change = m1 / m0 - 1.0
    if change > threshold and low > 0:
        verdict = "slower"
    elif change < -threshold and high < 0:
        verdict = "faster"
    else:
        verdict = "same"
    return Change(m0, m1, change, float(low), float(high), verdict)


def parse_threshold(text):
    """``"10%"`` or ``"0.1"`` -> 0.1; a clear ValueError otherwise."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(
            f"a threshold is a percentage like 10% (or a fraction), got {text!r}"
        ) from None
    if not (value >= 0 and np.isfinite(value)):
        raise ValueError(f"a threshold must be a non-negative percentage, got {text!r}")
    return value


@dataclass(frozen=True)
class Row:
    figure: str
    gate: bool  # whether a slowdown of this figure fails the gate
    change: Change = None  # None: the figure is on one side only
    note: str = ""
    rounds: tuple = ()  # steady and all rounds of the baseline, then of now


def compare_figures(baseline, now, threshold, **kwargs):
    """Rows comparing two ``{name: {"samples": [...], "calibration": [...], "gate": bool}}``
    mappings (``calibration``, optional: each round's calibration seconds), in ``now``'s order,
    then the baseline's figures missing now."""
    rows = []
    for name, fig in now.items():
        gate = bool(fig.get("gate", True))
        if name not in baseline:
            rows.append(Row(name, gate, note="not in the baseline"))
            continue
        base = baseline[name]
        try:
            b = steady(base["samples"], base.get("calibration"))
            n = steady(fig["samples"], fig.get("calibration"))
            change = compare(b, n, threshold, **kwargs)
        except ValueError as e:
            rows.append(Row(name, gate, note=str(e)))
            continue
        counts = (b.size, len(base["samples"]), n.size, len(fig["samples"]))
        rows.append(Row(name, gate, change, rounds=counts))
    rows += [
        Row(name, bool(fig.get("gate", True)), note="not measured now")
        for name, fig in baseline.items()
        if name not in now
    ]
    return rows


def regressions(rows):
    """The rows that fail the gate."""
    return [r for r in rows if r.gate and r.change is not None and r.change.slower]


def table(rows, threshold):
    """The comparison as lines of text: figure, baseline, now, change [interval], verdict."""
    width = max([len("figure")] + [len(r.figure) for r in rows])
    change = "change [95% interval]"
    head = f"{'figure':<{width}}  {'baseline':>10}  {'now':>10}  {change:>26}  {'rounds':>15}"
    lines = [head + "  verdict"]
    for r in rows:
        if r.change is None:
            lines.append(
                f"{r.figure:<{width}}  {'-':>10}  {'-':>10}  {'-':>26}  {'-':>15}  {r.note}"
            )
            continue
        kept = "{}/{} {}/{}".format(*r.rounds) if r.rounds else "-"
        c = r.change
        interval = f"{c.change:+.1%} [{c.low:+.1%}, {c.high:+.1%}]"
        verdict = c.verdict.upper() if (c.slower and r.gate) else c.verdict
        if not r.gate:
            verdict += " (not gated)"
        lines.append(
            f"{r.figure:<{width}}  {c.baseline:>10.4g}  {c.now:>10.4g}  {interval:>26}  "
            f"{kept:>15}  {verdict}"
        )
    failed = regressions(rows)
    lines.append("rounds: steady/all of the baseline, then of now (disturbed rounds left out)")
    lines.append(
        f"{len(failed)} figure(s) slower by more than {threshold:.0%} with a clear interval"
        if failed
        else f"no figure slower by more than {threshold:.0%} with a clear interval"
    )
    return lines


def write_json(rows, threshold, path, **about):
    """The comparison, machine-readable: one object per figure, and whether the gate failed."""
    doc = {
        **about,
        "threshold": threshold,
        "failed": bool(regressions(rows)),
        "figures": [
            {
                "figure": r.figure,
                "gate": r.gate,
                "note": r.note,
                "rounds": list(r.rounds),
                **({} if r.change is None else asdict(r.change)),
            }
            for r in rows
        ],
    }
    with open(path, "w") as fh:
        json.dump(doc, fh, indent=1)
