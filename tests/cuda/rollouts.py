"""Checks of one launch a step and of ``CudaEngine.rollout``, on the simulator or a GPU.

Run by ``tests.cuda.simulated`` (every one-agent game on numba's CUDA simulator) and by
``test_gpu.py`` on a real GPU, as ``sidebyside``'s checks are.
"""

import numba
import numpy as np
from numba import cuda

import vecenv
from vecenv.cuda import launch

from .sidebyside import _exact, host, random_actions, same


def _compare_step(rollout, cpu, t, exactly, what):
    same(cpu.rewards[:, 0], rollout.rewards[t], exactly, f"{what} rewards {t}")
    same(cpu.terminated, rollout.terminated[t], True, f"{what} terminated {t}")
    same(cpu.truncated, rollout.truncated[t], True, f"{what} truncated {t}")
    if rollout.final_obs is not None:
        ended = cpu.terminated | cpu.truncated
        for name, final in rollout.final_obs.items():
            got = host(final[t])[ended]
            same(cpu.final_obs[name][ended], got, exactly, f"{what} final {name} {t}")


def rollout_matches_steps(game, num_envs=3, steps=6, seed=3, autoreset="next_step", calls=2):
    """A rollout of T steps is T calls of ``step`` with its actions: every step's observation
    (before and after), reward and end flags, the final observations, and the engine's buffers
    and records after it; the next rollout continues from there (its streams too)."""
    gpu = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset, device="cuda")
    cpu = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset)
    exactly = _exact(cpu)
    what = f"{game} rollout ({autoreset})"
    seen = []
    for _ in range(calls):
        rollout = gpu.rollout(steps)
        actions = host(rollout.actions)
        seen.append(actions)
        assert actions.shape == (steps, num_envs) + cpu.action.shape, actions.shape
        low, high = cpu.action.low, cpu.action.high
        assert (actions >= low).all() and (actions <= high).all(), f"{what}: random actions"
        for t in range(steps):
            for name, obs in rollout.obs.items():
                same(cpu.obs[name], obs[t], exactly, f"{what} obs {name} {t}")
            cpu.step(actions[t])
            _compare_step(rollout, cpu, t, exactly, what)
        for name, obs in rollout.obs.items():
            same(cpu.obs[name], obs[steps], exactly, f"{what} last obs {name}")
            same(cpu.obs[name], gpu.obs[name], exactly, f"{what} engine obs {name}")
        same(cpu.rewards, gpu.rewards, exactly, f"{what} engine rewards")
        same(cpu.terminated, gpu.terminated, True, f"{what} engine terminated")
        same(cpu.truncated, gpu.truncated, True, f"{what} engine truncated")
        if cpu.final_obs is not None:
            ended = cpu.terminated | cpu.truncated
            for name in cpu.final_obs:
                got = host(gpu.final_obs[name])[ended]
                same(cpu.final_obs[name][ended], got, exactly, f"{what} engine final {name}")
        if exactly:
            assert (cpu.get_state() == gpu.get_state()).all(), f"{what}: records"
    if calls > 1:
        assert not all((a == seen[0]).all() for a in seen[1:]), f"{what}: the policy's streams"
    # The same seed draws the same actions again; a rollout after a plain step continues.
    again = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset, device="cuda")
    np.testing.assert_array_equal(host(again.rollout(steps).actions), seen[0])


def one_launch(game, num_envs=3, seed=5):
    """A step is one kernel launch, whatever hands the actions over (host, device, a cast
    dtype aside); ``DeviceSeats.step(plies)`` and ``rollout(T)`` one launch each."""
    gpu = vecenv.make(game, num_envs, seed=seed, device="cuda")
    rng = np.random.default_rng(seed)
    actions = random_actions(gpu, rng).astype(gpu._act_dtype)
    gpu.step(actions)  # compiles (one launch too)
    for given in (actions, cuda.to_device(actions), cuda.to_device(actions.reshape(num_envs, -1))):
        before = launch.launches()
        gpu.step(given)
        assert launch.launches() - before == 1, (game, launch.launches() - before)
    if gpu.num_agents == 1:
        before = launch.launches()
        gpu.rollout(4)
        assert launch.launches() - before == 1, (game, "rollout")
    else:
        from vecenv.cuda.selfplay import DeviceSeats

        gpu = vecenv.make(game, num_envs, seed=seed, device="cuda", autoreset="same_step")
        seats = DeviceSeats(gpu)
        seats.assign("random", np.zeros(num_envs, dtype=np.int64))
        seats.assign("random", np.ones(num_envs, dtype=np.int64))
        seats.step(3)
        before = launch.launches()
        seats.step(3)
        assert launch.launches() - before == 1, (game, "DeviceSeats.step")


@numba.njit
def lean(obs, row, low, high, params, r, action):
    """A CartPole policy of the pole's angle: push the way it leans, past ``params[0]``."""
    action[0] = 1 if obs[0][row, 0, 2] > params[0] else 0


@numba.njit
def lean_cpu(obs, threshold):
    return (obs[:, 0, 2] > threshold).astype(np.int64)


@numba.njit
def broken(obs, row, low, high, params, r, action):
    """A policy that goes wrong in one episode at one step: ``params`` = (episode, step, N)."""
    action[0] = 7 if row == np.int64(params[1]) * np.int64(params[2]) + np.int64(params[0]) else 0


def rollout_policy(num_envs=4, steps=8, seed=6):
    """A device function of the observation as the policy, its parameters on the host or the
    device: the CPU engine stepped with the same rule agrees; a policy's bad action refuses the
    whole rollout (ValueError naming the step and the episode, every episode as before)."""
    gpu = vecenv.make("cartpole", num_envs, seed=seed, device="cuda")
    cpu = vecenv.make("cartpole", num_envs, seed=seed)
    exactly = _exact(cpu)  # on a GPU CartPole's last bits differ: its records are compared near
    for params in (np.array([0.0], np.float32), cuda.to_device(np.array([0.01], np.float32))):
        threshold = host(params)[0]
        rollout = gpu.rollout(steps, policy=lean, params=params)
        for t in range(steps):
            want = lean_cpu(cpu.obs["obs"], threshold)
            np.testing.assert_array_equal(host(rollout.actions)[t], want)
            cpu.step(want)
        same(cpu.obs["obs"], gpu.obs["obs"], exactly, "policy rollout obs")
        if exactly:
            assert (cpu.get_state() == gpu.get_state()).all()
    before = gpu.get_state()
    obs_before = host(gpu.obs["obs"]).copy()
    try:
        gpu.rollout(5, policy=broken, params=np.array([2, 3, num_envs], np.float64))
    except ValueError as exc:
        assert "env 2 at step 3" in str(exc), str(exc)
    else:
        raise AssertionError("a policy's bad action was taken")
    assert (gpu.get_state() == before).all(), "a refused rollout moved episodes"
    np.testing.assert_array_equal(host(gpu.obs["obs"]), obs_before)
    for wrong, message in (("greedy", "policy"), (3, "policy")):
        try:
            gpu.rollout(2, policy=wrong)
        except ValueError as exc:
            assert message in str(exc)
        else:
            raise AssertionError(f"policy {wrong!r} taken")
    for steps_given in (0, -1, 1.5, True):
        try:
            gpu.rollout(steps_given)
        except ValueError:
            pass
        else:
            raise AssertionError(f"steps {steps_given!r} taken")
    try:
        gpu.rollout(10**9)
    except ValueError as exc:
        assert "memory budget" in str(exc), str(exc)
    else:
        raise AssertionError("a rollout past the memory budget was allocated")
    try:
        vecenv.make("connectx", 2, device="cuda").rollout(2)
    except ValueError as exc:
        assert "one-agent" in str(exc)
    else:
        raise AssertionError("a two-agent game's rollout ran")


def rollout_dlpack(num_envs=3, steps=4, seed=8):
    """The rollout's buffers go to a consumer through DLPack in place (the simulator's host
    memory to numpy here; a GPU's to PyTorch in ``test_gpu.py``), shaped (T[+1], N, ...)."""
    gpu = vecenv.make("cartpole", num_envs, seed=seed, device="cuda")
    rollout = gpu.rollout(steps)
    arrays = {
        "obs": rollout.obs["obs"],
        "actions": rollout.actions,
        "rewards": rollout.rewards,
        "terminated": rollout.terminated,
        "truncated": rollout.truncated,
    }
    shapes = {
        "obs": (steps + 1, num_envs, 1, 4),
        "actions": (steps, num_envs),
        "rewards": (steps, num_envs),
        "terminated": (steps, num_envs),
        "truncated": (steps, num_envs),
    }
    taken = {name: np.from_dlpack(a) for name, a in arrays.items()}
    for name, x in taken.items():
        assert x.shape == shapes[name], (name, x.shape)
        np.testing.assert_array_equal(x, host(arrays[name]), err_msg=name)
    gpu.rollout(steps)  # the same buffers, written again: the consumer sees the new values
    for name, x in taken.items():
        np.testing.assert_array_equal(x, host(arrays[name]), err_msg=f"{name} again")
