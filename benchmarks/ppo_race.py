"""Time to CartPole-v1 475: vecenv's PPO against the PPO setups people use, in one run.

Each side trains PPO on CartPole-v1 until the mean return of its last 100 finished episodes
reaches 475 (gymnasium's reward threshold for CartPole-v1), checked after every update, the moment
a trainer could stop; the same criterion for every side. A side's figures are the env steps and
wall seconds at that moment, and its env-steps/s over the whole run (rollouts and updates).

Sides (``--sides``, all by default; hyper-parameters from the sources named, unchanged unless
said):

- ``vecenv``: ``vecenv.ppo.train("cartpole", config, threshold=475)`` with the tuned configuration
  (``vecenv.ppo.zoo.tuned("cartpole")``, the game's ``ppo.json``), on vecenv's CartPole.
- ``vecenv-on-gymnasium``: the same trainer and configuration on gymnasium's own vector CartPole
  (``CartPoleVectorEnv``): the env's share of the difference.
- ``cleanrl``: the same trainer with CleanRL's ``ppo.py`` defaults for CartPole-v1 on gymnasium's
  vector CartPole.
- ``sb3``: Stable-Baselines3's PPO with RL Zoo's CartPole-v1 hyper-parameters on gymnasium's
  CartPole-v1 in SB3's ``DummyVecEnv`` (``make_vec_env``, as RL Zoo builds it), stopped by a
  callback on SB3's own last-100-episode buffer (``ep_info_buffer``).
- ``pufferlib``: PufferLib 3.0's trainer (``PuffeRL``) with PufferLib's own CartPole configuration
  (``config/ocean/cartpole.ini`` over ``config/default.ini``) on vecenv's CartPole through
  ``vecenv.pufferlib``, on the CPU (see ``pufferlib_side`` for what was adapted and why).

Every side runs in this process, one run at a time, PyTorch on one thread
(``torch.set_num_threads(1)``), the envs stepped in the process (no worker processes); seeds are
taken in rounds (seed 1 on every side, then seed 2, ...), so a change in the machine's load falls
on every side alike. Before each run its side is warmed: vecenv's trainer by a training run of a
few steps (``vecenv.ppo.warm``: numba compiles the env's and the trainer's kernels on first use,
and that compile is not training), the others' envs by a reset and a step; env and network
construction are outside the timed span.

    python benchmarks/ppo_race.py                     # 5 seeds, every side (half an hour)
    python benchmarks/ppo_race.py --quick             # tiny budgets, 1 seed: checks the script
    python benchmarks/ppo_race.py --sides vecenv,sb3 --seeds 1,2

writes ``race.json`` and ``race.md`` (the table) to ``--out`` (default ``docs/training/race``).
"""

import argparse
import contextlib
import datetime
import io
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

GAME, ENV_ID = "cartpole", "CartPole-v1"
THRESHOLD = 475.0  # CartPole-v1's reward_threshold in gymnasium's registry
WINDOW = 100  # finished episodes in the running mean
SEEDS = (1, 2, 3, 4, 5)

# CleanRL's cleanrl/ppo.py defaults (its Args), which are for CartPole-v1.
CLEANRL = dict(
    num_envs=4,
    num_steps=128,
    total_steps=500_000,
    learning_rate=2.5e-4,
    anneal_lr=True,
    gamma=0.99,
    gae_lambda=0.95,
    num_minibatches=4,
    update_epochs=4,
    norm_adv=True,
    clip_coef=0.2,
    clip_vloss=True,
    ent_coef=0.01,
    vf_coef=0.5,
    max_grad_norm=0.5,
    hidden=(64, 64),
    # CleanRL's script is PyTorch throughout: the trainer's PyTorch rollout pass and update,
    # which follow it, not the compiled ones.
    compiled=False,
)
CLEANRL_SOURCE = (
    "CleanRL cleanrl/ppo.py defaults (vwxyzjn/cleanrl 020cf0e), trained by vecenv.ppo.Trainer "
    "with PyTorch's rollout pass and update (compiled=False)"
)

# RL Zoo's hyperparams/ppo.yml, CartPole-v1 (DLR-RM/rl-baselines3-zoo 00128b5). "lin_x" is a
# schedule falling linearly from x to 0 over the run.
RL_ZOO = dict(
    n_envs=8,
    n_timesteps=100_000,
    policy="MlpPolicy",
    n_steps=32,
    batch_size=256,
    gae_lambda=0.8,
    gamma=0.98,
    n_epochs=20,
    ent_coef=0.0,
    learning_rate="lin_0.001",
    clip_range="lin_0.2",
)
RL_ZOO_SOURCE = "RL Zoo hyperparams/ppo.yml CartPole-v1 (DLR-RM/rl-baselines3-zoo 00128b5)"
SB3_BUDGET_FACTOR = 1.5  # of RL Zoo's n_timesteps; a seed not solved by then is not solved

PUFFER_CONFIG = "puffer_cartpole"  # PufferLib's config/ocean/cartpole.ini
PUFFER_SOURCE = "PufferLib 3.0 config/ocean/cartpole.ini over config/default.ini, adapted for CPU"
# The settings of PuffeRL's train section the report shows (the rest are logging and storage).
PUFFER_SHOWN = (
    "total_timesteps",
    "learning_rate",
    "anneal_lr",
    "optimizer",
    "gamma",
    "gae_lambda",
    "update_epochs",
    "clip_coef",
    "vf_coef",
    "vf_clip_coef",
    "max_grad_norm",
    "ent_coef",
    "adam_beta1",
    "adam_beta2",
    "adam_eps",
    "bptt_horizon",
    "minibatch_size",
    "prio_alpha",
    "prio_beta0",
    "vtrace_rho_clip",
    "vtrace_c_clip",
)

SIDES = (
    "vecenv",
    "vecenv-torch",
    "vecenv-on-gymnasium",
    "vecenv-puffer-batch",
    "cleanrl",
    "sb3",
    "pufferlib",
)
LABELS = {
    "vecenv": "vecenv.ppo on vecenv CartPole",
    "vecenv-torch": "vecenv.ppo with PyTorch's rollout and update (compiled=False)",
    "vecenv-puffer-batch": "vecenv.ppo on vecenv CartPole, PufferLib's batch geometry",
    "vecenv-on-gymnasium": "vecenv.ppo on gymnasium CartPoleVectorEnv",
    "cleanrl": "CleanRL-style PPO on gymnasium CartPoleVectorEnv",
    "sb3": "Stable-Baselines3 PPO on gymnasium CartPole (DummyVecEnv)",
    "pufferlib": "PufferLib PuffeRL on vecenv CartPole (vecenv.pufferlib)",
}


@dataclass
class Outcome:
    """One run: env steps and seconds in all, and (steps, seconds) when the criterion was met."""

    steps: int
    seconds: float
    reached: tuple = None
    budget: int = 0  # env steps the side may take
    update_steps: int = 0  # env steps between two checks of the criterion (one update)

    @property
    def steps_per_second(self):
        return self.steps / self.seconds if self.seconds > 0 else 0.0


def _single_thread():
    import torch

    torch.set_num_threads(1)
    return torch


# -- vecenv.ppo's trainer: vecenv, vecenv-on-gymnasium, cleanrl --------------------------------


def tuned_config(seed, quick=False):
    """(PPOConfig, source): the game's tuned configuration (its ``ppo.json``)."""
    from vecenv.ppo import zoo

    tuned = zoo.tuned(GAME)
    cfg, source = tuned.config(seed=seed), f"tuned ({os.path.relpath(tuned.path)})"
    return _quick(cfg) if quick else cfg, source


def cleanrl_config(seed, quick=False):
    from vecenv.ppo import PPOConfig

    cfg = PPOConfig(**CLEANRL, seed=seed)
    return (_quick(cfg) if quick else cfg), CLEANRL_SOURCE


# PufferLib's cartpole.ini batch geometry (2 x 4096 envs, horizon 64, one epoch of minibatches of
# 32,768) on vecenv's trainer, with a (128, 128) MLP where PufferLib has a 128-wide layer and an
# LSTM: env-steps/s at PufferLib's batch sizes (the rest of the settings vecenv's defaults), not a
# time to 475.
PUFFER_BATCH = dict(
    num_envs=8192,
    num_steps=64,
    update_epochs=1,
    num_minibatches=16,
    hidden=(128, 128),
    total_steps=2_097_152,  # four updates: enough to time, not to learn (one epoch an update)
)


def puffer_batch_config(seed, quick=False):
    from vecenv.ppo import PPOConfig

    cfg = PPOConfig(**PUFFER_BATCH, seed=seed)
    source = "PufferLib's cartpole.ini batch geometry, vecenv's defaults otherwise"
    return (_quick(cfg) if quick else cfg), source


def _quick(cfg):
    cfg.total_steps = cfg.batch_size * 2
    return cfg


def trainer_side(env_id, backend, config):
    """``vecenv.ppo.train`` to the threshold, after ``vecenv.ppo.warm`` has compiled the
    kernels it calls (numba keeps them for the process)."""
    from vecenv import ppo

    _single_thread()
    config.torch_threads = 1
    ppo.warm(env_id, backend)
    run, _ = ppo.train(env_id, config, threshold=THRESHOLD, backend=backend)
    return Outcome(run.steps, run.seconds, run.reached, config.total_steps, config.batch_size)


# -- Stable-Baselines3 with RL Zoo's hyper-parameters -------------------------------------------


def _linear(initial):
    """RL Zoo's ``lin_x``: SB3 passes the fraction of the run left (1 at the start, 0 at the
    end)."""

    def schedule(progress_remaining):
        return progress_remaining * initial

    return schedule


def _zoo_value(value):
    if isinstance(value, str) and value.startswith("lin_"):
        return _linear(float(value[len("lin_") :]))
    return value


def sb3_side(seed, quick=False):
    """SB3's PPO as RL Zoo trains it, for 1.5x RL Zoo's budget (its schedules span that budget,
    as with RL Zoo's ``-n``), stopped when SB3's own 100-episode buffer reaches the threshold."""
    _single_thread()
    with contextlib.redirect_stderr(io.StringIO()):  # SB3 imports the old gym where installed
        from stable_baselines3 import PPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.env_util import make_vec_env

    hp = dict(RL_ZOO)
    n_envs, n_timesteps, policy = hp.pop("n_envs"), hp.pop("n_timesteps"), hp.pop("policy")
    budget = int(SB3_BUDGET_FACTOR * n_timesteps)
    if quick:
        budget = n_envs * hp["n_steps"] * 2
    env = make_vec_env(ENV_ID, n_envs=n_envs, seed=seed)  # DummyVecEnv of Monitor-ed envs
    env.reset()
    env.step(np.array([env.action_space.sample() for _ in range(n_envs)]))
    model = PPO(
        policy,
        env,
        **{k: _zoo_value(v) for k, v in hp.items()},
        seed=seed,
        device="cpu",
        verbose=0,
    )

    class Watch(BaseCallback):
        """Checks SB3's last-100-episode buffer after every update (at the next rollout's start,
        so the update's time counts, as on the other sides), and stops the run once met."""

        reached = None

        def check(self):
            buffer = self.model.ep_info_buffer
            full = buffer is not None and len(buffer) == WINDOW
            if self.reached is None and full and np.mean([e["r"] for e in buffer]) >= THRESHOLD:
                self.reached = (int(self.model.num_timesteps), time.perf_counter() - start)

        def _on_rollout_start(self):
            self.check()

        def _on_step(self):
            return self.reached is None

    watch = Watch()
    start = time.perf_counter()
    model.learn(total_timesteps=budget, callback=watch)
    seconds = time.perf_counter() - start
    watch.check()  # after the last update
    env.close()
    return Outcome(int(model.num_timesteps), seconds, watch.reached, budget, n_envs * model.n_steps)


# -- PufferLib's PuffeRL --------------------------------------------------------------------------


def _import_pufferl():
    """``pufferlib.pufferl``, without what its import does to the whole process: it turns every
    RuntimeWarning into an error, makes Ctrl-C kill the process at once and installs rich's
    traceback hook. Those are undone here, so the other sides run as they would alone."""
    import signal
    import warnings

    import vecenv.pufferlib  # noqa: F401  (first: it quiets PufferLib's import of the old gym)

    sigint, excepthook = signal.getsignal(signal.SIGINT), sys.excepthook
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        import pufferlib.pufferl
    signal.signal(signal.SIGINT, sigint)
    sys.excepthook = excepthook
    return pufferlib.pufferl


def puffer_config(quick=False, config=PUFFER_CONFIG, device="cpu"):
    """(PuffeRL's train config, vec settings, env settings, policy settings, what was changed):
    PufferLib's own configuration ``config`` (CartPole's by default), read by PufferLib's own
    loader, then adapted (``device``: where its network trains)."""
    pufferl = _import_pufferl()
    argv, sys.argv = sys.argv, sys.argv[:1]  # its loader parses the command line
    try:
        args = pufferl.load_config(config)
    finally:
        sys.argv = argv
    train, vec, env = dict(args["train"]), dict(args["vec"]), dict(args["env"])
    changes = {
        "device": f"{device} (the race runs on the CPU)" if device == "cpu" else device,
        "backend": f"Serial, not {vec['backend']} (the env in this process, as every side's)",
    }
    train["device"] = device
    try:
        import heavyball  # noqa: F401  (PufferLib's Muon optimizer)
    except ImportError:
        changes["optimizer"] = f"adam, not {train['optimizer']} (heavyball is not installed)"
        train["optimizer"] = "adam"
    train.update(checkpoint_interval=10**9, compile=False)
    if quick:
        env["num_envs"] = 64
        batch = vec["num_envs"] * env["num_envs"] * train["bptt_horizon"]
        train.update(minibatch_size=batch, max_minibatch_size=batch, total_timesteps=batch * 2)
        changes["quick"] = "64 agents per env, one minibatch, two updates"
    policy = {"policy": dict(args["policy"]), "rnn": dict(args["rnn"]), "rnn_name": None}
    policy["rnn_name"] = args["rnn_name"]
    return train, vec, env, policy, changes


class EpisodeWatch:
    """PufferLib's vector env, recording every finished episode's return from the buffers its
    ``recv`` hands the trainer (vecenv.pufferlib's infos carry only a mean per report, which
    cannot give the last 100 episodes exactly). Everything else goes to the env."""

    def __init__(self, inner, threshold=THRESHOLD):
        self.inner, self.threshold = inner, threshold
        self.running = np.zeros(inner.num_agents)
        self.recent = deque(maxlen=WINDOW)

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def recv(self):
        out = self.inner.recv()
        rewards, terminals, truncations = out[1], out[2], out[3]
        self.running += rewards
        ended = terminals | truncations
        if ended.any():
            self.recent.extend(self.running[ended].tolist())
            self.running[ended] = 0.0
        return out

    def met(self):
        return len(self.recent) == WINDOW and float(np.mean(self.recent)) >= self.threshold


def pufferlib_side(seed, quick=False, game=GAME, config_name=PUFFER_CONFIG, device="cpu",
                   threshold=THRESHOLD):  # fmt: skip
    """PuffeRL as its CartPole config sets it up (``puffer_config``: 2 envs of 4096 CartPoles,
    an LSTM over PufferLib's default policy, 64-step horizons, its learning rate, clip and
    coefficients), on the CPU in this process. Its dashboard, which redraws the terminal every
    quarter second, is switched off; its checkpoints are written to a temporary folder.
    ``game``, ``config_name``, ``device`` and ``threshold`` choose another game (through
    ``vecenv.pufferlib``), PufferLib configuration, training device and target
    (``benchmarks/gpu_training.py``)."""
    torch = _single_thread()
    pufferl = _import_pufferl()
    import pufferlib.ocean.torch as ocean_torch
    import pufferlib.vector

    from vecenv.pufferlib import env_creator

    train, vec, env_kwargs, policy_kw, _ = puffer_config(quick, config_name, device)
    vector = pufferlib.vector.make(
        env_creator(game),
        env_kwargs=env_kwargs,
        backend=pufferlib.vector.Serial,
        num_envs=vec["num_envs"],
        seed=seed,
    )
    # Warm: reset, then a step with int64 actions, what the trainer's sampler hands the env.
    vector.async_reset(seed)
    vector.recv()
    vector.send(np.zeros(vector.num_agents, dtype=np.int64))
    vector.recv()
    torch.manual_seed(seed)
    policy = ocean_torch.Policy(vector.driver_env, **policy_kw["policy"])
    if policy_kw["rnn_name"]:
        rnn = getattr(ocean_torch, policy_kw["rnn_name"])
        policy = rnn(vector.driver_env, policy, **policy_kw["rnn"])
    precision = torch.get_float32_matmul_precision()
    with tempfile.TemporaryDirectory() as data_dir:
        config = dict(train, seed=seed, data_dir=data_dir, env=f"vecenv_{game}")
        with contextlib.redirect_stdout(io.StringIO()), _no_warnings():
            trainer = pufferl.PuffeRL(config, vector, policy.to(device))
        trainer.print_dashboard = lambda *a, **k: None
        watch = trainer.vecenv = EpisodeWatch(vector, threshold)
        reached = None
        start = time.perf_counter()
        try:
            while trainer.global_step < config["total_timesteps"]:
                trainer.evaluate()
                trainer.train()
                if watch.met():
                    reached = (int(trainer.global_step), time.perf_counter() - start)
                    break
            seconds = time.perf_counter() - start
        finally:
            trainer.utilization.stop()
            vector.close()
            torch.set_float32_matmul_precision(precision)
    return Outcome(
        int(trainer.global_step), seconds, reached, config["total_timesteps"], config["batch_size"]
    )


@contextlib.contextmanager
def _no_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available ... Disabling autocast"
        yield


# -- the race ---------------------------------------------------------------------------------


def run_side(side, seed, quick):
    if side == "vecenv":
        cfg, _ = tuned_config(seed, quick)
        return trainer_side(GAME, "vecenv", cfg)
    if side == "vecenv-torch":
        cfg, _ = tuned_config(seed, quick)
        cfg.compiled = False
        return trainer_side(GAME, "vecenv", cfg)
    if side == "vecenv-on-gymnasium":
        cfg, _ = tuned_config(seed, quick)
        return trainer_side(ENV_ID, "gymnasium", cfg)
    if side == "vecenv-puffer-batch":
        cfg, _ = puffer_batch_config(seed, quick)
        return trainer_side(GAME, "vecenv", cfg)
    if side == "cleanrl":
        cfg, _ = cleanrl_config(seed, quick)
        return trainer_side(ENV_ID, "gymnasium", cfg)
    if side == "sb3":
        return sb3_side(seed, quick)
    if side == "pufferlib":
        return pufferlib_side(seed, quick)
    raise ValueError(f"unknown side {side!r}; sides: {', '.join(SIDES)}")


def describe_side(side, quick):
    """What a side runs: its hyper-parameters, their source and what was changed."""
    if side in ("vecenv", "vecenv-on-gymnasium", "vecenv-torch"):
        cfg, source = tuned_config(1, quick)
        cfg.compiled = side != "vecenv-torch"
        return {"source": source, "hyperparameters": _trainer_hp(cfg)}
    if side == "vecenv-puffer-batch":
        cfg, source = puffer_batch_config(1, quick)
        return {"source": source, "hyperparameters": _trainer_hp(cfg)}
    if side == "cleanrl":
        cfg, source = cleanrl_config(1, quick)
        return {"source": source, "hyperparameters": _trainer_hp(cfg)}
    if side == "sb3":
        return {
            "source": RL_ZOO_SOURCE,
            "hyperparameters": dict(RL_ZOO, net_arch="SB3 default: pi (64, 64), vf (64, 64)"),
            "budget": f"{SB3_BUDGET_FACTOR}x n_timesteps; schedules over that budget",
        }
    if side == "pufferlib":
        train, vec, env, policy, changes = puffer_config(quick)
        return {
            "source": PUFFER_SOURCE,
            "hyperparameters": dict(
                {k: train[k] for k in PUFFER_SHOWN},
                vec_num_envs=vec["num_envs"],
                env_num_envs=env["num_envs"],
                policy=_puffer_policy_text(policy),
            ),
            "changes": changes,
        }
    raise ValueError(f"unknown side {side!r}")


def _puffer_policy_text(policy):
    """The config's policy, with what PufferLib's own defaults make of empty settings."""
    text = f"Policy = pufferlib.models.Default({policy['policy'] or 'hidden_size=128'})"
    if policy["rnn_name"]:
        rnn = policy["rnn"] or "input_size=128, hidden_size=128"
        text += f" in {policy['rnn_name']} = pufferlib.models.LSTMWrapper({rnn})"
    return text


def _trainer_hp(cfg):
    d = cfg.to_dict()
    d.pop("seed")
    d["hidden"] = list(d["hidden"])
    return d


def _median(values):
    m = statistics.median(values)
    return None if math.isinf(m) else m


def summarise(outcomes):
    """Per-side figures over its seeds. An unsolved seed counts as never reaching the threshold
    (infinite steps and seconds), so a median is 'not reached' when half the seeds or more
    failed."""
    solved = [o for o in outcomes if o.reached]
    return {
        "seeds_solved": len(solved),
        "seeds": len(outcomes),
        "median_steps_to_threshold": _median(
            [o.reached[0] if o.reached else math.inf for o in outcomes]
        ),
        "median_seconds_to_threshold": _median(
            [o.reached[1] if o.reached else math.inf for o in outcomes]
        ),
        "median_steps_per_second": statistics.median(o.steps_per_second for o in outcomes),
    }


def machine():
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }


def versions(sides):
    import importlib.metadata as md

    names = ["vecenv", "torch", "gymnasium", "numpy", "numba"]
    names += ["stable-baselines3"] if "sb3" in sides else []
    names += ["pufferlib"] if "pufferlib" in sides else []
    out = {}
    for name in names:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = None
    return out


def _fmt(value, digits=0):
    if value is None:
        return "not reached"
    return f"{value:,.{digits}f}"


def markdown(report):
    lines = [
        f"# PPO race: time to {ENV_ID} {THRESHOLD:g}",
        "",
        f"Run {report['date']}, {report['machine']['cpu']}, {report['machine']['cores']} cores "
        f"(load average at the start {report['machine']['load_average_at_start']}, at the end "
        f"{report['load_average_at_end']}); {report['seconds']:.0f} s in all. Seeds "
        f"{', '.join(map(str, report['seeds']))}; medians over them, an unsolved seed counting "
        f"as never reaching {THRESHOLD:g}. Criterion: the mean return of the last {WINDOW} "
        "finished episodes, checked after every update; PyTorch on one thread, envs stepped in "
        "the process, each side warmed before timing (vecenv's trainer by a run of a few steps, "
        "the others' envs by a reset and a step)."
        + (" **Quick run: tiny budgets, figures meaningless.**" if report["quick"] else ""),
        "",
        "| side | hyper-parameters | seeds solved | median steps to 475 | median seconds to 475 "
        "| env-steps/s |",
        "|---|---|---|---|---|---|",
    ]
    for entry in report["sides"].values():
        s = entry["summary"]
        lines.append(
            f"| {entry['label']} | {entry['source']} | {s['seeds_solved']}/{s['seeds']} "
            f"| {_fmt(s['median_steps_to_threshold'])} "
            f"| {_fmt(s['median_seconds_to_threshold'], 1)} "
            f"| {_fmt(s['median_steps_per_second'])} |"
        )
    lines.append("")
    for side, entry in report["sides"].items():
        changes = entry.get("changes")
        if changes:
            lines.append(f"- {side}: " + "; ".join(f"{k}: {v}" for k, v in changes.items()))
    lines.append(
        "- steps between checks (one update's batch): "
        + ", ".join(
            f"{side} {entry['runs'][0]['update_steps']:,}"
            for side, entry in report["sides"].items()
            if entry["runs"]
        )
    )
    return "\n".join(lines) + "\n"


def parse_sides(text):
    sides = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in sides if s not in SIDES]
    if unknown or not sides:
        raise argparse.ArgumentTypeError(
            f"unknown side(s) {', '.join(unknown) or '(none)'}; sides: {', '.join(SIDES)}"
        )
    return sides


def parse_seeds(text):
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds are integers, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"seeds are non-negative integers, got {text!r}")
    return seeds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join("docs", "training", "race"))
    parser.add_argument("--sides", type=parse_sides, default=list(SIDES), help=",".join(SIDES))
    parser.add_argument("--seeds", type=parse_seeds, default=None, help="e.g. 1,2,3,4,5")
    parser.add_argument("--quick", action="store_true", help="tiny budgets, 1 seed (a smoke run)")
    args = parser.parse_args(argv)
    seeds = args.seeds or (list(SEEDS[:1]) if args.quick else list(SEEDS))
    _single_thread()
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(args.sides),
        "env": ENV_ID,
        "threshold": THRESHOLD,
        "window": WINDOW,
        "seeds": seeds,
        "quick": args.quick,
        "torch_threads": 1,
        "sides": {},
    }
    for side in args.sides:
        report["sides"][side] = {"label": LABELS[side], **describe_side(side, args.quick)}
        report["sides"][side]["runs"] = []
    t0 = time.perf_counter()
    for seed in seeds:
        for side in args.sides:
            outcome = run_side(side, seed, args.quick)
            report["sides"][side]["runs"].append(_run_record(seed, outcome))
            reached = (
                f"{outcome.reached[0]:,} steps, {outcome.reached[1]:.1f} s"
                if outcome.reached
                else "not reached"
            )
            print(
                f"{side} seed {seed}: {THRESHOLD:g} {reached}; "
                f"{outcome.steps_per_second:,.0f} env-steps/s",
                flush=True,
            )
    report["seconds"] = time.perf_counter() - t0
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    for entry in report["sides"].values():
        entry["summary"] = summarise([_outcome(r) for r in entry["runs"]])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "race.json"), "w") as f:
        json.dump(report, f, indent=2)
    table = markdown(report)
    with open(os.path.join(args.out, "race.md"), "w") as f:
        f.write(table)
    print(table)
    return report


def _run_record(seed, o):
    return {
        "seed": seed,
        "solved": o.reached is not None,
        "steps_to_threshold": o.reached[0] if o.reached else None,
        "seconds_to_threshold": round(o.reached[1], 3) if o.reached else None,
        "steps": o.steps,
        "seconds": round(o.seconds, 3),
        "steps_per_second": round(o.steps_per_second, 1),
        "budget": o.budget,
        "update_steps": o.update_steps,
    }


def _outcome(record):
    reached = None
    if record["solved"]:
        reached = (record["steps_to_threshold"], record["seconds_to_threshold"])
    return Outcome(record["steps"], record["seconds"], reached, record["budget"])


if __name__ == "__main__":
    main()
