"""Two builds timed in the same run, round for round: the change and its interval, a verdict.

A baseline saved in one run and compared with another compares two states of the machine as much
as two builds: on a loaded 2-vCPU machine the time over the calibration kernel moved 15-20%
between runs of the same code, which no calibration removes. Timing both builds in the same run,
their rounds alternating (A B, B A, A B, ...), gives pairs of rounds taken a millisecond apart:
both sides of a pair see the same spell of load, and a load that slows both leaves their ratio.

The change is ``median(b_i / a_i) - 1`` over the pairs (positive: B is slower). A pair that load
hit on one side only gives a ratio far out on either side; the median leaves it out. Its interval
is a percentile bootstrap over the pairs (pairs resampled whole, so the pairing is kept).

Pairing cancels load that changes in time, not what differs between two processes: the same code
in two worker processes ran a steady 5-12% apart for a whole run on a 2-vCPU machine with both
cores busy (where each process's memory and code landed, which core the scheduler kept it on). So
the pairs come in groups, one group per pair of worker processes, and given the groups the
bootstrap is a two-stage one: groups resampled first, then pairs within each group drawn. A
difference that only one pair of processes shows widens the interval instead of deciding it.

The verdict is "slower" only when the whole interval is above ``threshold``: the run fails when
the data say "slower by more than the threshold", not merely "slower".
"""

from dataclasses import dataclass

import numpy as np

# The saved-run comparison's settings (fixed seed: the same rounds always get the same interval
# and verdict) and its bootstrap of medians.
from .compare import CONFIDENCE, RESAMPLES, SEED, bootstrap_medians, check_settings

MIN_PAIRS = 5


@dataclass(frozen=True)
class PairedChange:
    a: float  # median of A's rounds (the reference)
    b: float  # median of B's rounds (the code now)
    change: float  # median of b/a over the pairs, minus 1
    low: float  # the interval of the change
    high: float
    pairs: int  # pairs that counted (both sides finite and positive)
    verdict: str  # "slower", "faster" or "same"

    @property
    def slower(self):
        return self.verdict == "slower"


def grouped_bootstrap_medians(samples, groups, rng, resamples):
    """The medians of ``resamples`` two-stage resamples of ``samples``: as many groups as there
    are drawn from ``groups`` (labels, one a sample) with replacement, then each drawn group's
    samples drawn from it with replacement, as many as it has."""
    labels, at = np.unique(groups, return_inverse=True)
    members = [samples[at == g] for g in range(labels.size)]
    sizes = np.array([m.size for m in members])
    width = sizes.max()
    table = np.full((labels.size, width), np.nan)
    for g, m in enumerate(members):
        table[g, : m.size] = m
    chosen = rng.integers(0, labels.size, size=(resamples, labels.size))
    # Within a drawn group, its own size of draws; the rest of the row stays NaN (left out).
    picks = np.floor(rng.random((resamples, labels.size, width)) * sizes[chosen][..., None])
    drawn = np.take_along_axis(table[chosen], picks.astype(np.int64), axis=2)
    drawn[np.arange(width) >= sizes[chosen][..., None]] = np.nan
    return np.nanmedian(drawn.reshape(resamples, -1), axis=1)


def paired_change(
    a, b, threshold, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED, groups=None
) -> PairedChange:
    """The change from A's round times ``a`` to B's ``b`` (``a[i]`` and ``b[i]`` taken together);
    ``threshold`` a fraction (0.1). ``groups``: a label per pair, the pair of worker processes
    that timed it (None: one group)."""
    check_settings(confidence, threshold)
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired rounds need as many of each side, got {x.size} and {y.size}")
    g = np.zeros(x.size, np.int64) if groups is None else np.asarray(groups).ravel()
    if g.shape != x.shape:
        raise ValueError(f"{x.size} pairs but {g.size} group labels")
    ok = np.isfinite(x) & (x > 0) & np.isfinite(y) & (y > 0)
    x, y, g = x[ok], y[ok], g[ok]
    if x.size < MIN_PAIRS:
        raise ValueError(f"a comparison needs at least {MIN_PAIRS} pairs of rounds, got {x.size}")
    ratio = y / x
    rng = np.random.default_rng(seed)
    if np.unique(g).size > 1:
        boot = grouped_bootstrap_medians(ratio, g, rng, resamples)
    else:
        boot = bootstrap_medians(ratio, rng, resamples)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail]) - 1.0
    change = float(np.median(ratio)) - 1.0
    if low > threshold:
        verdict = "slower"
    elif high < -threshold:
        verdict = "faster"
    else:
        verdict = "same"
    return PairedChange(
        float(np.median(x)), float(np.median(y)), change, float(low), float(high), x.size, verdict
    )
