"""Two builds timed in the same run, round for round: the change and its interval, a verdict.

A baseline saved in one run and compared with another compares two states of the machine as much
as two builds: on a loaded 2-vCPU machine the time over the calibration kernel moved 15-20%
between runs of the same code, which no calibration removes. Timing both builds in the same run,
their rounds alternating (A B, B A, A B, ...), gives pairs of rounds taken a millisecond apart:
both sides of a pair see the same spell of load, and a load that slows both leaves their ratio.

The change is ``median(b_i / a_i) - 1`` over the pairs (positive: B is slower). A pair that load
hit on one side only gives a ratio far out on either side; the median leaves it out. Its interval
is a percentile bootstrap over the pairs (pairs resampled whole, so the pairing is kept).

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


def paired_change(
    a, b, threshold, confidence=CONFIDENCE, resamples=RESAMPLES, seed=SEED
) -> PairedChange:
    """The change from A's round times ``a`` to B's ``b`` (``a[i]`` and ``b[i]`` taken together);
    ``threshold`` a fraction (0.1)."""
    check_settings(confidence, threshold)
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired rounds need as many of each side, got {x.size} and {y.size}")
    ok = np.isfinite(x) & (x > 0) & np.isfinite(y) & (y > 0)
    x, y = x[ok], y[ok]
    if x.size < MIN_PAIRS:
        raise ValueError(f"a comparison needs at least {MIN_PAIRS} pairs of rounds, got {x.size}")
    ratio = y / x
    boot = bootstrap_medians(ratio, np.random.default_rng(seed), resamples)
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
