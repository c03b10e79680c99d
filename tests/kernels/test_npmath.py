"""kernels.npmath.square gives libm's pow(x, 2) bit for bit, taking the fast path where it may."""

import numba as nb
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vecenv.kernels.npmath import f32, pow, square


@nb.njit
def mismatches(xs):
    bad = 0
    for k in range(xs.shape[0]):
        a = square(xs[k])
        b = pow(xs[k], 2.0)
        if not (a == b or (a != a and b != b)):
            bad += 1
    return bad


@nb.njit
def one(x):
    return square(x), pow(x, 2.0)


def test_square_matches_pow_on_a_million_draws_over_many_binades():
    rng = np.random.default_rng(7)
    xs = rng.uniform(-1, 1, 1_000_000) * np.exp2(rng.integers(-60, 60, 1_000_000))
    assert mismatches(xs) == 0


def test_square_matches_pow_around_every_power_of_two_and_at_the_edges():
    powers = np.exp2(np.arange(-1074, 1024, dtype=np.float64))
    roots = np.sqrt(powers)
    near = np.concatenate([roots, np.nextafter(roots, np.inf), np.nextafter(roots, 0)])
    edges = np.array([0.0, -0.0, 5e-324, 1e-160, 1e155, 1.7e308, np.inf, -np.inf, np.nan])
    assert mismatches(near) == 0 and mismatches(-near) == 0 and mismatches(edges) == 0


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_square_matches_pow_for_any_float(x):
    got, want = one(x)
    assert got == want or (np.isnan(got) and np.isnan(want))


def test_pow_is_not_rewritten_into_a_product():
    """Some squares differ from x * x: if these matched, LLVM would have replaced pow."""
    xs = np.random.default_rng(0).uniform(-10, 10, 20_000)
    got = np.array([one(x)[1] for x in xs])
    assert (got != xs * xs).any()


def test_f32_rounds_to_nearest_even():
    assert f32(1.0 + 2.0**-24) == 1.0
    assert f32(1.0 + 3 * 2.0**-24) == 1.0 + 2.0**-22
