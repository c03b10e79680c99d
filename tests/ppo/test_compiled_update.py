"""vecenv.ppo.compiled_update: one numba call per update gives trainer.update's parameters (the
same minibatch orders, a fresh torch.optim.Adam), carries Adam's state across updates, clips as
clip_grad_norm_ does, writes the network's own tensors, and refuses bad input before its kernel."""

import copy
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from vecenv.ppo.compiled import CompiledPolicy  # noqa: E402
from vecenv.ppo.compiled_update import STATS, CompiledUpdate, permutations  # noqa: E402
from vecenv.ppo.trainer import PPOConfig, update  # noqa: E402

from .networks import far_from_uniform  # noqa: E402

ONE_STEP = {"rtol": 1e-5, "atol": 1e-6}
MANY_STEPS = {"rtol": 1e-4, "atol": 1e-4}
LR = 2.5e-3
# Adam's step lr * g / (|g| + 1e-5) turns a float32 rounding difference in a gradient near
# 1e-5 into up to about lr / 100 of parameter: PyTorch's float32 steps sit as far from float64
# ones. The one-step comparison takes a learning rate that keeps that under its 1e-6 (and
# compares the gradients themselves, scaled to the largest), the multi-step ones a moderate one.
ONE_STEP_LR = 5e-5
MANY_STEPS_LR = 1e-3
GRADIENT = 2e-4  # of the largest gradient: PyTorch's own float32 error reaches 1e-4


network = far_from_uniform


def make_batch(net, rows, seed, masked=False):
    """A batch as a rollout leaves it: log-probabilities and values near the network's own (so
    some ratios fall inside the clip range and some outside), advantages and returns."""
    rng = np.random.default_rng(seed)
    size, width = net.critic[0].in_features, net.actor[-1].out_features
    obs = rng.normal(0, 2, (rows, size)).astype(np.float32)
    masks = None
    if net.discrete:
        actions = rng.integers(0, width, rows)
        if masked:
            masks = rng.random((rows, width)) < 0.5
            masks[np.arange(rows), actions] = True
    else:
        actions = rng.normal(0, 1, (rows, width)).astype(np.float32)
    t_masks = None if masks is None else torch.from_numpy(masks)
    with torch.no_grad():
        logp, _, values = net.evaluate(torch.from_numpy(obs), torch.from_numpy(actions), t_masks)
    logp = (logp.numpy() + rng.normal(0, 0.3, rows)).astype(np.float32)
    values = (values.numpy() + rng.normal(0, 0.3, rows)).astype(np.float32)
    adv = rng.normal(0.3, 1.5, rows).astype(np.float32)
    returns = (values + rng.normal(0, 1, rows)).astype(np.float32)
    return obs, actions, logp, adv, returns, values, masks


def torch_orders(seed, epochs, rows):
    """The orders trainer.update draws from a generator seeded with ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    return np.stack([torch.randperm(rows, generator=generator).numpy() for _ in range(epochs)])


def torch_update(net, cfg, batch, seed, lr=MANY_STEPS_LR, optimizer=None):
    """trainer.update itself, on a fresh Adam unless one is given; returns the optimizer."""
    optimizer = optimizer or torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    optimizer.param_groups[0]["lr"] = lr
    obs, actions, logp, adv, returns, values, masks = batch
    tensors = [torch.from_numpy(a) for a in (obs, actions, logp, adv, returns, values)]
    t_masks = None if masks is None else torch.from_numpy(masks)
    update(net, optimizer, cfg, torch.Generator().manual_seed(seed), *tensors, t_masks)
    return optimizer


def compiled_update(net, cfg, batch, seed, lr=MANY_STEPS_LR, runner=None):
    runner = runner or CompiledUpdate(net, cfg)
    order = torch_orders(seed, cfg.update_epochs, batch[0].shape[0])
    stats = runner.update(*batch, lr=lr, order=order).copy()
    return runner, stats


def assert_same_parameters(net, other, tol):
    for (name, a), (_, b) in zip(net.named_parameters(), other.named_parameters(), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), err_msg=name, **tol)


def config(**kw):
    kw.setdefault("learning_rate", LR)
    return PPOConfig(**kw)


def first_step_losses(net, cfg, batch):
    """(policy loss, value loss, entropy) of one minibatch holding the whole batch, as the
    trainer's loss computes them."""
    obs, actions, logp, adv, returns, values, masks = (
        None if a is None else torch.from_numpy(a) for a in batch
    )
    with torch.no_grad():
        new_logp, entropy, new_value = net.evaluate(obs, actions, masks)
        ratio = (new_logp - logp).exp()
        if cfg.norm_adv and adv.numel() > 1:
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        clipped_ratio = ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
        pg = torch.max(-adv * ratio, -adv * clipped_ratio).mean()
        err = (new_value - returns) ** 2
        if cfg.clip_vloss:
            clipped = values + (new_value - values).clamp(-cfg.clip_coef, cfg.clip_coef)
            err = torch.max(err, (clipped - returns) ** 2)
        return float(pg), float(0.5 * err.mean()), float(entropy.mean())


@settings(max_examples=12, deadline=None)
@given(
    obs_size=st.integers(1, 9),
    hidden=st.lists(st.integers(1, 40), min_size=0, max_size=3).map(tuple),
    discrete=st.booleans(),
    actions=st.integers(1, 5),
    norm=st.booleans(),
    masked=st.booleans(),
    norm_adv=st.booleans(),
    clip_vloss=st.booleans(),
    ent_coef=st.sampled_from([0.0, 0.01, 0.5]),
    rows=st.integers(1, 90),
    seed=st.integers(0, 2**16),
    activation=st.sampled_from(["tanh", "relu"]),
)
def test_one_step_matches_torch(
    obs_size,
    hidden,
    discrete,
    actions,
    norm,
    masked,
    norm_adv,
    clip_vloss,
    ent_coef,
    rows,
    seed,
    activation,
):
    net = network(obs_size, hidden, actions, discrete, norm, seed, activation=activation)
    twin = copy.deepcopy(net)
    cfg = config(
        update_epochs=1,
        num_minibatches=1,
        norm_adv=norm_adv,
        clip_vloss=clip_vloss,
        ent_coef=ent_coef,
    )
    batch = make_batch(net, rows, seed, masked and discrete)
    losses = first_step_losses(net, cfg, batch)
    torch_update(net, cfg, batch, seed, lr=ONE_STEP_LR)
    runner, stats = compiled_update(twin, cfg, batch, seed, lr=ONE_STEP_LR)
    assert stats.shape == (1, len(STATS)) and runner.steps == 1
    # A Gaussian's float32 log-density of a far-off action (tens of nats) is good to a few
    # 1e-6 in PyTorch's float32: the policy loss's terms carry that, times the advantages.
    np.testing.assert_allclose(stats[0, 0], losses[0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(stats[0, 1:3], losses[1:], rtol=1e-5, atol=1e-6)
    # The clipped gradients, as the step left them in p.grad.
    pairs = zip(net.parameters(), twin.parameters(), strict=True)
    theirs = {id(q): p.grad.numpy() for p, q in pairs}
    largest = max(np.abs(g).max() for g in theirs.values())
    for p, mine in zip(runner.parameters, runner.gradients, strict=True):
        np.testing.assert_allclose(mine, theirs[id(p)], rtol=1e-4, atol=GRADIENT * largest)
    assert_same_parameters(net, twin, ONE_STEP)


@settings(max_examples=15, deadline=None)
@given(
    hidden=st.lists(st.integers(1, 24), min_size=1, max_size=2).map(tuple),
    discrete=st.booleans(),
    norm=st.booleans(),
    masked=st.booleans(),
    epochs=st.integers(2, 4),
    minibatches=st.integers(1, 4),
    rows=st.integers(2, 150),
    seed=st.integers(0, 2**16),
    activation=st.sampled_from(["tanh", "relu"]),
)
def test_epochs_of_minibatches_stay_close_to_torch(
    hidden, discrete, norm, masked, epochs, minibatches, rows, seed, activation
):
    net = network(5, hidden, 3, discrete, norm, seed, activation=activation)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=epochs, num_minibatches=minibatches, ent_coef=0.01)
    batch = make_batch(net, rows, seed, masked and discrete)
    torch_update(net, cfg, batch, seed)
    runner, stats = compiled_update(twin, cfg, batch, seed)
    minibatch = max(1, rows // minibatches)
    assert runner.steps == stats.shape[0] == epochs * math.ceil(rows / minibatch)
    assert_same_parameters(net, twin, MANY_STEPS)


def test_the_cartpole_configuration_matches_torch():
    """The tuned CartPole shape: (64, 64) tanh MLPs, Discrete(2), 1024 rows in 2 minibatches."""
    net = network(4, (64, 64), 2, seed=3)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=4, num_minibatches=2)
    batch = make_batch(net, 1024, seed=3)
    torch_update(net, cfg, batch, seed=3)
    compiled_update(twin, cfg, batch, seed=3)
    assert_same_parameters(net, twin, MANY_STEPS)


@pytest.mark.parametrize("discrete", [True, False])
def test_an_annealed_entropy_bonus_is_this_updates_own(discrete):
    """``ent_coef=`` (the trainer's annealed bonus) replaces the config's for one update, as
    trainer.update's ``ent_coef`` does; the next update without it is back to the config's."""
    net = network(discrete=discrete, seed=9)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=2, num_minibatches=2, ent_coef=0.5)
    batch = make_batch(net, 64, seed=9)
    optimizer = torch.optim.Adam(net.parameters(), lr=MANY_STEPS_LR, eps=1e-5)
    tensors = [torch.from_numpy(a) for a in batch[:6]]
    update(net, optimizer, cfg, torch.Generator().manual_seed(9), *tensors, None, 0.1)
    runner = CompiledUpdate(twin, cfg)
    order = torch_orders(9, cfg.update_epochs, 64)
    runner.update(*batch, lr=MANY_STEPS_LR, order=order, ent_coef=0.1)
    assert_same_parameters(net, twin, MANY_STEPS)
    other = copy.deepcopy(twin)
    CompiledUpdate(other, cfg).update(*batch, lr=MANY_STEPS_LR, order=order, ent_coef=0.5)
    runner2 = CompiledUpdate(twin, cfg)
    runner2.update(*batch, lr=MANY_STEPS_LR, order=order)
    assert_same_parameters(other, twin, ONE_STEP)


@pytest.mark.parametrize("discrete", [True, False])
def test_adam_state_carries_across_updates(discrete):
    net = network(discrete=discrete, norm=True, seed=5)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=2, num_minibatches=2, ent_coef=0.01)
    optimizer, runner = None, None
    for i, lr in enumerate((MANY_STEPS_LR, 0.6 * MANY_STEPS_LR)):
        batch = make_batch(net, 64 + 16 * i, seed=10 + i)
        optimizer = torch_update(net, cfg, batch, seed=i, lr=lr, optimizer=optimizer)
        runner, _ = compiled_update(twin, cfg, batch, seed=i, lr=lr, runner=runner)
        assert_same_parameters(net, twin, MANY_STEPS)
    assert runner.steps == 8 and runner.updates == 2
    # The moments are PyTorch's too.
    theirs = torch.optim.Adam(twin.parameters(), lr=LR, eps=1e-5)
    runner.store_optimizer(theirs)
    for p, q in zip(net.parameters(), twin.parameters(), strict=True):
        mine, torch_state = theirs.state[q], optimizer.state[p]
        assert float(mine["step"]) == float(torch_state["step"]) == 8
        np.testing.assert_allclose(mine["exp_avg"], torch_state["exp_avg"], rtol=1e-3, atol=1e-6)
        np.testing.assert_allclose(
            mine["exp_avg_sq"], torch_state["exp_avg_sq"], rtol=1e-3, atol=1e-9
        )


def test_torch_and_compiled_updates_hand_over_through_the_optimizer():
    net = network(seed=6)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=2, num_minibatches=2)
    first, second, third = (make_batch(net, 80, seed=20 + i) for i in range(3))
    # PyTorch, then compiled from PyTorch's Adam state, then PyTorch from the compiled state.
    optimizer = torch_update(net, cfg, first, seed=1)
    twin_optimizer = torch_update(twin, cfg, first, seed=1)
    runner = CompiledUpdate(twin, cfg)
    runner.load_optimizer(twin_optimizer)
    assert runner.steps == 4
    optimizer = torch_update(net, cfg, second, seed=2, optimizer=optimizer)
    compiled_update(twin, cfg, second, seed=2, runner=runner)
    assert_same_parameters(net, twin, MANY_STEPS)
    runner.store_optimizer(twin_optimizer)
    torch_update(net, cfg, third, seed=3, optimizer=optimizer)
    torch_update(twin, cfg, third, seed=3, optimizer=twin_optimizer)
    assert_same_parameters(net, twin, MANY_STEPS)


def test_gradient_clipping_engages_as_clip_grad_norm_does(monkeypatch):
    net = network(seed=7)
    twin, unclipped = copy.deepcopy(net), copy.deepcopy(net)
    cfg = config(update_epochs=3, num_minibatches=1, max_grad_norm=0.05)
    batch = make_batch(net, 100, seed=7)
    norms = []
    clip = torch.nn.utils.clip_grad_norm_

    def recording(parameters, max_norm):
        norms.append(float(clip(parameters, max_norm)))

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", recording)
    torch_update(net, cfg, batch, seed=0)
    monkeypatch.undo()
    _, stats = compiled_update(twin, cfg, batch, seed=0)
    grad_norm = stats[:, STATS.index("grad_norm")]
    np.testing.assert_allclose(grad_norm, norms, rtol=1e-4)
    assert (grad_norm > 2 * cfg.max_grad_norm).all()  # every step was clipped
    assert_same_parameters(net, twin, MANY_STEPS)
    # Without the clip the same steps go elsewhere (Adam's first step is scale-free, its later
    # ones are not).
    loose = config(update_epochs=3, num_minibatches=1, max_grad_norm=1e6)
    compiled_update(unclipped, loose, batch, seed=0)
    pairs = zip(twin.parameters(), unclipped.parameters(), strict=True)
    assert max(float((a - b).detach().abs().max()) for a, b in pairs) > 1e-4


def test_a_norm_below_the_limit_is_left_alone():
    net = network(seed=8)
    a, b = copy.deepcopy(net), copy.deepcopy(net)
    batch = make_batch(net, 60, seed=8)
    _, stats = compiled_update(a, config(update_epochs=2, max_grad_norm=1e3), batch, seed=0)
    assert (stats[:, STATS.index("grad_norm")] < 1e3).all()
    compiled_update(b, config(update_epochs=2, max_grad_norm=1e6), batch, seed=0)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_the_rollouts_own_batch_starts_at_ratio_one():
    """Log-probabilities from CompiledPolicy are reproduced bit for bit by the update's forward
    pass: the first step sees ratios of exactly 1 (no KL, nothing clipped)."""
    for discrete in (True, False):
        net = network(discrete=discrete, norm=True, seed=9)
        policy = CompiledPolicy(net)
        obs = np.random.default_rng(9).normal(0, 2, (256, 4)).astype(np.float32)
        actions, logp, values = (a.copy() for a in policy.sample(obs, seed=1, counter=0))
        rng = np.random.default_rng(1)
        adv = rng.normal(0, 1, 256).astype(np.float32)
        returns = (values + rng.normal(0, 1, 256)).astype(np.float32)
        runner = CompiledUpdate(net, config(update_epochs=1, num_minibatches=2))
        stats = runner.update(obs, actions, logp, adv, returns, values, lr=LR)
        assert stats[0, STATS.index("approx_kl")] == 0.0
        assert stats[0, STATS.index("clip_fraction")] == 0.0
        assert stats[1, STATS.index("approx_kl")] != 0.0  # the first step moved the policy


def test_the_networks_own_tensors_are_written():
    net = network(norm=True, seed=10)
    policy = CompiledPolicy(net)
    tensors = {name: p for name, p in net.named_parameters()}
    before = {name: p.detach().clone() for name, p in tensors.items()}
    batch = make_batch(net, 50, seed=10)
    values_before = policy.value(batch[0]).copy()
    compiled_update(net, config(update_epochs=1), batch, seed=0)
    for name, p in net.named_parameters():
        assert p is tensors[name]
        assert not torch.equal(p, before[name]), name
    with torch.no_grad():
        want = net.value(torch.from_numpy(batch[0])).numpy()
    after = policy.value(batch[0])
    np.testing.assert_allclose(after, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(after, values_before, rtol=1e-4)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_updates_repeat_bit_for_bit_on_any_thread_count(activation):
    """The actor and the critic run side by side on two threads, or one after the other on
    one: the same bits either way, and on every run."""
    net = network(discrete=False, seed=11, activation=activation)
    nets = [copy.deepcopy(net) for _ in range(3)]
    batch = make_batch(net, 200, seed=11)
    results = []
    for n, threads in zip(nets, (1, 2, 2), strict=True):
        cfg = config(update_epochs=3, num_minibatches=3, ent_coef=0.01, torch_threads=threads)
        runner = CompiledUpdate(n, cfg)
        assert runner.threads == min(threads, numba.config.NUMBA_NUM_THREADS)
        before = numba.get_num_threads()
        results.append(runner.update(*batch, lr=LR).copy())
        assert numba.get_num_threads() == before  # the caller's count is put back
    for other, n in zip(results[1:], nets[1:], strict=True):
        assert np.array_equal(results[0], other)
        for p, q in zip(nets[0].parameters(), n.parameters(), strict=True):
            assert torch.equal(p, q)


def test_drawn_orders_are_permutations_of_seed_update_and_epoch():
    order = permutations(5, 3, 4, 50)
    assert order.dtype == np.int64 and order.shape == (4, 50)
    for row in order:
        assert np.array_equal(np.sort(row), np.arange(50))
    assert len({tuple(row) for row in order}) == 4
    assert np.array_equal(permutations(5, 3, 2, 50), order[:2])  # epochs do not interfere
    assert np.array_equal(permutations(5, 3, 4, 50), order)
    assert not np.array_equal(permutations(5, 4, 1, 50)[0], order[0])
    assert not np.array_equal(permutations(6, 3, 1, 50)[0], order[0])
    assert permutations(0, 0, 2, 0).shape == (2, 0)


def test_drawn_orders_are_uniform():
    # Where each of 5 rows lands over 4000 orders: every position about 1/5 of the time.
    counts = np.zeros((5, 5))
    for u in range(1000):
        for row in permutations(1, u, 4, 5):
            counts[np.arange(5), row] += 1
    expected = 4000 / 5
    sigma = math.sqrt(4000 * 0.2 * 0.8)
    assert (np.abs(counts - expected) < 5 * sigma).all()


def test_update_draws_its_orders_from_the_config_seed_and_its_count():
    net = network(seed=12)
    a, b = copy.deepcopy(net), copy.deepcopy(net)
    cfg = config(update_epochs=2, num_minibatches=2, seed=42)
    batch = make_batch(net, 40, seed=12)
    drawn = CompiledUpdate(a, cfg)
    given_orders = CompiledUpdate(b, cfg)
    for u in range(2):
        drawn.update(*batch, lr=LR)
        given_orders.update(*batch, lr=LR, order=permutations(42, u, 2, 40))
    assert drawn.updates == 2
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q)


def test_an_empty_batch_changes_nothing():
    net = network(discrete=False, seed=13)
    before = copy.deepcopy(net)
    runner = CompiledUpdate(net, config())
    empty = make_batch(net, 0, seed=13)
    stats = runner.update(*empty, lr=LR)
    assert stats.shape == (0, len(STATS)) and runner.steps == 0
    assert_same_parameters(net, before, {"rtol": 0, "atol": 0})


def test_a_batch_larger_than_any_before_grows_the_scratch():
    net = network(seed=14)
    twin = copy.deepcopy(net)
    cfg = config(update_epochs=1, num_minibatches=2)
    runner = None
    optimizer = None
    for i, rows in enumerate((30, 500, 7)):
        batch = make_batch(net, rows, seed=40 + i)
        optimizer = torch_update(net, cfg, batch, seed=i, optimizer=optimizer)
        runner, _ = compiled_update(twin, cfg, batch, seed=i, runner=runner)
        assert_same_parameters(net, twin, MANY_STEPS)


def test_nan_parameters_stop_the_update():
    net = network(seed=15)
    runner = CompiledUpdate(net, config(update_epochs=2))
    with torch.no_grad():
        net.actor[0].weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="not finite"):
        runner.update(*make_batch(network(seed=15), 20, seed=15), lr=LR)
    assert runner.steps == 0
    assert torch.isfinite(net.critic[0].weight).all()  # no step was taken


def test_a_replaced_parameter_is_refused():
    net = network(seed=16)
    runner = CompiledUpdate(net, config())
    net.actor[0].weight = nn.Parameter(net.actor[0].weight.detach().clone())
    with pytest.raises(ValueError, match="replaced"):
        runner.update(*make_batch(net, 20, seed=16), lr=LR)


def unsupported_networks():
    def swap(stack, i, layer):
        def edit(net):
            getattr(net, stack)[i] = layer

        return edit

    def extra(net):
        net.temperature = nn.Parameter(torch.ones(1))

    def shared(net):
        net.critic[0].weight = net.actor[0].weight

    def frozen(net):
        net.critic[0].bias.requires_grad_(False)

    def no_bias(net):
        net.actor[2] = nn.Linear(16, 16, bias=False)

    return {
        "mixed activations": swap("actor", 1, nn.ReLU()),
        "gelu": swap("critic", 1, nn.GELU()),
        "float64": lambda net: net.double(),
        "extra parameter": extra,
        "shared parameter": shared,
        "frozen parameter": frozen,
        "no bias": no_bias,
    }


@pytest.mark.parametrize("name", list(unsupported_networks()))
def test_networks_it_cannot_update_are_refused(name):
    net = network()
    assert CompiledUpdate.supports(net)
    unsupported_networks()[name](net)
    assert not CompiledUpdate.supports(net)
    with pytest.raises(ValueError, match="cannot update"):
        CompiledUpdate(net, config())


def hostile_inputs():
    """(argument, replacement, message) for the Discrete, masked network below."""
    obs, actions, logp, adv, returns, values, masks = make_batch(network(), 12, 0, masked=True)
    nan = logp.copy()
    nan[3] = np.nan
    illegal = masks.copy()
    illegal[0, actions[0]] = False
    order = torch_orders(0, 2, 12)
    repeated = order.copy()
    repeated[1, 0] = repeated[1, 1]
    return {
        "obs list": ("obs", obs.tolist(), "numpy array"),
        "obs float64": ("obs", obs.astype(np.float64), "float32"),
        "obs width": ("obs", obs[:, :3].copy(), r"shape \(rows, 4\)"),
        "obs 1-d": ("obs", obs[0], "2-dimensional"),
        "obs inf": ("obs", np.where(obs > 1, np.inf, obs).astype(np.float32), "NaN or inf"),
        "actions float": ("actions", actions.astype(np.float32), "integers"),
        "actions range": ("actions", actions + 3, r"in \[0, 3\)"),
        "actions negative": ("actions", actions - 5, r"in \[0, 3\)"),
        "actions rows": ("actions", actions[:5], r"shape \(12,\)"),
        "logp nan": ("logp", nan, "NaN"),
        "logp float64": ("logp", logp.astype(np.float64), "float32"),
        "adv rows": ("advantages", adv[:-1], r"shape \(12,\)"),
        "returns 2-d": ("returns", returns[:, None], "1-dimensional"),
        "values tuple": ("values", tuple(values), "numpy array"),
        "masks int": ("masks", masks.astype(np.int8), "bool"),
        "masks shape": ("masks", masks[:, :2], r"shape \(12, 3\)"),
        "masks illegal": ("masks", illegal, "legal"),
        "order float": ("order", order.astype(np.float64), "int64"),
        "order int32": ("order", order.astype(np.int32), "int64"),
        "order epochs": ("order", order[:1], r"shape \(2, 12\)"),
        "order repeated": ("order", repeated, "permutation"),
        "order range": ("order", order + 1, "permutation"),
        "lr zero": ("lr", 0.0, "lr"),
        "lr nan": ("lr", float("nan"), "lr"),
        "lr string": ("lr", "0.1", "lr"),
        "ent_coef negative": ("ent_coef", -0.1, "ent_coef"),
        "ent_coef nan": ("ent_coef", float("nan"), "ent_coef"),
        "ent_coef bool": ("ent_coef", True, "ent_coef"),
    }


@pytest.mark.parametrize("name", list(hostile_inputs()))
def test_hostile_input_is_refused_before_the_kernel(name):
    arg, bad, message = hostile_inputs()[name]
    net = network()
    before = copy.deepcopy(net)
    runner = CompiledUpdate(net, config(update_epochs=2))
    obs, actions, logp, adv, returns, values, masks = make_batch(network(), 12, 0, masked=True)
    kwargs = dict(
        obs=obs,
        actions=actions,
        logp=logp,
        advantages=adv,
        returns=returns,
        values=values,
        masks=masks,
        lr=LR,
        order=torch_orders(0, 2, 12),
    )
    kwargs[arg] = bad
    with pytest.raises(ValueError, match=message):
        runner.update(**kwargs)
    assert runner.steps == 0 and runner.updates == 0
    assert_same_parameters(net, before, {"rtol": 0, "atol": 0})


def test_gaussian_actions_take_no_mask_and_need_their_width():
    net = network(discrete=False)
    runner = CompiledUpdate(net, config())
    obs, actions, logp, adv, returns, values, _ = make_batch(net, 10, 0)
    with pytest.raises(ValueError, match="Discrete"):
        runner.update(obs, actions, logp, adv, returns, values, np.ones((10, 3), bool), lr=LR)
    with pytest.raises(ValueError, match=r"shape \(10, 3\)"):
        runner.update(obs, actions[:, :2].copy(), logp, adv, returns, values, lr=LR)
    with pytest.raises(ValueError, match="float32"):
        runner.update(obs, actions.astype(np.int64), logp, adv, returns, values, lr=LR)


@pytest.mark.parametrize(
    "field, value",
    [
        ("update_epochs", 0),
        ("num_minibatches", 1.5),
        ("norm_adv", 1),
        ("clip_coef", 0.0),
        ("max_grad_norm", float("inf")),
        ("ent_coef", -0.1),
        ("vf_coef", "0.5"),
    ],
)
def test_bad_settings_are_refused(field, value):
    cfg = config()
    object.__setattr__(cfg, field, value)  # past PPOConfig's own checks
    with pytest.raises(ValueError, match=field):
        CompiledUpdate(network(), cfg)


@pytest.mark.parametrize(
    "args, message",
    [((-1, 0, 1, 5), "seed"), ((0, 2**64, 1, 5), "update"), ((0, 0, -1, 5), "epochs")],
)
def test_bad_permutation_arguments_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        permutations(*args)
