"""The intervals the command line prints (vecenv.stats)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vecenv.stats import mean_interval, t975, wilson

# Student's t quantile 0.975 from published tables.
TABLE = {1: 12.706, 2: 4.303, 5: 2.571, 10: 2.228, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


@pytest.mark.parametrize(("df", "quantile"), TABLE.items())
def test_t_quantiles_match_the_tables(df, quantile):
    assert t975(df) == pytest.approx(quantile, abs=1e-3)


def test_t_quantiles_fall_towards_the_normal_one():
    values = [t975(df) for df in range(1, 400)]
    assert all(a > b for a, b in zip(values, values[1:], strict=False))
    assert 1.95996 < values[-1] < 1.967  # t(399) = 1.9659
    with pytest.raises(ValueError):
        t975(0)


def test_a_known_sample_has_its_textbook_interval():
    mean, low, high = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764 * math.sqrt(2.5) / math.sqrt(5)
    assert (mean, low, high) == pytest.approx((3.0, 3.0 - half, 3.0 + half), abs=1e-4)


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=60))
def test_the_interval_holds_the_mean_and_is_symmetric(values):
    mean, low, high = mean_interval(values)
    assert mean == pytest.approx(np.mean(values), abs=1e-6)
    assert low <= mean <= high
    assert mean - low == pytest.approx(high - mean, abs=1e-6 * (1 + abs(mean)))


def test_one_value_has_an_unbounded_interval_and_none_is_an_error():
    assert mean_interval([4.0]) == (4.0, -math.inf, math.inf)
    with pytest.raises(ValueError):
        mean_interval([])


def test_wilson_stays_inside_zero_and_one():
    low, high = wilson(50, 100)
    assert 0.39 < low < 0.5 < high < 0.61
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)
