"""vecenv.ppo.dense_grad: the backward products of a dense layer agree with float64 matrix
products to float32 rounding, touch only what they should, and repeat bit for bit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")  # vecenv.ppo imports the trainer, which needs it

from vecenv.ppo.dense import LANES, RELU, TANH  # noqa: E402
from vecenv.ppo.dense_grad import activation_grad, input_grad, row_sums, weight_grad  # noqa: E402


def close(got, want, terms):
    """float32 sums of ``terms`` products of unit normals: a few 1e-7 of their magnitude."""
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.sqrt(terms) * 10)


@settings(max_examples=60, deadline=None)
@given(
    n_out=st.integers(1, 13),
    n_in=st.integers(1, 13),
    tiles=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_weight_grad_is_the_outer_product_sum(n_out, n_in, tiles, seed):
    rng = np.random.default_rng(seed)
    width = tiles * LANES
    cols = width + LANES  # columns past the width are never read
    dy = rng.normal(0, 1, (n_out + 2, cols)).astype(np.float32)
    x = rng.normal(0, 1, (n_in + 1, cols)).astype(np.float32)
    dy[:, width:] = np.nan
    x[:, width:] = np.nan
    dw = np.zeros((n_out, n_in), dtype=np.float32)
    weight_grad(dy, x, dw, width)
    want = dy[:n_out, :width].astype(np.float64) @ x[:n_in, :width].T.astype(np.float64)
    close(dw, want, width)


@settings(max_examples=60, deadline=None)
@given(
    n_out=st.integers(1, 13),
    n_in=st.integers(1, 21),
    tiles=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_input_grad_is_the_transposed_product(n_out, n_in, tiles, seed):
    rng = np.random.default_rng(seed)
    width = tiles * LANES
    w = rng.normal(0, 1, (n_out, n_in)).astype(np.float32)
    dy = rng.normal(0, 1, (n_out + 1, width + LANES)).astype(np.float32)
    dx = np.full((n_in + 2, width + LANES), 7.0, dtype=np.float32)
    input_grad(w, dy, dx, width)
    want = w.T.astype(np.float64) @ dy[:n_out, :width].astype(np.float64)
    close(dx[:n_in, :width], want, n_out)
    assert (dx[n_in:] == 7.0).all() and (dx[:, width:] == 7.0).all()  # nothing else written


def test_row_sums_and_activation_grads():
    rng = np.random.default_rng(1)
    dy = rng.normal(0, 1, (5, 4 * LANES)).astype(np.float32)
    db = np.zeros(4, dtype=np.float32)
    row_sums(dy, db, 3 * LANES)
    close(db, dy[:4, : 3 * LANES].astype(np.float64).sum(axis=1), 3 * LANES)
    pre = rng.normal(0, 1, (5, 4 * LANES)).astype(np.float32)
    pre[0, :3] = [np.nan, -0.0, 0.0]  # PyTorch's edges: NaN passes the gradient, zeros do not
    one = np.float32(1.0)
    for activation in (TANH, RELU):
        y = (
            torch.tanh(torch.from_numpy(pre))
            if activation == TANH
            else torch.relu(torch.from_numpy(pre))
        )
        x = torch.from_numpy(pre).requires_grad_()
        (torch.tanh(x) if activation == TANH else torch.relu(x)).backward(torch.from_numpy(dy))
        y = y.numpy()
        dx = dy.copy()
        activation_grad(dx, y, 3, 2 * LANES, activation)
        part = np.s_[:3, : 2 * LANES]
        if activation == TANH:
            assert np.array_equal(dx[part], dy[part] * (one - y * y)[part], equal_nan=True)
        else:
            assert np.array_equal(dx[part], x.grad.numpy()[part])
        assert np.array_equal(dx[3:], dy[3:])
        assert np.array_equal(dx[:, 2 * LANES :], dy[:, 2 * LANES :])


def test_results_repeat_bit_for_bit():
    rng = np.random.default_rng(2)
    dy = rng.normal(0, 1, (64, 512)).astype(np.float32)
    x = rng.normal(0, 1, (64, 512)).astype(np.float32)
    first, again = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    weight_grad(dy, x, first, 512)
    weight_grad(dy, x, again, 512)
    assert np.array_equal(first, again)
    dx1, dx2 = np.zeros((64, 512), np.float32), np.zeros((64, 512), np.float32)
    input_grad(first, dy, dx1, 512)
    input_grad(first, dy, dx2, 512)
    assert np.array_equal(dx1, dx2)
