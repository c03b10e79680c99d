"""vecenv.ppo.dense: the vector-register layer gives the plain scalar loop's results bit for bit,
and its tanh is within a few float32 ulp of the true value."""

import numba as nb
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")  # vecenv.ppo imports the trainer, which needs it

import torch  # noqa: E402

from vecenv.ppo.dense import HEIGHT, LANES, NONE, RELU, TANH, layer, tanh  # noqa: E402


@nb.njit(error_model="numpy")
def scalar_layer(w, b, src, m):
    """The definition: each output its bias plus the products in input order, in float32."""
    out = np.zeros((w.shape[0], m), dtype=np.float32)
    for j in range(w.shape[0]):
        for r in range(m):
            acc = b[j]
            for k in range(w.shape[1]):
                acc = acc + w[j, k] * src[k, r]
            out[j, r] = acc
    return out


@nb.njit(error_model="numpy")
def tanh_all(xs):
    out = np.empty_like(xs)
    for i in range(xs.shape[0]):
        out[i] = tanh(xs[i])
    return out


@settings(max_examples=60, deadline=None)
@given(
    n_out=st.integers(1, 3 * HEIGHT + 1),
    n_in=st.integers(1, 70),
    m=st.integers(1, 4 * LANES),
    activation=st.sampled_from([NONE, TANH, RELU]),
    seed=st.integers(0, 2**32 - 1),
)
def test_layer_is_the_scalar_loop_bit_for_bit(n_out, n_in, m, activation, seed):
    rng = np.random.default_rng(seed)
    w = rng.normal(0, 1, (n_out, n_in)).astype(np.float32)
    b = rng.normal(0, 1, n_out).astype(np.float32)
    cols = 4 * LANES
    src = rng.normal(0, 1, (n_in + 3, cols)).astype(np.float32)  # spare rows are never read
    dst = np.full((n_out + 2, cols), 7.0, dtype=np.float32)
    layer(w, b, src, dst, m, activation)
    want = scalar_layer(w, b, src, m)
    if activation == TANH:
        want = tanh_all(want.ravel()).reshape(want.shape)
    elif activation == RELU:
        want = torch.relu(torch.from_numpy(want)).numpy()
    assert np.array_equal(dst[:n_out, :m], want)
    assert (dst[n_out:] == 7.0).all()  # rows past the outputs untouched


def test_relu_keeps_torchs_edges():
    w = np.ones((1, 1), dtype=np.float32)
    b = np.array([-0.0], dtype=np.float32)  # -0.0 + -0.0 stays -0.0
    src = np.zeros((1, LANES), dtype=np.float32)
    src[0, :5] = [np.nan, -0.0, -3.0, 2.5, np.inf]
    dst = np.zeros((1, LANES), dtype=np.float32)
    layer(w, b, src, dst, LANES, RELU)
    want = torch.relu(torch.from_numpy(src[0] + np.float32(-0.0))).numpy()
    assert np.array_equal(dst[0], want, equal_nan=True)
    assert np.array_equal(np.signbit(dst[0]), np.signbit(want))


def test_a_column_does_not_depend_on_its_neighbours():
    rng = np.random.default_rng(3)
    w = rng.normal(0, 1, (9, 33)).astype(np.float32)
    b = rng.normal(0, 1, 9).astype(np.float32)
    src = rng.normal(0, 1, (33, 2 * LANES)).astype(np.float32)
    full = np.zeros((9, 2 * LANES), dtype=np.float32)
    layer(w, b, src, full, 2 * LANES, TANH)
    for r in (0, 5, LANES, 2 * LANES - 1):
        alone = np.zeros_like(src)
        alone[:, 0] = src[:, r]
        out = np.zeros_like(full)
        layer(w, b, alone, out, 1, TANH)
        assert np.array_equal(out[:, 0], full[:, r])


def ulps(got, xs):
    want = np.tanh(xs.astype(np.float64))
    spacing = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def test_tanh_is_within_three_ulp_across_the_float32_range():
    rng = np.random.default_rng(0)
    xs = np.concatenate(
        [
            rng.normal(0, 3, 200_000),
            rng.uniform(-12, 12, 200_000),
            10.0 ** rng.uniform(-44, 1.5, 100_000) * rng.choice([-1, 1], 100_000),
        ]
    ).astype(np.float32)
    assert ulps(tanh_all(xs), xs).max() <= 3.0


def test_tanh_at_the_edges():
    xs = np.array([0.0, -0.0, 1e-45, -1e-45, 9.0, 9.5, 1e30, -1e30, np.inf, -np.inf, np.nan])
    got = tanh_all(xs.astype(np.float32))
    assert ulps(got[:8], xs[:8].astype(np.float32)).max() <= 3.0
    assert np.signbit(got[1]) and not np.signbit(got[0])
    assert got[8] == 1.0 and got[9] == -1.0 and np.isnan(got[10])


@given(st.floats(width=32, allow_nan=False))
def test_tanh_of_any_float32(x):
    got = tanh_all(np.array([x], dtype=np.float32))
    assert ulps(got, np.array([x], dtype=np.float32))[0] <= 3.0
