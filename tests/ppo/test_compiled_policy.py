"""vecenv.ppo.compiled: the compiled rollout pass agrees with ActorCritic, sees the optimizer's
steps without copies, draws by (seed, counter, row) alone, and refuses bad input."""

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from vecenv.ppo.compiled import CompiledPolicy  # noqa: E402

from .networks import far_from_uniform  # noqa: E402

TOL = {"rtol": 1e-5, "atol": 1e-5}


network = functools.partial(far_from_uniform, hidden=(64, 64), log_std_low=-1.5)


def observations(n, size, seed=1, scale=2.0):
    return np.random.default_rng(seed).normal(0, scale, (n, size)).astype(np.float32)


def legal_masks(n, actions, seed):
    rng = np.random.default_rng(seed)
    mask = rng.random((n, actions)) < 0.5
    mask[np.arange(n), rng.integers(0, actions, n)] = True  # at least one legal move a row
    return mask


def torch_evaluate(net, x, actions, mask=None):
    t_mask = None if mask is None else torch.from_numpy(mask)
    with torch.no_grad():
        logp, _, value = net.evaluate(torch.from_numpy(x), torch.from_numpy(actions), t_mask)
    return logp.numpy(), value.numpy()


@settings(max_examples=40, deadline=None)
@given(
    obs_size=st.integers(1, 12),
    hidden=st.lists(st.integers(1, 70), min_size=0, max_size=3).map(tuple),
    discrete=st.booleans(),
    actions=st.integers(1, 7),
    norm=st.booleans(),
    masked=st.booleans(),
    n=st.integers(0, 150),
    seed=st.integers(0, 2**16),
    activation=st.sampled_from(["tanh", "relu"]),
)
def test_matches_torch(obs_size, hidden, discrete, actions, norm, masked, n, seed, activation):
    net = network(
        obs_size=obs_size,
        hidden=hidden,
        actions=actions,
        discrete=discrete,
        norm=norm,
        seed=seed,
        activation=activation,
    )
    policy = CompiledPolicy(net)
    x = observations(n, obs_size, seed, scale=3.0)
    mask = legal_masks(n, actions, seed) if discrete and masked else None
    action, logp, value = policy.sample(x, mask, seed=seed, counter=7)
    assert action.dtype == (np.int64 if discrete else np.float32)
    assert action.shape == ((n,) if discrete else (n, actions))
    assert logp.dtype == value.dtype == np.float32 and logp.shape == value.shape == (n,)
    if discrete:
        assert ((action >= 0) & (action < actions)).all()
        if mask is not None:
            assert mask[np.arange(n), action].all()
    want_logp, want_value = torch_evaluate(net, x, action.copy(), mask)
    np.testing.assert_allclose(logp, want_logp, **TOL)
    np.testing.assert_allclose(value, want_value, **TOL)
    np.testing.assert_allclose(policy.value(x), want_value, **TOL)

    t_mask = None if mask is None else torch.from_numpy(mask)
    with torch.no_grad():
        dist = net.distribution(torch.from_numpy(x), t_mask)
    best = policy.best(x, mask)
    if discrete:
        # Compare where the best action is clear: a near-tie may round either way.
        top2 = torch.topk(dist.logits, min(2, actions)).values.numpy()
        clear = top2[:, 0] - top2[:, -1] > 1e-4 if actions > 1 else np.ones(n, bool)
        assert np.array_equal(best[clear], dist.probs.argmax(-1).numpy()[clear])
    else:
        np.testing.assert_allclose(best, dist.mean.numpy(), **TOL)


@pytest.mark.parametrize("discrete", [True, False])
def test_parameter_views_follow_an_optimizer_step(discrete):
    net = network(discrete=discrete, norm=True, actions=3)
    policy = CompiledPolicy(net)
    x = observations(40, 4)
    before = policy.value(x).copy()
    action, logp_before, _ = policy.sample(x, seed=1, counter=0)
    action = action.copy()
    logp_before = logp_before.copy()

    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    logp, _, value = net.evaluate(torch.from_numpy(x), torch.from_numpy(action))
    (value.square().mean() - logp.mean()).backward()
    optimizer.step()
    net.obs_norm.update(observations(30, 4, seed=9, scale=5.0))

    after = policy.value(x)
    assert not np.allclose(after, before, rtol=1e-3)
    np.testing.assert_allclose(after, torch_evaluate(net, x, action)[1], **TOL)
    # The same (seed, counter) again: the draws' log-probabilities under the new parameters.
    moved, logp, value = policy.sample(x, seed=1, counter=0)
    want_logp, want_value = torch_evaluate(net, x, moved.copy())
    np.testing.assert_allclose(logp, want_logp, **TOL)
    np.testing.assert_allclose(value, want_value, **TOL)
    assert not np.allclose(logp, logp_before, rtol=1e-3)


def test_parameters_are_views_not_copies():
    net = network()
    policy = CompiledPolicy(net)
    x = observations(10, 4)
    before = policy.value(x).copy()
    with torch.no_grad():
        net.critic[-1].bias.add_(1.5)  # in place, as every optimizer writes
    after = policy.value(x)
    np.testing.assert_allclose(after, torch_evaluate(net, x, np.zeros(10, int))[1], **TOL)
    np.testing.assert_allclose(after - before, 1.5, rtol=1e-6)


@pytest.mark.parametrize("discrete", [True, False])
def test_same_seed_and_counter_same_draws(discrete):
    net = network(discrete=discrete)
    x = observations(100, 4)
    first = [a.copy() for a in CompiledPolicy(net).sample(x, seed=5, counter=11)]
    policy = CompiledPolicy(net)
    again = policy.sample(x, seed=5, counter=11)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a, b)
    other_counter = policy.sample(x, seed=5, counter=12)[0].copy()
    other_seed = policy.sample(x, seed=6, counter=11)[0].copy()
    assert not np.array_equal(other_counter, first[0])
    assert not np.array_equal(other_seed, first[0])
    assert not np.array_equal(other_seed, other_counter)


@pytest.mark.parametrize("discrete", [True, False])
def test_a_rows_draw_does_not_depend_on_the_batch(discrete):
    net = network(discrete=discrete, actions=5, norm=True)
    policy = CompiledPolicy(net)
    x = observations(300, 4)
    mask = legal_masks(300, 5, seed=2) if discrete else None
    big = [a.copy() for a in policy.sample(x, mask, seed=3, counter=4)]
    for n in (1, 8, 17, 64, 65):
        small = policy.sample(x[:n], None if mask is None else mask[:n], seed=3, counter=4)
        for a, b in zip(big, small, strict=True):
            assert np.array_equal(a[:n], b)
    # One observation repeated: rows differ only by their index, and draw differently.
    same = np.repeat(x[:1], 50, axis=0)
    actions = policy.sample(same, seed=3, counter=4)[0]
    assert len(np.unique(actions, axis=0)) > 1


def test_masked_actions_are_never_drawn_even_when_favoured():
    net = network(actions=6, seed=4)
    policy = CompiledPolicy(net)
    n = 50_000
    x = observations(n, 4, seed=2)
    with torch.no_grad():
        logits = net.distribution(torch.from_numpy(x)).logits.numpy()
    # Mask each row's two most likely actions, and draw many times.
    order = np.argsort(-logits, axis=1)
    mask = np.ones((n, 6), dtype=bool)
    mask[np.arange(n), order[:, 0]] = False
    mask[np.arange(n), order[:, 1]] = False
    for counter in range(3):
        action, logp, _ = policy.sample(x, mask, seed=0, counter=counter)
        assert mask[np.arange(n), action].all()
        assert np.isfinite(logp).all()
    # A single legal move is always drawn, with log-probability 0.
    only = np.zeros((n, 6), dtype=bool)
    only[:, 2] = True
    action, logp, _ = policy.sample(x, only, seed=0, counter=0)
    assert (action == 2).all() and (logp == 0).all()


def test_draw_frequencies_match_the_probabilities():
    net = network(actions=5, seed=6)
    policy = CompiledPolicy(net)
    n = 400_000
    x = np.repeat(observations(1, 4, seed=3), n, axis=0)
    mask = np.ones((n, 5), dtype=bool)
    mask[:, 3] = False
    with torch.no_grad():
        probs = net.distribution(torch.from_numpy(x[:1]), torch.from_numpy(mask[:1])).probs[0]
    probs = probs.double().numpy()
    action, logp, _ = policy.sample(x, mask, seed=12345, counter=0)
    counts = np.bincount(action, minlength=5)
    assert counts[3] == 0
    # Binomial standard errors: a fixed seed makes this deterministic, 5 sigma makes it fair.
    expected = n * probs
    sigma = np.sqrt(n * probs * (1 - probs))
    assert (np.abs(counts - expected) <= 5 * sigma + 1e-9).all()
    np.testing.assert_allclose(np.exp(logp[:5]), probs[action[:5]], rtol=1e-5)


def test_gaussian_draws_have_the_policys_mean_and_spread():
    net = network(discrete=False, actions=3, seed=8)
    policy = CompiledPolicy(net)
    n = 200_000
    x = np.repeat(observations(1, 4, seed=5), n, axis=0)
    with torch.no_grad():
        dist = net.distribution(torch.from_numpy(x[:1]))
    mean, std = dist.mean[0].double().numpy(), dist.stddev[0].double().numpy()
    action = policy.sample(x, seed=99, counter=1)[0].astype(np.float64)
    z = (action - mean) / std
    assert (np.abs(z.mean(axis=0)) < 5 / math.sqrt(n)).all()
    assert (np.abs(z.std(axis=0) - 1) < 5 / math.sqrt(2 * n)).all()
    # The normal's mass within one standard deviation, and the dimensions uncorrelated.
    within = (np.abs(z) < 1).mean(axis=0)
    assert (np.abs(within - 0.682689) < 5 * math.sqrt(0.2166 / n)).all()
    corr = np.corrcoef(z.T)[np.triu_indices(3, 1)]
    assert (np.abs(corr) < 5 / math.sqrt(n)).all()


def test_output_buffers_are_reused_and_grow():
    policy = CompiledPolicy(network())
    x = observations(20, 4)
    a1, logp1, v1 = policy.sample(x, seed=0, counter=0)
    a2, logp2, v2 = policy.sample(x, seed=0, counter=1)
    assert np.shares_memory(a1, a2) and np.shares_memory(logp1, logp2)
    assert np.shares_memory(v1, v2)
    big = observations(1000, 4)
    a3, _, _ = policy.sample(big, seed=0, counter=0)
    assert a3.shape == (1000,)
    assert np.array_equal(a3[:20], policy.sample(big[:20], seed=0, counter=0)[0])


def test_an_empty_batch():
    policy = CompiledPolicy(network(discrete=False, actions=2))
    action, logp, value = policy.sample(np.zeros((0, 4), np.float32), seed=0, counter=0)
    assert action.shape == (0, 2) and logp.shape == value.shape == (0,)


def test_a_strided_batch_gives_the_contiguous_results():
    policy = CompiledPolicy(network())
    x = observations(50, 8)[:, ::2]
    assert not x.flags.c_contiguous
    got = [a.copy() for a in policy.sample(x, seed=1, counter=2)]
    for a, b in zip(got, policy.sample(np.ascontiguousarray(x), seed=1, counter=2), strict=True):
        assert np.array_equal(a, b)


X = observations(6, 4)


@pytest.mark.parametrize(
    "x, message",
    [
        (X.tolist(), "numpy array"),
        (X.astype(np.float64), "float32"),
        (X.astype(np.float16), "float32"),
        (X[0], r"shape \(n, 4\)"),
        (X[:, :3], r"shape \(n, 4\)"),
        (X[None], r"shape \(n, 4\)"),
        (np.where(np.arange(4) == 2, np.nan, X).astype(np.float32), "NaN"),
        (np.where(np.arange(4) == 1, -np.inf, X).astype(np.float32), "infinite"),
    ],
)
def test_bad_observations_are_refused(x, message):
    policy = CompiledPolicy(network())
    for call in (
        lambda: policy.sample(x, seed=0, counter=0),
        lambda: policy.best(x),
        lambda: policy.value(x),
    ):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize(
    "mask, message",
    [
        (np.ones((6, 3), dtype=np.int64), "bool"),
        (np.ones((6, 3), dtype=bool).tolist(), "bool"),
        (np.ones((6, 4), dtype=bool), r"shape \(6, 3\)"),
        (np.ones((5, 3), dtype=bool), r"shape \(6, 3\)"),
        (np.ones(6, dtype=bool), r"shape \(6, 3\)"),
        (np.eye(6, 3, dtype=bool), "at least one legal action"),
    ],
)
def test_bad_masks_are_refused(mask, message):
    policy = CompiledPolicy(network(actions=3))
    with pytest.raises(ValueError, match=message):
        policy.sample(X, mask, seed=0, counter=0)
    with pytest.raises(ValueError, match=message):
        policy.best(X, mask)


def test_a_mask_for_gaussian_actions_is_refused():
    policy = CompiledPolicy(network(discrete=False, actions=3))
    with pytest.raises(ValueError, match="Discrete"):
        policy.sample(X, np.ones((6, 3), dtype=bool), seed=0, counter=0)


@pytest.mark.parametrize(
    "seed, counter, message",
    [(-1, 0, "seed"), (2**64, 0, "seed"), (0, -5, "counter"), (0, 1.5, "counter")],
)
def test_bad_seeds_and_counters_are_refused(seed, counter, message):
    policy = CompiledPolicy(network())
    with pytest.raises(ValueError, match=message):
        policy.sample(X, seed=seed, counter=counter)


def test_the_largest_seed_and_numpy_integers_are_taken():
    policy = CompiledPolicy(network())
    a = policy.sample(X, seed=2**64 - 1, counter=np.int64(3))[0].copy()
    b = policy.sample(X, seed=np.uint64(2**64 - 1), counter=3)[0]
    assert np.array_equal(a, b)


@pytest.mark.parametrize("discrete", [True, False])
def test_nan_parameters_are_reported(discrete):
    net = network(discrete=discrete)
    policy = CompiledPolicy(net)
    with torch.no_grad():
        if discrete:
            net.actor[0].weight[0, 0] = float("nan")
        else:
            net.log_std[1] = float("nan")
    with pytest.raises(ValueError, match="not finite"):
        policy.sample(X, seed=0, counter=0)


def unsupported_networks():
    def swap(stack, i, layer):
        def edit(net):
            getattr(net, stack)[i] = layer

        return edit

    def double(net):
        net.double()

    def no_norm_buffers(net):
        net.obs_norm = nn.Identity()

    return {
        "mixed activations": (swap("actor", 1, nn.ReLU()), False),
        "gelu": (swap("critic", 3, nn.GELU()), False),
        "layernorm": (swap("critic", 1, nn.LayerNorm(64)), False),
        "dropout": (swap("actor", 3, nn.Dropout(0.1)), False),
        "tanh last": (lambda net: net.actor.append(nn.Tanh()), False),
        "float64": (double, False),
        "foreign norm": (no_norm_buffers, True),
    }


@pytest.mark.parametrize("name", list(unsupported_networks()))
def test_networks_it_cannot_run_are_refused(name):
    edit, norm = unsupported_networks()[name]
    net = network(norm=norm)
    assert CompiledPolicy.supports(net)
    edit(net)
    assert not CompiledPolicy.supports(net)
    with pytest.raises(ValueError, match="cannot run"):
        CompiledPolicy(net)
    assert not CompiledPolicy.supports(nn.Linear(3, 2))
