"""PPO in the box (the ``train`` extra): train on any vecenv game or Gymnasium env.

``train(env_id, config, run_dir)`` trains a policy with ``Trainer`` on a vector env and writes the
run beside it: checkpoints, the final policy, the learning curve as CSV and PNG. ``load`` reads a
saved policy back. The same ``Trainer`` runs on gymnasium's own vector envs (``vector_env(...,
backend="gymnasium")``), which is how the training benchmarks compare the two.
``vecenv.ppo.league`` trains a two-agent game by self-play against a league; ``vecenv.ppo.zoo``
reads the games' tuned configurations (``ppo.json``). The rollout's forward pass and the update run
as numba code on the network's own tensors (``compiled``, ``compiled_update``) where they can.
"""

import json
import os

from vecenv import extras

try:
    import torch  # noqa: F401
except ImportError as e:
    raise extras.error("train", "vecenv.ppo (the PPO trainer)", ["torch"]) from e

from vecenv.checkpoints import KEEP_CHECKPOINTS, Rotation

from .checkpoint import Policy, load, save
from .curves import plot, try_plot, write_csv
from .trainer import PPOConfig, Run, Trainer, check_keep, kept_network


def vector_env(
    env_id, num_envs, backend="vecenv", num_threads=1, precision="float64", env_config=None
):
    """``env_id``'s vector env: vecenv's (a game name or vecenv's gym id; ``precision``: its
    rules' float precision, docs/precision.md; ``env_config``: the game's fields where not its
    defaults) or gymnasium's own (its ``vector_entry_point`` where it has one, ``SyncVectorEnv``
    otherwise; ``env_config``: keyword arguments of its ``make``)."""
    import gymnasium

    if backend == "vecenv":
        from vecenv import registry

        spec = registry.get_spec(env_id.removeprefix("vecenv/"))
        gym_id = spec.gym.get("id")
        if not gym_id:
            raise ValueError(f"{spec.name} has no Gymnasium id")
        return gymnasium.make_vec(
            f"vecenv/{gym_id}",
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            num_threads=num_threads,
            precision=precision,
            **(env_config or {}),
        )
    if backend == "gymnasium":
        if precision != "float64":
            raise ValueError("gymnasium's envs run as written: precision='float64'")
        has_vector = gymnasium.spec(env_id).vector_entry_point is not None
        mode = "vector_entry_point" if has_vector else "sync"
        return gymnasium.make_vec(
            env_id, num_envs=num_envs, vectorization_mode=mode, **(env_config or {})
        )
    raise ValueError(f"backend must be 'vecenv' or 'gymnasium', got {backend!r}")


def train(
    env_id,
    config,
    run_dir=None,
    threshold=None,
    backend="vecenv",
    on_rollout=None,
    checkpoint_every=0,
    target=None,
    precision="float64",
    keep_checkpoints=KEEP_CHECKPOINTS,
    keep="best",
):
    """Train on ``env_id`` (stopping at ``threshold``, watching ``target``: see
    ``Trainer.run``); with ``run_dir``, write ``policy.pt`` (``keep``: "best", the weights of
    the run's best running mean, ``Run.best``; or "last"), ``checkpoint_<steps>.pt`` every
    ``checkpoint_every`` updates (the latest ``keep_checkpoints`` kept; 0: all), ``curve.csv``,
    ``curve.png`` and ``run.json`` there, also when Ctrl-C ends the run early
    (``Run.interrupted``). ``precision``: vecenv's rules in float64 (default) or float32
    (docs/precision.md). Returns (Run, trainer)."""
    check_keep(keep)
    rotation = Rotation(keep_checkpoints)
    env = vector_env(
        env_id, config.num_envs, backend, precision=precision, env_config=config.env_config
    )
    try:
        trainer = Trainer(env, config)
        name = _env_name(env_id, backend)

        def checkpoint(iteration):
            steps = iteration * config.batch_size
            path = os.path.join(run_dir, f"checkpoint_{steps}.pt")
            save(path, trainer.policy, name, config.to_dict())
            rotation.wrote(path)

        if run_dir is not None:
            os.makedirs(run_dir, exist_ok=True)
        run = trainer.run(
            threshold=threshold,
            on_rollout=on_rollout,
            on_checkpoint=checkpoint if run_dir is not None else None,
            checkpoint_every=checkpoint_every,
            target=target,
        )
    finally:
        env.close()
    if run_dir is not None:
        network = kept_network(trainer, run, keep)
        save(os.path.join(run_dir, "policy.pt"), network, name, config.to_dict())
        write_csv(run, os.path.join(run_dir, "curve.csv"))
        with open(os.path.join(run_dir, "run.json"), "w") as f:
            json.dump(summary(run, name), f, indent=2)
        # Last: the plot is optional (matplotlib), the results above are not.
        run.plotted = try_plot(
            {name: run},
            os.path.join(run_dir, "curve.png"),
            title=f"PPO on {name}",
            threshold=threshold,
        )
    return run, trainer


def warm(env_id, backend="vecenv", like=None):
    """Compile (or load from numba's cache) everything a training run on ``env_id`` calls: the
    env's kernels and the compiled rollout pass and update, by a training run of a few steps
    with the network of ``like`` (a ``PPOConfig``; default: the defaults'), as the kernels are
    compiled for its activation and threads. Benchmarks call it first, so that what they time is
    training, not compilation."""
    network = {}
    if like is not None:
        fields = ("hidden", "activation", "torch_threads", "norm_obs", "one_hot_obs", "compiled")
        fields += ("env_config",)
        network = {name: getattr(like, name) for name in fields}
    config = PPOConfig(num_envs=2, num_steps=4, total_steps=8, update_epochs=1, **network)
    train(env_id, config, backend=backend)


def _env_name(env_id, backend):
    if backend != "vecenv":
        return f"gym.{env_id}"
    from vecenv import registry

    return registry.get_spec(env_id.removeprefix("vecenv/")).gym["id"]


def summary(run, env_name):
    return {
        "env": env_name,
        "steps": run.steps,
        "seconds": round(run.seconds, 3),
        "steps_per_second": round(run.steps_per_second, 1),
        "env_fraction": round(run.env_fraction, 4),
        "metric": run.config.metric_label,
        run.config.metric: run.mean,
        "episodes": len(run.episodes),
        "segments": len(run.segments),
        "target": run.target,
        "reached": run.reached,
        # The highest running mean over a full window and when (null where none filled), and
        # which weights policy.pt holds.
        "best": None
        if run.best is None
        else dict(zip((run.config.metric, "steps", "seconds"), run.best, strict=True)),
        "kept": run.kept,
        "interrupted": run.interrupted,
        "config": run.config.to_dict(),
    }


__all__ = [
    "PPOConfig",
    "Policy",
    "Run",
    "Trainer",
    "load",
    "plot",
    "save",
    "summary",
    "train",
    "vector_env",
    "warm",
    "write_csv",
]
