"""PPO on any Gymnasium ``VectorEnv`` with next-step autoreset (vecenv's, or gymnasium's own).

The algorithm is the clipped-objective PPO of the usual single-file implementations (generalised
advantage estimation, advantage normalisation, clipped value loss, entropy bonus, gradient
clipping, a linearly annealed learning rate). Two details make it exact on next-step autoreset,
which gymnasium's vector envs use: the step after an episode ends only resets it (its action is
ignored), so that step is left out of the update; and a truncated episode bootstraps from the
value of its final observation, which is the observation that step returned.

Every random draw (network initialisation, actions, minibatches) comes from generators seeded by
``config.seed``, and the env is reset with the same seed, so a run is repeatable on the same
machine and thread count.
"""

import copy
import math
import time
from collections import deque
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from vecenv.checkpoints import check_hidden

from .explore import MAX_BITS, CountBonus
from .network import (
    LEGAL,
    ActorCritic,
    check_activation,
    check_size,
    flatten,
    fold_moments,
    legal_field,
    one_hot_space,
)


def check_env_config(value):
    """``value`` as a dict of the game's fields by name, or ValueError: a configuration's or a
    policy file's ``env_config`` (the game checks the values when it is made)."""
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"env_config must be an object of the game's fields, got {value!r}")
    return dict(value)


@dataclass
class PPOConfig:
    """Hyper-parameters. The defaults are a starting point, not a tuned run: a game's own
    ``ppo.json`` (``vecenv.ppo.zoo``) holds the fields it changes from them, and ``vecenv train
    ppo`` starts from that (CartPole-v1's reaches 475 where the bare defaults can peak and fall
    back)."""

    num_envs: int = 64
    num_steps: int = 32  # steps per environment per rollout
    total_steps: int = 200_000
    learning_rate: float = 2.5e-3
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.0
    anneal_ent: bool = False  # the entropy bonus falls linearly to 0 as the learning rate does
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: tuple = (64, 64)
    activation: str = "tanh"  # the hidden layers': "tanh" or "relu"
    seed: int = 1
    torch_threads: int = 1
    window: int = 100  # episodes (or segments) in the running mean
    # 0: the running mean is of episodes' returns. N > 0: of segments, each N consecutive steps
    # of one env scored by its mean reward per step; for continuing games, which never end an
    # episode. It only measures: the env is neither reset nor truncated at a segment's end.
    segment: int = 0
    norm_obs: bool = False  # scale observations by running statistics (saved with the policy)
    norm_reward: bool = False  # scale rewards by the running std of the discounted return
    log_std_init: float = 0.0  # Box actions: the Gaussian's initial log standard deviation
    # An observation (or Dict field) that is one bounded integer, a state's index as in Taxi,
    # enters the network one-hot rather than as a number (see network.one_hot_space).
    one_hot_obs: bool = False
    # A count-based exploration bonus (ppo.explore): explore_bonus / sqrt(n) added to the rewards
    # learned from, n the times an observation's explore_bits-bit hash has been seen. 0: none.
    explore_bonus: float = 0.0
    explore_bits: int = 16
    compiled: bool = True  # rollout and update in numba (ppo.compiled, ppo.compiled_update)
    # The game's configuration the run trains on (fields of its json, as vecenv.make takes them),
    # where it is not the default game: gymnax's MinAtar, on which gymnax-blines' returns were
    # measured, has no sticky actions, so a run set against those returns plays
    # {"sticky_action_prob": 0}.
    env_config: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in ("num_envs", "num_steps", "total_steps", "num_minibatches", "update_epochs"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 0 <= self.seed < 2**63:
            raise ValueError(f"seed must be in [0, 2**63), got {self.seed}")
        for name in ("torch_threads", "window"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        bits = self.explore_bits
        if not isinstance(bits, (int, np.integer)) or isinstance(bits, bool):
            bits = None
        if bits is None or not 1 <= bits <= MAX_BITS:
            raise ValueError(
                f"explore_bits must be an integer in [1, {MAX_BITS}], got {self.explore_bits!r}"
            )
        segment = self.segment
        if isinstance(segment, bool) or not isinstance(segment, (int, np.integer)) or segment < 0:
            raise ValueError(f"segment must be a non-negative integer, got {segment!r}")
        # (low, high, low included): a discount of 0 would learn nothing, of over 1 diverge.
        ranges = {
            "gamma": (0, 1, False),
            "gae_lambda": (0, 1, True),
            "learning_rate": (0, math.inf, False),
            "clip_coef": (0, math.inf, False),
            "ent_coef": (0, math.inf, True),
            "explore_bonus": (0, math.inf, True),
            "vf_coef": (0, math.inf, True),
            "max_grad_norm": (0, math.inf, False),
        }
        for name, (low, high, closed) in ranges.items():
            value = getattr(self, name)
            inside = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
            inside = inside and (low <= value if closed else low < value) and value <= high
            if not inside or math.isinf(value):
                left, right = "[" if closed else "(", ")" if math.isinf(high) else "]"
                raise ValueError(f"{name} must be in {left}{low}, {high}{right}, got {value!r}")
        flags = ("norm_obs", "norm_reward", "one_hot_obs", "anneal_lr", "anneal_ent", "norm_adv")
        for name in (*flags, "clip_vloss", "compiled"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")
        log_std = self.log_std_init
        if isinstance(log_std, bool) or not isinstance(log_std, (int, float, np.number)):
            raise ValueError(f"log_std_init must be a number, got {log_std!r}")
        if not -20 <= log_std <= 5:
            raise ValueError(f"log_std_init must be in [-20, 5], got {log_std!r}")
        self.hidden = check_hidden(self.hidden)  # ([] for none)
        check_activation(self.activation)
        self.env_config = check_env_config(self.env_config)

    @property
    def batch_size(self):
        return self.num_envs * self.num_steps

    @property
    def iterations(self):
        return max(1, self.total_steps // self.batch_size)

    @property
    def metric(self):
        """The running mean's name: ``mean_return`` (of episodes), or ``mean_reward_per_step``
        (of segments, where ``segment``); curve.csv's column and run.json's key."""
        return "mean_reward_per_step" if self.segment else "mean_return"

    @property
    def metric_label(self):
        """The running mean in words, as the command line and the proof's table say it."""
        if self.segment:
            return (
                f"mean reward per step of the last {self.window} segments of {self.segment:,} steps"
            )
        return f"mean return of the last {self.window} episodes"

    def to_dict(self):
        return asdict(self)


@dataclass
class Run:
    """What a training run measured.

    ``curve`` rows are (env steps, seconds since the start, the running mean) after every
    rollout: the mean return of the last ``window`` episodes, or with ``config.segment`` the mean
    reward per step of the last ``window`` segments (``config.metric`` names which).
    ``episodes`` holds the (env steps, return, length) of every episode, ``segments`` the (env
    steps, mean reward per step) of every segment.
    """

    config: PPOConfig
    curve: list = field(default_factory=list)
    episodes: list = field(default_factory=list)
    segments: list = field(default_factory=list)
    env_seconds: float = 0.0  # inside env.reset/env.step
    seconds: float = 0.0  # the whole run
    steps: int = 0
    target: float = None  # the running mean the run watches for (and stops at, where asked)
    reached: tuple = None  # (env steps, seconds) when the running mean first reached the target
    # (running mean, env steps, seconds) of the highest running mean over a full window: a run
    # that collapses after its peak still says what it reached, and when.
    best: tuple = None
    kept: str = "last"  # which weights policy.pt holds: "best" (those of ``best``) or "last"
    interrupted: bool = False  # stopped early by Ctrl-C (KeyboardInterrupt)
    plotted: bool = False  # curve.png written (it needs matplotlib)

    @property
    def steps_per_second(self):
        return self.steps / self.seconds if self.seconds else 0.0

    @property
    def env_fraction(self):
        return self.env_seconds / self.seconds if self.seconds else 0.0

    @property
    def mean(self):
        """The running mean after the last rollout (``config.metric``); NaN before any."""
        return self.curve[-1][2] if self.curve else float("nan")

    @property
    def measured(self):
        """How many episodes (or segments) the running mean covers now."""
        done = self.segments if self.config.segment else self.episodes
        return min(len(done), self.config.window)


def record(run, mean, full, elapsed):
    """A rollout's running mean into ``run``: its curve, when it first reached the target, its
    best over a full window. True where ``mean`` is the best yet (the trainer then keeps the
    weights that made it)."""
    run.curve.append((run.steps, elapsed, mean))
    run.seconds = elapsed
    if not full:
        return False
    if run.target is not None and run.reached is None and mean >= run.target:
        run.reached = (run.steps, elapsed)
    if run.best is not None and not mean > run.best[0]:
        return False
    run.best = (mean, run.steps, elapsed)
    return True


def snapshot(network):
    """A copy of ``network``'s weights (and observation statistics) as they are now."""
    return {k: v.detach().clone() for k, v in network.state_dict().items()}


KEEP = ("best", "last")


def check_keep(keep):
    """ValueError unless ``keep`` names weights ``policy.pt`` can hold (``KEEP``): the training
    functions check it before they train."""
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {KEEP}, got {keep!r}")


def kept_network(trainer, run, keep):
    """The network ``policy.pt`` holds for ``keep``: with "best", the trainer's at the run's best
    running mean (``Run.best``; the last where the window never filled); with "last", the
    trainer's own. Sets ``run.kept``."""
    check_keep(keep)
    if keep == "best" and trainer.best_weights is not None:
        network = copy.deepcopy(trainer.policy)
        network.load_state_dict(trainer.best_weights)
        run.kept = "best"
        return network
    run.kept = "last"
    return trainer.policy


class ReturnScale:
    """Rewards divided by the running standard deviation of each env's discounted return and
    clipped to +-``clip`` (Stable-Baselines3's ``VecNormalize(norm_reward=True)``): the value
    loss sees returns of about unit scale whatever the game's reward scale."""

    def __init__(self, num_envs, gamma, clip=10.0, eps=1e-8):
        self.gamma, self.clip, self.eps = gamma, clip, eps
        self.returns = np.zeros(num_envs)
        self.mean, self.var, self.count = np.zeros(()), np.ones(()), eps

    def __call__(self, reward, valid, ended):
        self.returns = self.returns * self.gamma + reward
        self.count = fold_moments(self.mean, self.var, self.count, self.returns[valid])
        self.returns[ended] = 0.0
        return np.clip(reward / np.sqrt(self.var + self.eps), -self.clip, self.clip)


class Sampler:
    """The rollout's forward pass, numpy in and out: ``vecenv.ppo.compiled`` (one numba call
    per step, its draws from the counter-based streams of ``(config.seed, step)``) where the
    network allows it and ``config.compiled`` asks for it, PyTorch's ``ActorCritic.sample``
    (its draws from ``generator``) otherwise. Either way a seed repeats a run."""

    def __init__(self, policy, config, generator):
        from .compiled import CompiledPolicy

        self.policy, self.generator, self.seed = policy, generator, int(config.seed)
        use = config.compiled and CompiledPolicy.supports(policy)
        self.compiled = CompiledPolicy(policy) if use else None
        self.counter = 0  # rollout steps so far: each step's draws come from its own streams

    def sample(self, x, mask=None):
        """(actions, log-probabilities, values) of the (n, features) float32 batch ``x``, under
        an optional (n, actions) bool legal-move ``mask``."""
        if self.compiled is not None:
            self.counter += 1
            return self.compiled.sample(x, mask, seed=self.seed, counter=self.counter - 1)
        m = None if mask is None else torch.from_numpy(mask)
        action, logp, value = self.policy.sample(torch.from_numpy(x), m, self.generator)
        return action.numpy(), logp.numpy(), value.numpy()

    def value(self, x):
        if self.compiled is not None:
            return self.compiled.value(x).copy()
        with torch.no_grad():
            return self.policy.value(torch.from_numpy(x)).numpy()


def _autoreset_mode(env):
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)


def advantages(rewards, values, next_value, terminated, truncated, valid, gamma, lam):
    """GAE over a (T, N) rollout of next-step autoreset (see the module); returns
    (advantages, returns). A step that is not ``valid`` (a reset step) gets advantage 0 and
    cuts the recursion; a terminated step does not bootstrap; a truncated one bootstraps from
    the next observation's value but does not carry later advantages back."""
    steps = rewards.shape[0]
    adv = torch.zeros_like(rewards)
    carry = torch.zeros_like(next_value)
    for t in reversed(range(steps)):
        following = next_value if t == steps - 1 else values[t + 1]
        alive = 1.0 - terminated[t]
        delta = rewards[t] + gamma * following * alive - values[t]
        carry = delta + gamma * lam * alive * (1.0 - truncated[t]) * carry
        carry = carry * valid[t]
        adv[t] = carry
    return adv, adv + values


class Trainer:
    """PPO on one vector env; ``run`` trains, ``policy`` is the network being trained."""

    def __init__(self, env, config, policy=None):
        if _autoreset_mode(env) != AutoresetMode.NEXT_STEP:
            raise ValueError("the trainer needs a VectorEnv with next-step autoreset")
        if env.num_envs != config.num_envs:
            raise ValueError(
                f"the env has {env.num_envs} environments, the config {config.num_envs}"
            )
        self.env, self.config = env, config
        self.best_weights = None  # the policy's at the run's best running mean (Run.best)
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)
        obs_space = env.single_observation_space
        if config.one_hot_obs:
            obs_space = one_hot_space(obs_space)
        if policy is None:  # its size checked before a byte of it is allocated
            check_size(obs_space, env.single_action_space, config.hidden, config.batch_size)
        self.policy = policy or ActorCritic(
            obs_space,
            env.single_action_space,
            config.hidden,
            norm_obs=config.norm_obs,
            activation=config.activation,
            log_std_init=config.log_std_init,
        )
        # The network's view of the observations (one-hot indices where config.one_hot_obs).
        self.obs_space = self.policy.observation_space
        # Games whose observations carry their legal moves: actions are drawn, and the update
        # scores them, under that mask (as a saved Policy plays them).
        self.masked = legal_field(env.single_observation_space, env.single_action_space)
        self.optimizer = torch.optim.Adam(
            self.policy.parameters(), lr=config.learning_rate, eps=1e-5
        )
        # The update as one numba call (vecenv.ppo.compiled_update) where the network allows:
        # it writes the torch parameters in place and keeps Adam's moments itself, so
        # self.optimizer then only carries the learning rate's schedule.
        from .compiled_update import CompiledUpdate

        use = config.compiled and CompiledUpdate.supports(self.policy)
        self.compiled_update = CompiledUpdate(self.policy, config) if use else None

    def run(
        self,
        threshold=None,
        on_rollout=None,
        on_checkpoint=None,
        checkpoint_every=0,
        target=None,
    ):
        """Train for ``config.total_steps`` env steps, or until the running mean (``Run``,
        ``config.metric``) reaches ``threshold``. ``target`` is watched without stopping:
        ``Run.reached`` says when the mean first reached it (or ``threshold``).
        ``on_rollout(run, iteration)`` is called after every update, ``on_checkpoint(iteration)``
        every ``checkpoint_every`` updates. Ctrl-C ends the run early with ``run.interrupted``
        set, so what it learned so far can still be saved."""
        cfg = self.config
        run = Run(config=cfg, target=threshold if threshold is not None else target)
        start = time.perf_counter()
        try:
            self._train(run, threshold, on_rollout, on_checkpoint, checkpoint_every, start)
        except KeyboardInterrupt:
            run.interrupted = True
        run.seconds = time.perf_counter() - start
        return run

    def _train(self, run, threshold, on_rollout, on_checkpoint, checkpoint_every, start):
        cfg, env, policy = self.config, self.env, self.policy
        n, steps = cfg.num_envs, cfg.num_steps
        size = self.policy.critic[0].in_features
        # numpy buffers, seen by the update through torch.from_numpy (no copies)
        obs_buf = np.zeros((steps, n, size), dtype=np.float32)
        if policy.discrete:
            act_buf = np.zeros((steps, n), dtype=np.int64)
        else:
            act_buf = np.zeros((steps, n, policy.log_std.numel()), dtype=np.float32)
        logp_buf, val_buf, rew_buf, term_buf, trunc_buf, valid_buf = (
            np.zeros((steps, n), dtype=np.float32) for _ in range(6)
        )
        mask_buf = np.ones((steps, n, policy.action_space.n), bool) if self.masked else None
        sampler = Sampler(policy, cfg, self.generator)
        tally = Tally(run, n)
        scale = ReturnScale(n, cfg.gamma) if cfg.norm_reward else None
        bonus = None
        if cfg.explore_bonus:
            bonus = CountBonus(size, cfg.explore_bits, cfg.explore_bonus, cfg.seed)
        t0 = time.perf_counter()
        obs, _ = env.reset(seed=int(cfg.seed))
        run.env_seconds += time.perf_counter() - t0
        if policy.obs_norm is not None:
            policy.obs_norm.update(flatten(self.obs_space, obs, n))
        ended = np.zeros(n, dtype=bool)  # the next step of these only resets them
        for iteration in range(1, cfg.iterations + 1):
            frac = 1.0 - (iteration - 1) / cfg.iterations
            if cfg.anneal_lr:
                self.optimizer.param_groups[0]["lr"] = frac * cfg.learning_rate
            ent_coef = frac * cfg.ent_coef if cfg.anneal_ent else cfg.ent_coef
            for t in range(steps):
                x = obs_buf[t]
                x[...] = flatten(self.obs_space, obs, n)
                mask = None
                if mask_buf is not None:
                    mask = mask_buf[t]
                    mask[...] = obs[LEGAL]
                    # A finished game's final observation may allow no move; its next step
                    # only resets it, so any action does (and the update leaves it out).
                    mask[~mask.any(axis=1)] = True
                action, logp_buf[t], val_buf[t] = sampler.sample(x, mask)
                act_buf[t] = action
                valid = ~ended
                valid_buf[t] = valid
                t0 = time.perf_counter()
                obs, reward, terminated, truncated, _ = env.step(policy.to_env(act_buf[t]))
                run.env_seconds += time.perf_counter() - t0
                reward = np.where(valid, reward, 0.0)
                run.steps += int(valid.sum())
                ended = (terminated | truncated) & valid
                tally.step(reward, valid, ended)  # the game's own rewards, never the bonus
                if bonus is not None:  # for arriving where this step led
                    reward = reward + bonus(flatten(self.obs_space, obs, n), valid)
                if scale is not None:
                    reward = scale(reward, valid, ended)
                rew_buf[t] = reward
                term_buf[t] = terminated & valid
                trunc_buf[t] = truncated & valid
            next_value = torch.from_numpy(sampler.value(flatten(self.obs_space, obs, n)))
            obs_t, act_t, logp_t, val_t, rew_t, term_t, trunc_t, valid_t = map(
                torch.from_numpy,
                (obs_buf, act_buf, logp_buf, val_buf, rew_buf, term_buf, trunc_buf, valid_buf),
            )
            adv, ret = advantages(
                rew_t, val_t, next_value, term_t, trunc_t, valid_t, cfg.gamma, cfg.gae_lambda
            )
            masks = None if mask_buf is None else torch.from_numpy(mask_buf)
            self._update(obs_t, act_t, logp_t, val_t, adv, ret, valid_t, masks, ent_coef)
            if policy.obs_norm is not None:
                # After the update: a rollout and its update see the same statistics, so the
                # update's first probability ratios are exactly 1.
                policy.obs_norm.update(obs_buf.reshape(-1, size)[valid_buf.reshape(-1) > 0])
            if record(run, tally.mean, tally.full, time.perf_counter() - start):
                self.best_weights = snapshot(policy)
            if on_rollout is not None:
                on_rollout(run, iteration)
            if on_checkpoint is not None and checkpoint_every and iteration % checkpoint_every == 0:
                on_checkpoint(iteration)
            if threshold is not None and run.reached is not None:
                break

    def _update(self, obs, actions, logp, values, adv, returns, valid, masks, ent_coef):
        cfg, policy = self.config, self.policy
        keep = valid.reshape(-1) > 0
        b_obs = obs.reshape((-1, obs.shape[-1]))[keep]
        b_act = actions.reshape((-1,) + actions.shape[2:])[keep]
        b_logp, b_adv = logp.reshape(-1)[keep], adv.reshape(-1)[keep]
        b_ret, b_val = returns.reshape(-1)[keep], values.reshape(-1)[keep]
        b_mask = None if masks is None else masks.reshape(-1, masks.shape[-1])[keep]
        if self.compiled_update is not None:
            if b_obs.shape[0]:
                lr = self.optimizer.param_groups[0]["lr"]
                tensors = (b_obs, b_act, b_logp, b_adv, b_ret, b_val)
                self.compiled_update.update(
                    *(t.numpy() for t in tensors),
                    None if b_mask is None else b_mask.numpy(),
                    lr=lr,
                    ent_coef=ent_coef,
                )
            return
        update(
            policy,
            self.optimizer,
            cfg,
            self.generator,
            b_obs,
            b_act,
            b_logp,
            b_adv,
            b_ret,
            b_val,
            b_mask,
            ent_coef,
        )


class Tally:
    """The running mean a run reports and its target watches, over the last ``window``
    episodes' returns, or with ``config.segment`` over the last ``window`` segments' mean
    rewards per step: each env's steps cut into runs of ``segment`` valid steps, whatever its
    episodes do (so a continuing game, which never ends one, is measured without changing it)."""

    def __init__(self, run, n):
        self.run, self.segment = run, run.config.segment
        self.recent = deque(maxlen=run.config.window)
        self.ep_return, self.ep_length = np.zeros(n), np.zeros(n, dtype=np.int64)
        self.seg_sum, self.seg_length = np.zeros(n), np.zeros(n, dtype=np.int64)

    def step(self, reward, valid, ended):
        """Fold in one step: its rewards (0 where not ``valid``, a step that only resets) and
        the episodes it ``ended``."""
        run = self.run
        self.ep_return += reward
        self.ep_length += valid
        for i in np.flatnonzero(ended):
            run.episodes.append((run.steps, float(self.ep_return[i]), int(self.ep_length[i])))
            if not self.segment:
                self.recent.append(float(self.ep_return[i]))
        self.ep_return[ended] = 0.0
        self.ep_length[ended] = 0
        if self.segment:
            self.seg_sum += reward
            self.seg_length += valid
            full = self.seg_length == self.segment
            for i in np.flatnonzero(full):
                rate = float(self.seg_sum[i]) / self.segment
                run.segments.append((run.steps, rate))
                self.recent.append(rate)
            self.seg_sum[full] = 0.0
            self.seg_length[full] = 0

    @property
    def mean(self):
        return float(np.mean(self.recent)) if self.recent else float("nan")

    @property
    def full(self):
        """Whether ``window`` episodes (or segments) have ended: the mean counts from then."""
        return len(self.recent) == self.recent.maxlen


def update(
    policy,
    optimizer,
    cfg,
    generator,
    obs,
    actions,
    logp,
    adv,
    returns,
    values,
    masks=None,
    ent_coef=None,
):
    """PPO's epochs of minibatch steps over one batch of samples (rows); ``ent_coef`` this
    update's entropy bonus where it is annealed (else ``cfg.ent_coef``)."""
    ent_coef = cfg.ent_coef if ent_coef is None else ent_coef
    size = obs.shape[0]
    if size == 0:
        return
    minibatch = max(1, size // cfg.num_minibatches)
    for _ in range(cfg.update_epochs):
        # On the generator's device: the GPU trainer's minibatches never touch the host.
        order = torch.randperm(size, generator=generator, device=generator.device)
        for begin in range(0, size, minibatch):
            idx = order[begin : begin + minibatch]
            mask = None if masks is None else masks[idx]
            new_logp, entropy, new_value = policy.evaluate(obs[idx], actions[idx], mask)
            ratio = (new_logp - logp[idx]).exp()
            mb_adv = adv[idx]
            if cfg.norm_adv and mb_adv.numel() > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(
                -mb_adv * ratio, -mb_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
            ).mean()
            if cfg.clip_vloss:
                clipped = values[idx] + (new_value - values[idx]).clamp(
                    -cfg.clip_coef, cfg.clip_coef
                )
                v_loss = (
                    0.5
                    * torch.max(
                        (new_value - returns[idx]) ** 2, (clipped - returns[idx]) ** 2
                    ).mean()
                )
            else:
                v_loss = 0.5 * ((new_value - returns[idx]) ** 2).mean()
            loss = pg_loss - ent_coef * entropy.mean() + cfg.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.max_grad_norm)
            optimizer.step()
