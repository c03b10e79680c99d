"""vecenv.ppo.sparse: the first layer from its nonzero inputs gives dense.layer's outputs and
dense_grad.weight_grad's gradients, and the compiled update takes that path on sparse
observations without changing what it computes."""

import copy
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")  # vecenv.ppo imports the trainer, which needs it

from vecenv.ppo import sparse  # noqa: E402
from vecenv.ppo.compiled_update import CompiledUpdate  # noqa: E402
from vecenv.ppo.dense import LANES, NONE, RELU, TANH, layer  # noqa: E402
from vecenv.ppo.dense_grad import weight_grad  # noqa: E402
from vecenv.ppo.trainer import PPOConfig  # noqa: E402

from .networks import far_from_uniform  # noqa: E402


def sparse_input(rng, n_in, cols, density):
    """An (n_in, cols) float32 image of mostly zeros: ones and a few other values."""
    x = (rng.random((n_in, cols)) < density).astype(np.float32)
    x[rng.random((n_in, cols)) < density / 4] = rng.normal(0, 2)
    return x


def lists(x, width):
    n_in = x.shape[0]
    starts = np.full(width + 1, 9, dtype=np.int64)  # count sets every entry
    nonzero = sparse.count(x, n_in, width, starts)
    index = np.zeros(max(nonzero, 1), dtype=np.int64)
    values = np.zeros(max(nonzero, 1), dtype=np.float32)
    sparse.gather(x, n_in, width, starts, index, values)
    return nonzero, starts, index, values


@settings(max_examples=40, deadline=None)
@given(
    n_in=st.integers(1, 60),
    n_out=st.integers(1, 20),
    tiles=st.integers(1, 3),
    density=st.sampled_from([0.0, 0.05, 0.3, 1.0]),
    activation=st.sampled_from([NONE, TANH, RELU]),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_first_layer_from_its_nonzero_inputs_is_the_dense_layer(
    n_in, n_out, tiles, density, activation, seed
):
    rng = np.random.default_rng(seed)
    width = tiles * LANES
    x = sparse_input(rng, n_in, width + 5, density)  # columns past width are never read
    w = rng.normal(0, 1, (n_out, n_in)).astype(np.float32)
    b = rng.normal(0, 1, n_out).astype(np.float32)
    nonzero, starts, index, values = lists(x, width)
    assert nonzero == np.count_nonzero(x[:, :width]) == starts[-1]
    for r in range(width):  # each column's nonzero inputs, ascending, with their values
        rows = np.flatnonzero(x[:, r])
        assert np.array_equal(index[starts[r] : starts[r + 1]], rows)
        assert np.array_equal(values[starts[r] : starts[r + 1]], x[rows, r])
    want = np.full((n_out, width), 7.0, dtype=np.float32)
    layer(w, b, x, want, width, activation)
    wt = np.ascontiguousarray(w.T)
    got = np.full((n_out + 2, width + 3), 7.0, dtype=np.float32)
    sparse.layer(wt, b, starts, index, values, got, width, activation, np.zeros(n_out, np.float32))
    assert np.array_equal(got[:n_out, :width], want)  # -0.0 == 0.0: a zero's sign may differ
    assert (got[n_out:] == 7.0).all() and (got[:, width:] == 7.0).all()


@settings(max_examples=30, deadline=None)
@given(
    n_in=st.integers(1, 60),
    n_out=st.integers(1, 20),
    tiles=st.integers(1, 3),
    density=st.sampled_from([0.0, 0.05, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_weight_gradient_from_nonzero_inputs_is_the_dense_one(
    n_in, n_out, tiles, density, seed
):
    rng = np.random.default_rng(seed)
    width = tiles * LANES
    x = sparse_input(rng, n_in, width, density)
    dy = rng.normal(0, 1, (n_out, width)).astype(np.float32)
    want = np.zeros((n_out, n_in), dtype=np.float32)
    weight_grad(dy, x, want, width)
    _, starts, index, values = lists(x, width)
    got = np.full((n_out, n_in), 7.0, dtype=np.float32)
    dyt = np.zeros((width, n_out), dtype=np.float32)
    dwt = np.full((n_in, n_out), 5.0, dtype=np.float32)  # scratch: cleared before use
    sparse.weight_grad(dy, starts, index, values, got, width, dyt, dwt)
    exact = x.astype(np.float64) @ dy.T.astype(np.float64)
    np.testing.assert_allclose(got, exact.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    silent = ~x.any(axis=1)  # inputs zero in every column: exactly 0, as the dense sum gives
    assert np.array_equal(got[:, silent], np.zeros((n_out, silent.sum()), np.float32))
    assert np.array_equal(want[:, silent], got[:, silent])


def test_worth_draws_the_line_at_a_quarter():
    assert sparse.worth(25, 10, 10) and not sparse.worth(26, 10, 10)


def image_batch(net, rows, seed, density=0.05):
    rng = np.random.default_rng(seed)
    size, width = net.critic[0].in_features, net.actor[-1].out_features
    obs = sparse_input(rng, rows, size, density)
    actions = rng.integers(0, width, rows)
    with torch.no_grad():
        logp, _, values = net.evaluate(torch.from_numpy(obs), torch.from_numpy(actions))
    logp = (logp.numpy() + rng.normal(0, 0.3, rows)).astype(np.float32)
    values = (values.numpy() + rng.normal(0, 0.3, rows)).astype(np.float32)
    adv = rng.normal(0.3, 1.5, rows).astype(np.float32)
    returns = (values + rng.normal(0, 1, rows)).astype(np.float32)
    return obs, actions, logp, adv, returns, values


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_the_update_on_sparse_observations_matches_its_dense_path(activation):
    """Same losses at every step (the forward passes agree), parameters within float32
    rounding (the first layer's gradient sums differently), and the same bits on one thread or
    two."""
    net = far_from_uniform(obs_size=120, hidden=(32, 32), actions=4, seed=5, activation=activation)
    batch = image_batch(net, 300, seed=5)
    config = PPOConfig(update_epochs=2, num_minibatches=3, ent_coef=0.01, learning_rate=1e-3)
    runs = []
    for sparse_inputs, threads in ((False, 1), (True, 1), (True, 2)):
        copy_ = copy.deepcopy(net)
        cfg = dataclasses.replace(config, torch_threads=threads)
        runner = CompiledUpdate(copy_, cfg, sparse_inputs=sparse_inputs)
        assert runner.sparse_inputs == sparse_inputs
        stats = runner.update(*batch, lr=1e-3).copy()
        runs.append((stats, torch.cat([p.detach().flatten() for p in copy_.parameters()])))
    (dense_stats, dense_p), (one_stats, one_p), (two_stats, two_p) = runs
    np.testing.assert_array_equal(one_stats[0, :3], dense_stats[0, :3])  # the first step's
    np.testing.assert_allclose(one_stats, dense_stats, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(one_p.numpy(), dense_p.numpy(), rtol=1e-4, atol=1e-5)
    assert np.array_equal(one_stats, two_stats) and torch.equal(one_p, two_p)


def test_dense_observations_and_huge_first_layers_take_the_dense_path():
    net = far_from_uniform(obs_size=80, hidden=(16,), actions=3, seed=2)
    rng = np.random.default_rng(2)
    obs = rng.normal(0, 1, (67, 80)).astype(np.float32)  # nothing zero: not worth the lists
    # 67 rows in minibatches of 16: the last has 3 rows in 16 columns, as dense as the rest
    batch = (obs, *image_batch(net, 67, seed=2)[1:])
    twins = [copy.deepcopy(net) for _ in range(2)]
    for twin, sparse_inputs in zip(twins, (False, True), strict=True):
        runner = CompiledUpdate(twin, PPOConfig(num_minibatches=4), sparse_inputs=sparse_inputs)
        runner.update(*batch, lr=1e-3)
    for p, q in zip(twins[0].parameters(), twins[1].parameters(), strict=True):
        assert torch.equal(p, q)  # the very same path: the same bits
    wide = far_from_uniform(obs_size=2**15, hidden=(2**8,), actions=2, seed=0)
    assert not CompiledUpdate(wide, PPOConfig()).sparse_inputs  # its scratch would be 32 MB
    few = far_from_uniform(obs_size=8, hidden=(16,), actions=2, seed=0)
    assert not CompiledUpdate(few, PPOConfig()).sparse_inputs  # 8 inputs: nothing to save
