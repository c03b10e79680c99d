"""Checks of PPO with the game and the network on the device (``vecenv.ppo.device``), on the
simulator (PyTorch on the CPU reading the simulator's host buffers through DLPack) or a GPU.

Run by ``tests.cuda.simulated`` and by ``test_gpu.py``, as ``sidebyside``'s checks are.
"""

import numpy as np
import torch

import vecenv
from vecenv.ppo import PPOConfig


def _trainer(game, num_envs=4, **fields):
    from vecenv.ppo.device import DeviceTrainer

    config = PPOConfig(num_envs=num_envs, num_steps=6, total_steps=num_envs * 6 * 2,
                       hidden=(8, 8), update_epochs=2, num_minibatches=2, **fields)  # fmt: skip
    engine = vecenv.make(game, num_envs, seed=3, device="cuda")
    return DeviceTrainer(engine, config)


def mlp_policy_matches_torch(game, num_envs=4, steps=5, **fields):
    """The actor compiled into the rollout's kernel is the PyTorch network's: with its last
    layer sharpened until one action takes all the probability, the kernel's actions are the
    network's most likely ones on every observation of the rollout (masks, scaling included)."""
    trainer = _trainer(game, num_envs, **fields)
    policy = trainer.policy
    if policy.obs_norm is not None:  # statistics that change the inputs noticeably
        features = policy.obs_norm.mean.numel()
        policy.obs_norm.mean.copy_(torch.linspace(-0.5, 0.5, features, dtype=torch.float64))
        policy.obs_norm.var.copy_(torch.linspace(0.2, 3.0, features, dtype=torch.float64))
    with torch.no_grad():
        policy.actor[-1].weight.mul_(1e5)
        policy.actor[-1].bias.mul_(1e5)
    engine = trainer.engine
    rollout = engine.rollout(steps, policy=trainer.act, params=trainer.params())
    x, masks = trainer.features(rollout.obs)
    rows = steps * num_envs
    with torch.no_grad():
        mask = None if masks is None else masks[:steps].reshape(rows, -1)
        probs = policy.distribution(x[:steps].reshape(rows, -1), mask).probs
    # Rows whose best two logits nearly tie stay uncertain however sharp the layer: left out.
    sure = (probs.max(-1).values > 0.9999).reshape(steps, num_envs).cpu().numpy()
    assert sure.mean() >= 0.75, f"{game}: the sharpened actor is not sharp ({sure.mean():.2f})"
    best = probs.argmax(-1).reshape(steps, num_envs).cpu().numpy() + int(engine.action.low[0])
    got = torch.from_dlpack(rollout.actions).reshape(steps, num_envs).cpu().numpy()
    np.testing.assert_array_equal(got[sure], best[sure], err_msg=f"{game}: the kernel's actor")


def device_training(game, **fields):
    """A short run trains: every update reports, the counted steps are the rollouts' valid
    steps, the network moves, and the same seed gives the same run (curve and weights)."""
    runs = []
    for _ in range(2):
        trainer = _trainer(game, **fields)
        before = [p.detach().clone() for p in trainer.policy.parameters()]
        run = trainer.run()
        cfg = trainer.config
        assert len(run.curve) == cfg.iterations, run.curve
        assert 0 < run.steps <= cfg.iterations * cfg.batch_size
        after = list(trainer.policy.parameters())
        moved = any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
        assert moved, f"{game}: the update changed nothing"
        runs.append((run, [p.detach().cpu() for p in trainer.policy.parameters()]))
    (first, weights), (second, again) = runs
    assert [row[0] for row in first.curve] == [row[0] for row in second.curve]
    assert first.episodes == second.episodes
    if torch_device_is_cpu():
        for a, b in zip(weights, again, strict=True):
            assert torch.equal(a, b), f"{game}: the same seed trained another network"


def torch_device_is_cpu():
    import numba

    return bool(numba.config.ENABLE_CUDASIM)


def device_trainer_refuses():
    """What the device trainer does not do is a ValueError naming it, before any work."""
    from vecenv.ppo.device import DeviceTrainer

    cases = (
        ("pendulum", {}, "continuous"),
        ("cartpole", {"one_hot_obs": True}, "one_hot_obs"),
        ("cartpole", {"norm_reward": True}, "norm_reward"),
        ("connectx", {}, "self-play"),
    )
    for game, fields, message in cases:
        config = PPOConfig(num_envs=2, **fields)
        engine = vecenv.make(game, 2, device="cuda")
        try:
            DeviceTrainer(engine, config)
        except ValueError as exc:
            assert message in str(exc), (message, str(exc))
        else:
            raise AssertionError(f"{game} {fields}: trained")
    try:
        DeviceTrainer(vecenv.make("cartpole", 2), PPOConfig(num_envs=2))
    except ValueError as exc:
        assert "device='cuda'" in str(exc)
    else:
        raise AssertionError("a CPU engine taken by the device trainer")
