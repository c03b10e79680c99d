"""PPO with the game and the network both on the GPU: ``vecenv train ppo --device cuda``.

The CPU ``Trainer`` steps a VectorEnv from Python and copies every step's observations and actions
between numpy and the network. Here nothing leaves the device in the loop:

- the rollout is one kernel launch (``CudaEngine.rollout(T, policy)``): every episode plays T
  steps with the network's actor compiled into the kernel as a device policy
  (``vecenv.cuda.policies.mlp_policy``), its weights handed over as one flat float32 tensor
  gathered on the GPU from the PyTorch network each update;
- PyTorch reads the rollout's observations, actions, rewards and end flags in place through
  DLPack, evaluates the log-probabilities and values of the whole rollout in one batched pass
  (the old policy's, as the kernel sampled from it), computes the advantages and runs PPO's
  epochs, all on the GPU.

Per update only a few numbers come to the host: the count of valid steps and the returns of the
episodes that ended (for the running mean the run reports). The algorithm is ``Trainer``'s
(next-step autoreset handled the same way: the step after an end only resets, and is left out).

Where ``device="cuda"`` runs on numba's CUDA simulator (tests, no GPU), the buffers live in host
memory and DLPack hands them to PyTorch on the CPU: the same code path, on the CPU.

Supported: one-agent games with a discrete action (its legal-move field, where it has one, masks
the actor as on the CPU) and Box observations (Dict fields of them), ``norm_obs``. Not here
(ValueError): continuous actions, ``one_hot_obs``, ``explore_bonus``, ``segment``, ``norm_reward``.
"""

import time
from collections import deque

import numpy as np
import torch

from .network import LEGAL, ActorCritic, legal_field
from .trainer import Run, advantages, check_keep, kept_network, record, snapshot, update

UNSUPPORTED = {
    "one_hot_obs": "one-hot observations",
    "explore_bonus": "the exploration bonus",
    "segment": "segments",
    "norm_reward": "reward scaling",
}


def torch_device(engine):
    """Where PyTorch reads the engine's buffers: the GPU's, or the host under the simulator."""
    kind, index = engine.rewards.__dlpack_device__()
    return torch.device("cuda", index) if kind == 2 else torch.device("cpu")


def _fields(engine, space):
    """(index into the engine's observation tuple, shape, shared) of each field, in the order
    the network reads them (its observation space's)."""
    by_name = {f.name: (k, f) for k, f in enumerate(engine.observation)}
    names = list(space.spaces) if hasattr(space, "spaces") else [engine.observation[0].name]
    return [(by_name[n][0], tuple(by_name[n][1].shape), by_name[n][1].shared) for n in names]


class DeviceTrainer:
    """PPO on a one-agent ``CudaEngine`` (see the module); ``run`` trains, ``policy`` is the
    network (on the engine's device)."""

    def __init__(self, engine, config, policy=None):
        from vecenv.cuda.policies import mlp_layout, mlp_policy
        from vecenv.gym import spaces

        self.best_weights = None  # the policy's at the run's best running mean (Run.best)
        if getattr(engine, "device", "cpu") != "cuda":
            raise ValueError("the device trainer needs a GPU engine (device='cuda')")
        if engine.num_agents != 1:
            raise ValueError(f"{engine.name} is played by several agents: train it by self-play")
        if engine.autoreset != "next_step":
            raise ValueError("the trainer needs next-step autoreset")
        if engine.num_envs != config.num_envs:
            raise ValueError(
                f"the engine has {engine.num_envs} episodes, the config {config.num_envs}"
            )
        for name, what in UNSUPPORTED.items():
            if getattr(config, name):
                raise ValueError(f"--device cuda trains without {what} ({name}): train on the CPU")
        self.engine, self.config = engine, config
        self.device = torch_device(engine)
        torch.manual_seed(config.seed)
        obs_space, act_space = spaces.observation_space(engine), spaces.action_space(engine)
        if not engine.action.discrete:
            raise ValueError(
                f"{engine.name}'s actions are continuous: --device cuda trains discrete actions "
                "(train it on the CPU)"
            )
        if not hasattr(act_space, "n"):
            raise ValueError(
                f"{engine.name}'s actions have several components: --device cuda trains one "
                "discrete choice a step (train it on the CPU)"
            )
        self.policy = policy or ActorCritic(
            obs_space,
            act_space,
            config.hidden,
            norm_obs=config.norm_obs,
            activation=config.activation,
        )
        self.policy.to(self.device)
        self.obs_space = obs_space
        self.fields = _fields(engine, obs_space)
        self._widths = {k: int(np.prod(shape, dtype=np.int64)) for k, shape, _ in self.fields}
        self.masked = legal_field(obs_space, act_space)
        legal = None
        if self.masked:
            index = next(k for k, f in enumerate(engine.observation) if f.name == LEGAL)
            legal = (index, engine.observation[index].shared)
        sizes = (self.policy.actor[0].in_features, *config.hidden, int(act_space.n))
        self.layout, self.size = mlp_layout(self.fields, sizes, config.norm_obs)
        self.act = mlp_policy(
            tuple(self.fields), sizes, bool(config.norm_obs), legal, self.policy.activation
        )
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.learning_rate, eps=1e-5
        )
        self.generator = torch.Generator(device=self.device).manual_seed(config.seed)

    # -- the network's view ------------------------------------------------------------------

    def params(self):
        """The actor's weights (and the running statistics) as the device policy reads them:
        one float32 tensor on the device, gathered there (no host copy)."""
        parts = []
        norm = self.policy.obs_norm
        if norm is not None:
            parts += [norm.mean.float(), torch.rsqrt(norm.var + norm.eps).float()]
        for layer in self.policy.actor:
            if isinstance(layer, torch.nn.Linear):
                parts += [layer.weight.reshape(-1), layer.bias]
        return torch.cat([p.detach().float().reshape(-1) for p in parts]).contiguous()

    def features(self, obs):
        """Observations (``{field: (rows..., N, ...)}``: a rollout's, or the engine's own) as
        the network's (rows, N, features) float32 input, read in place through DLPack; and the
        legal masks (rows, N, actions) where the game has them."""
        n = self.engine.num_envs
        parts, mask = [], None
        for index, _, _ in self.fields:
            name = self.engine.observation[index].name
            x = torch.from_dlpack(obs[name]).reshape(-1, n, self._widths[index])
            parts.append(x.float())
            if self.masked and name == LEGAL:
                mask = x.bool()
        return torch.cat(parts, dim=-1), mask

    # -- training ----------------------------------------------------------------------------

    def run(self, threshold=None, on_rollout=None, target=None):
        """Train for ``config.total_steps`` env steps, or until the mean return of the last
        ``config.window`` episodes reaches ``threshold`` (``target`` is watched without
        stopping, as ``Trainer.run``); Ctrl-C ends it early with ``run.interrupted``."""
        run = Run(config=self.config, target=threshold if threshold is not None else target)
        start = time.perf_counter()
        try:
            self._train(run, threshold, on_rollout, start)
        except KeyboardInterrupt:
            run.interrupted = True
        run.seconds = time.perf_counter() - start
        return run

    def _train(self, run, threshold, on_rollout, start):
        cfg, engine, policy, dev = self.config, self.engine, self.policy, self.device
        n, steps = cfg.num_envs, cfg.num_steps
        engine.reset(seed=int(cfg.seed))
        ended = torch.zeros(n, dtype=torch.bool, device=dev)  # the next step only resets these
        ep_return = torch.zeros(n, dtype=torch.float64, device=dev)
        ep_length = torch.zeros(n, dtype=torch.int64, device=dev)
        recent = deque(maxlen=cfg.window)
        first = True
        for iteration in range(1, cfg.iterations + 1):
            frac = 1.0 - (iteration - 1) / cfg.iterations
            if cfg.anneal_lr:
                self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
            ent_coef = frac * cfg.ent_coef if cfg.anneal_ent else cfg.ent_coef
            t0 = time.perf_counter()
            if first and policy.obs_norm is not None:
                self._fold(self.features(engine.obs)[0][0])
            first = False
            rollout = engine.rollout(steps, policy=self.act, params=self.params())
            run.env_seconds += time.perf_counter() - t0
            x, masks = self.features(rollout.obs)
            actions = torch.from_dlpack(rollout.actions).reshape(steps, n).long()
            actions = actions - int(engine.action.low[0])
            rewards = torch.from_dlpack(rollout.rewards).reshape(steps, n)
            terminated = torch.from_dlpack(rollout.terminated).reshape(steps, n)
            truncated = torch.from_dlpack(rollout.truncated).reshape(steps, n)
            valid = torch.empty((steps, n), dtype=torch.bool, device=dev)
            valid[0] = ~ended
            done = (terminated | truncated).clone()
            valid[1:] = ~done[:-1]
            done &= valid
            ended = done[-1].clone()
            rewards = torch.where(valid, rewards, torch.zeros_like(rewards))
            self._tally(run, recent, rewards, valid, done, ep_return, ep_length)
            with torch.no_grad():
                flat = x.reshape((steps + 1) * n, -1)
                values = policy.value(flat).reshape(steps + 1, n)
                mask_t = None if masks is None else masks[:steps].reshape(steps * n, -1)
                dist = policy.distribution(flat[: steps * n], mask_t)
                logp = dist.log_prob(actions.reshape(-1)).reshape(steps, n)
            f32 = torch.float32
            adv, ret = advantages(
                rewards.to(f32), values[:steps], values[steps], (terminated & valid).to(f32),
                (truncated & valid).to(f32), valid.to(f32), cfg.gamma, cfg.gae_lambda,
            )  # fmt: skip
            keep = valid.reshape(-1)
            update(
                policy, self.optimizer, cfg, self.generator,
                flat[: steps * n][keep], actions.reshape(-1)[keep], logp.reshape(-1)[keep],
                adv.reshape(-1)[keep], ret.reshape(-1)[keep], values[:steps].reshape(-1)[keep],
                None if mask_t is None else mask_t[keep], ent_coef,
            )  # fmt: skip
            if policy.obs_norm is not None:
                self._fold(flat[: steps * n][keep])  # after the update, as the CPU trainer
            mean = float(np.mean(recent)) if recent else float("nan")
            full = len(recent) == recent.maxlen
            if record(run, mean, full, time.perf_counter() - start):
                self.best_weights = snapshot(policy)
            if on_rollout is not None:
                on_rollout(run, iteration)
            if threshold is not None and run.reached is not None:
                break

    def _tally(self, run, recent, rewards, valid, done, ep_return, ep_length):
        """Fold a rollout's rewards into the episodes' running returns; the ended episodes'
        returns and lengths (a few numbers) come to the host."""
        returns, lengths = [], []
        for t in range(rewards.shape[0]):
            ep_return += rewards[t]
            ep_length += valid[t]
            returns.append(torch.where(done[t], ep_return, torch.nan))
            lengths.append(torch.where(done[t], ep_length, -1))
            ep_return.masked_fill_(done[t], 0.0)
            ep_length.masked_fill_(done[t], 0)
        counted = int(valid.sum())
        returns, lengths = torch.stack(returns), torch.stack(lengths)
        where = done.nonzero()
        finished = returns[done].cpu().numpy()
        finished_lengths = lengths[done].cpu().numpy()
        steps_before = run.steps
        per_step = valid.sum(dim=1).cumsum(0).cpu().numpy()
        for (t, _), value, length in zip(where.cpu().numpy(), finished, finished_lengths,
                                          strict=True):  # fmt: skip
            run.episodes.append((steps_before + int(per_step[t]), float(value), int(length)))
            recent.append(float(value))
        run.steps += counted

    def _fold(self, x):
        """Fold rows of features into the running statistics (float64, on the device)."""
        norm = self.policy.obs_norm
        x = x.double()
        count = x.shape[0]
        if count == 0:
            return
        mean, var = x.mean(dim=0), x.var(dim=0, unbiased=False)
        total = norm.count + count
        delta = mean - norm.mean
        m2 = norm.var * norm.count + var * count + delta**2 * norm.count * count / total
        norm.mean += delta * count / total
        norm.var.copy_(m2 / total)
        norm.count.copy_(total)


def train(
    game, config, run_dir=None, threshold=None, on_rollout=None, target=None, name=None,
    keep="best",
):  # fmt: skip
    """Train on ``game`` with both on the GPU (``DeviceTrainer``); with ``run_dir``, write the
    run as ``vecenv.ppo.train`` does (``policy.pt``, the ``keep`` one, ``curve.csv``,
    ``run.json``, the plot). Returns (Run, trainer)."""
    import json
    import os

    import vecenv

    from . import summary
    from .checkpoint import save
    from .curves import try_plot, write_csv

    check_keep(keep)
    engine = vecenv.make(
        game, config.num_envs, seed=int(config.seed), device="cuda", **config.env_config
    )
    trainer = DeviceTrainer(engine, config)
    name = name or engine.spec.gym.get("id") or engine.name
    if run_dir is not None:
        os.makedirs(run_dir, exist_ok=True)
    run = trainer.run(threshold=threshold, on_rollout=on_rollout, target=target)
    if run_dir is not None:
        network = kept_network(trainer, run, keep)
        save(os.path.join(run_dir, "policy.pt"), network, name, config.to_dict())
        write_csv(run, os.path.join(run_dir, "curve.csv"))
        with open(os.path.join(run_dir, "run.json"), "w") as f:
            json.dump(dict(summary(run, name), device="cuda"), f, indent=2)
        run.plotted = try_plot(
            {name: run}, os.path.join(run_dir, "curve.png"), title=f"PPO on {name} (GPU)",
            threshold=threshold,
        )  # fmt: skip
    return run, trainer
