"""Tuned PPO configurations: a game's ``ppo.json``, beside its rules, as RL Zoo keeps its
hyper-parameters (one file per game, so a game of your own can ship its own).

A ``ppo.json`` holds the figure that counts as solved and where it comes from, and the
``PPOConfig`` fields that differ from the defaults::

    {
      "target": 475.0,
      "target_source": "CartPole-v1's reward_threshold (gymnasium)",
      "hyperparameters": {"num_envs": 64, "num_steps": 32, "total_steps": 200000}
    }

The target is a mean return of the last ``window`` episodes, or for a configuration with a
``segment`` (a continuing game's, which never ends an episode) a mean reward per step of the last
``window`` segments (``PPOConfig.metric``). ``vecenv train ppo --env ID`` starts from it (flags
override single fields), and ``benchmarks/ppo_zoo.py`` proves it: every seed must reach
``target`` within ``total_steps``.
"""

import dataclasses
import json
import math
import numbers
from dataclasses import dataclass

from vecenv import registry

from .trainer import PPOConfig

FILE = "ppo.json"
KEYS = {"target", "target_source", "hyperparameters"}


@dataclass(frozen=True)
class Tuned:
    game: str  # the registry's name
    target: float  # the running mean (``config().metric``) that counts as solved
    target_source: str  # where that figure comes from
    hyperparameters: dict  # PPOConfig fields
    path: str

    def config(self, **overrides):
        """The tuned ``PPOConfig``, with ``overrides`` (None values ignored) on top; a
        ``num_envs`` of its own rescales what depends on it (``for_num_envs``)."""
        return adapted(self.hyperparameters, overrides)[0]


# A rollout's fewest steps per environment when a configuration is rescaled to many environments:
# the update learns from GAE's returns, bootstrapped from the value where a rollout stops, and
# rollouts of a step or two leave them mostly bootstrap.
MIN_STEPS = 4


def for_num_envs(values, num_envs, num_steps=None):
    """``values`` (``PPOConfig`` fields tuned for ``values["num_envs"]``, the defaults' where
    absent) for ``num_envs`` environments instead, and the changes as ``{field: (was, now)}``.

    A PPO configuration is tuned for its batch: with more environments alone each update would
    learn from more samples in as many gradient steps, with fewer from fewer, and a run tuned at
    32 can collapse at 64. So the steps per update (``num_envs * num_steps``) and the minibatch
    size stay as tuned: ``num_steps`` is the tuned batch over ``num_envs`` (at least
    ``MIN_STEPS``, or the tuned ``num_steps`` where that is fewer; or ``num_steps`` where
    given), and ``num_minibatches`` the new batch over the
    tuned minibatch size. The learning rate, epochs and budget are the tuned ones."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
        return dict(values, num_envs=num_envs), {}  # PPOConfig says what is wrong with it
    defaults = PPOConfig()
    tuned_envs = values.get("num_envs", defaults.num_envs)
    tuned_steps = values.get("num_steps", defaults.num_steps)
    tuned_minibatches = values.get("num_minibatches", defaults.num_minibatches)
    out = dict(values, num_envs=num_envs)
    if num_envs == tuned_envs:
        return out, {}
    batch = tuned_envs * tuned_steps
    minibatch = batch / tuned_minibatches
    steps = num_steps
    if not isinstance(steps, numbers.Integral) or isinstance(steps, bool) or steps < 1:
        steps = max(min(MIN_STEPS, tuned_steps), round(batch / num_envs))
    minibatches = max(1, round(num_envs * steps / minibatch))
    out.update(num_steps=steps, num_minibatches=minibatches)
    changes = {"num_envs": (tuned_envs, num_envs)}
    if steps != tuned_steps:
        changes["num_steps"] = (tuned_steps, steps)
    if minibatches != tuned_minibatches:
        changes["num_minibatches"] = (tuned_minibatches, minibatches)
    return out, changes


def adapted(values, overrides):
    """``values`` with ``overrides`` (None values ignored) on top, as a ``PPOConfig``, and what
    ``for_num_envs`` changed: where ``overrides`` gives ``num_envs``, ``num_steps`` and
    ``num_minibatches`` follow it unless given too (a given one stays as given)."""
    given = {k: v for k, v in overrides.items() if v is not None}
    changes = {}
    if "num_envs" in given:
        values, changes = for_num_envs(values, given["num_envs"], given.get("num_steps"))
        changes = {k: v for k, v in changes.items() if k == "num_envs" or k not in given}
    values = dict(values)
    values.update(given)
    return PPOConfig(**values), changes


def _fields():
    return {f.name for f in dataclasses.fields(PPOConfig)}


def read(path, game):
    """The ``Tuned`` in ``path``; a malformed file is a ValueError naming it and what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: not a readable PPO configuration ({e})") from None
    if not isinstance(data, dict) or set(data) != KEYS:
        raise ValueError(f"{path}: a PPO configuration has exactly the keys {sorted(KEYS)}")
    target, source, hyper = data["target"], data["target_source"], data["hyperparameters"]
    if isinstance(target, bool) or not isinstance(target, (int, float)) or math.isinf(target):
        raise ValueError(f"{path}: target must be a finite number, got {target!r}")
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"{path}: target_source must say where the target comes from")
    if not isinstance(hyper, dict):
        raise ValueError(f"{path}: hyperparameters must be an object")
    unknown = set(hyper) - _fields()
    if unknown:
        raise ValueError(f"{path}: unknown hyper-parameters {sorted(unknown)}")
    tuned = Tuned(game, float(target), source, dict(hyper), str(path))
    try:
        config = tuned.config()
        if config.env_config:  # the game's own fields, checked as the game checks them
            registry.get_spec(game).resolve_configuration(config.env_config)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{path}: {e}") from None
    return tuned


def tuned(game):
    """The game's ``Tuned`` configuration, or None where its folder has no ``ppo.json``."""
    found = registry.get_game(registry.resolve(game))
    path = found.folder / FILE
    return read(path, found.name) if path.is_file() else None


def all_tuned():
    """``{game: Tuned}`` for every registered game with a ``ppo.json``."""
    out = {}
    for name in registry.specs():
        entry = tuned(name)
        if entry is not None:
            out[name] = entry
    return out


@dataclass(frozen=True)
class Attempt:
    """One seed's training run on a tuned configuration, stopped at the target."""

    game: str
    seed: int
    solved: bool
    steps: int  # env steps to the target, or all the run took
    seconds: float  # wall time to the target (compilation excluded), or the whole run
    mean: float  # the running mean (``metric``) when the run stopped
    metric: str  # ``mean_return`` or ``mean_reward_per_step`` (``PPOConfig.metric``)


def attempt(game, seed, **overrides):
    """Train ``game``'s tuned configuration with ``seed`` until the running mean reaches its
    target or the step budget runs out. A short run first (``warm``) compiles the env's kernels
    and the trainer's (or loads them from numba's cache), so that is not counted as training."""
    from . import train, warm

    entry = tuned(game)
    if entry is None:
        raise ValueError(f"{game} has no tuned configuration ({FILE})")
    config = entry.config(seed=seed, **overrides)
    warm(entry.game, like=config)
    run, _ = train(entry.game, config, threshold=entry.target)
    solved = run.reached is not None
    steps, seconds = run.reached if solved else (run.steps, run.seconds)
    return Attempt(entry.game, seed, solved, steps, seconds, run.mean, config.metric)
