"""Networks for the compiled pass's and update's tests: ``ActorCritic``s whose distributions are
far from uniform (the last layer's default gain of 0.01 gives near-uniform ones), so that
differences from PyTorch's results show."""

import math

import numpy as np
import torch
from gymnasium import spaces

from vecenv.ppo.network import ActorCritic


def far_from_uniform(
    obs_size=4,
    hidden=(16, 16),
    actions=3,
    discrete=True,
    norm=False,
    seed=0,
    log_std_low=-1.0,
    activation="tanh",
):
    """An ActorCritic with weights drawn wide, its log-std (Box) in [log_std_low, 0.5] and,
    where ``norm``, an obs_norm fitted to shifted and scaled observations."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    act = spaces.Discrete(actions) if discrete else spaces.Box(-1.0, 1.0, (actions,))
    obs = spaces.Box(-np.inf, np.inf, (obs_size,))
    net = ActorCritic(obs, act, hidden=hidden, norm_obs=norm, activation=activation)
    with torch.no_grad():
        for stack in (net.actor, net.critic):
            for layer in list(stack)[::2]:
                layer.weight.normal_(0.0, 1.5 / math.sqrt(layer.in_features))
                layer.bias.normal_(0.0, 0.3)
        if not discrete:
            net.log_std.uniform_(log_std_low, 0.5)
    if norm:
        loc, scale = rng.normal(0, 2, obs_size), rng.uniform(0.1, 5, obs_size)
        net.obs_norm.update(rng.normal(loc, scale, (64, obs_size)))
    return net
