"""Confidence intervals the command line and the benchmarks print: a proportion's (Wilson) and a
mean's (Student's t). Both 95%, two-sided; no SciPy (the core does without it)."""

import math

import numpy as np

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
# Student's t quantile 0.975 for 1..30 degrees of freedom; past 30 the Cornish-Fisher expansion
# below is within 1e-4 of it.
_T975 = (
    12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
    2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
    2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
)  # fmt: skip


def t975(df):
    """Student's t quantile 0.975 with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[int(df) - 1]
    z = Z95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def mean_interval(values):
    """(mean, low, high): the mean of ``values`` and its 95% t-interval. One value has no
    spread to measure: its interval is (-inf, inf)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError("the mean of no values")
    mean = float(x.mean())
    if x.size == 1:
        return mean, -math.inf, math.inf
    half = t975(x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


def wilson(successes, n):
    """The Wilson score interval (95%) of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + Z95 * Z95 / (2 * n)) / (1 + Z95 * Z95 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 * Z95 / (4 * n * n)) / (1 + Z95 * Z95 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
