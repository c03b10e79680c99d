"""T steps in one kernel launch: ``CudaEngine.rollout(T, policy)`` for one-agent games.

Stepping from Python costs a launch and a wait every step; a rollout compiles the policy into
the kernel (``drivers.rollout``), so each thread plays its episode T steps in a row and the host
pays once. The policy is ``"random"`` (each action uniform over its range, drawn from the
episode's own policy stream) or a device function of the observation (``vecenv.cuda.policies``
says its signature) with an array of parameters, as the built-in agents play inside
``DeviceSeats.step(plies)``.

Every step's observation, action, reward and end flags are written to device arrays the returned
``Rollout`` holds (``DeviceArray``s: PyTorch, JAX and CuPy read them through DLPack or the CUDA
array interface, without a copy), and the engine's own buffers end as T calls of ``step`` with
the same actions would leave them. The buffers are the engine's, one set per T, written again by
the next rollout of that length.

A rollout is all or nothing: a policy's action out of range refuses it (every episode put back
as it was before the rollout) and raises ValueError naming the step and the episode.
"""

import types

import numpy as np
from numba import cuda
from numba.core.dispatcher import Dispatcher

from vecenv import memory
from vecenv.spec import is_integer

from . import policies
from .compile import rollout_kernel
from .dlpack import DeviceArray
from .launch import _SIMULATOR, Launch, contiguous_strides, copy_in

ROLLOUT_PARAMS = 7  # the kernel's ``params`` argument (``drivers.rollout``)
_KERNELS = {}  # (game, id(rules), discrete, id(policy)) -> (policy, kernel)


class Rollout:
    """What a rollout of ``steps`` steps wrote, on the device (see the module). For N episodes:

    - ``obs``: {field: (steps + 1, N, ...)}; ``obs[f][t]`` is what step t's action was drawn
      from, ``obs[f][steps]`` the observation after the last step (the engine's ``obs``);
    - ``actions``: (steps, N) + the action's shape, in the kernels' dtype;
    - ``rewards`` (float64), ``terminated``, ``truncated``: (steps, N);
    - ``final_obs``: {field: (steps, N, ...)} under same-step autoreset (the final observation
      of each episode that ended at step t, as ``CudaEngine.final_obs``), else None.
    """

    def __init__(self, engine, steps):
        n = engine.num_envs
        self.steps = steps
        rows, moves = (steps + 1) * n, steps * n
        self._obs = tuple(cuda.device_array((rows,) + o.shape[1:], o.dtype) for o in engine._obs)
        self._actions = cuda.device_array((moves, engine._act_width), engine._act_dtype)
        self._rewards = cuda.device_array((moves, 1), np.float64)
        self._terminated = cuda.device_array(moves, np.bool_)
        self._truncated = cuda.device_array(moves, np.bool_)
        same_step = engine.final_obs is not None
        if same_step:
            self._final = tuple(
                cuda.device_array((moves,) + o.shape[1:], o.dtype) for o in engine._obs
            )
        else:
            self._final = self._obs  # never written: no episode's final observation is kept
        names = [f.name for f in engine.observation]

        def shaped(array, head):
            return DeviceArray(array.reshape(*head, *array.shape[1:]))

        self.obs = {k: shaped(a, (steps + 1, n)) for k, a in zip(names, self._obs, strict=True)}
        self.actions = DeviceArray(self._actions.reshape(steps, n, *engine.action.shape))
        self.rewards = DeviceArray(self._rewards.reshape(steps, n))
        self.terminated = DeviceArray(self._terminated.reshape(steps, n))
        self.truncated = DeviceArray(self._truncated.reshape(steps, n))
        self.final_obs = None
        if same_step:
            self.final_obs = {
                k: shaped(a, (steps, n)) for k, a in zip(names, self._final, strict=True)
            }

    @property
    def buffers(self):
        """The kernel's ``out`` argument."""
        return (
            self._obs, self._actions, self._rewards, self._terminated, self._truncated,
            self._final,
        )  # fmt: skip

    def __repr__(self):
        return f"Rollout(steps={self.steps}, fields={list(self.obs)})"


def _kernel(engine, policy):
    key = (engine.name, id(engine.rules), engine.action.discrete, id(policy))
    found = _KERNELS.get(key)
    if found is None:
        shared = engine._k.shared  # the rules as the engine's other kernels compiled them
        kernel = rollout_kernel(engine.rules, engine.action.discrete, policy, shared)
        found = _KERNELS[key] = (policy, kernel)  # the policy kept: its id stays its own
    return found[1]


def _policy(engine, policy):
    if isinstance(policy, str):
        if policy != "random":
            raise ValueError(f"policy must be 'random' or a device function, got {policy!r}")
        if engine.action.discrete:
            return policies.random_discrete
        low, high = engine._act_low, engine._act_high
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            raise ValueError(f"{engine.name}'s actions are unbounded: no uniform random policy")
        return policies.random_continuous
    if isinstance(policy, (Dispatcher, types.FunctionType)):
        return policy
    raise ValueError(
        "policy must be 'random' or a function policy(obs, row, low, high, params, rng, "
        f"action) (an njit function or one written for the GPU), got {type(policy).__name__}"
    )


def _params(engine, params):
    """``params`` as the kernel takes them: (a device array for the launch's arguments, the
    address to point at or None, its (dtype, shape) key)."""
    if params is None:
        if engine._rollouts.get("no params") is None:
            engine._rollouts["no params"] = cuda.to_device(np.zeros(1, np.float32))
        params = engine._rollouts["no params"]
        return params, None, (np.dtype(np.float32), (1,))
    if hasattr(params, "__cuda_array_interface__") and not _SIMULATOR:
        desc = params.__cuda_array_interface__
        dtype, shape = np.dtype(desc["typestr"]), tuple(desc["shape"])
        strides = desc.get("strides")
        if strides is not None and tuple(strides) != contiguous_strides(shape, dtype.itemsize):
            raise ValueError("a policy's params must be a contiguous array")
        return params, desc["data"][0], (dtype, shape)
    if hasattr(params, "__dlpack__") and not isinstance(params, np.ndarray):
        from .dlpack import import_actions

        params = import_actions(params)
    if hasattr(params, "copy_to_host") or hasattr(params, "__cuda_array_interface__"):
        params = cuda.as_cuda_array(params) if not hasattr(params, "copy_to_host") else params
        if not params.is_c_contiguous():
            raise ValueError("a policy's params must be a contiguous array")
        return params, None, (np.dtype(params.dtype), tuple(params.shape))
    host = np.ascontiguousarray(params)
    if host.dtype.kind not in "biuf":
        raise ValueError(f"a policy's params must be numbers, got dtype {host.dtype}")
    key = ("params", host.dtype.str, host.shape)
    buffer = engine._rollouts.get(key)
    if buffer is None:
        buffer = engine._rollouts[key] = cuda.device_array(host.shape, host.dtype)
    copy_in(buffer, host)
    return buffer, None, (host.dtype, host.shape)


def _check_memory(engine, steps):
    """ValueError, before anything is allocated, where a rollout's buffers would pass the
    engine's memory budget (``vecenv.memory``)."""
    n = engine.num_envs
    obs = sum(o.nbytes // n for o in engine._obs)
    parts = {
        "observations": (steps + 1) * obs,
        "actions": steps * engine._act_width * np.dtype(engine._act_dtype).itemsize,
        "rewards and flags": steps * (8 + 2),
        "final observations": steps * obs if engine.final_obs is not None else 0,
    }
    memory.check(f"{engine.name} rollout({steps})", n, parts, 0, engine._memory_budget)


def rollout(engine, steps, policy="random", params=None):
    """Play ``steps`` steps of every episode of ``engine`` (a one-agent ``CudaEngine``) in one
    kernel launch, actions drawn by ``policy`` ("random", or a device function: see
    ``vecenv.cuda.policies``) from the observations with ``params`` (an array on the host or the
    GPU, or None); returns the ``Rollout`` (see the module)."""
    if engine.num_agents != 1:
        raise ValueError(
            f"{engine.name} is played by {engine.num_agents} agents: rollout runs one-agent "
            "games (DeviceSeats.step(plies) plays the built-in agents of two-agent games)"
        )
    if not is_integer(steps) or not 1 <= steps <= 2**31 - 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    steps = int(steps)
    rows = (steps + 1) * engine.num_envs
    if rows >= 2**62:
        raise ValueError(f"a rollout of {steps} steps of {engine.num_envs} episodes is too large")
    policy = _policy(engine, policy)
    kernel = _kernel(engine, policy)
    array, address, (dtype, shape) = _params(engine, params)
    buffers = engine._rollouts.get(steps)
    if buffers is None:
        _check_memory(engine, steps)
        buffers = engine._rollouts[steps] = Rollout(engine, steps)
    key = ("rollout", steps, id(policy), dtype.str, shape)
    run = engine._launches.get(key)
    if run is None:
        if address is not None:  # the first params of this type: made a numba array once
            array = cuda.as_cuda_array(array)
        run = engine._launches[key] = Launch(
            kernel, *engine._grid,
            (engine._states, engine._cfg, engine._low, engine._high, engine._mode,
             engine._max_steps, engine._policy_rngs, array, steps, engine._obs, engine._rewards,
             engine._terminated, engine._truncated, engine._final_obs, buffers.buffers,
             engine._undo, engine._bad, engine._flag),
            name=f"{engine.name} rollout", on_error=engine._describe,
        )  # fmt: skip
    elif address is not None and run.raw:
        run.point(ROLLOUT_PARAMS, address)
    else:
        run.update(ROLLOUT_PARAMS, cuda.as_cuda_array(array) if address is not None else array)

    def refused(key):
        t, i = divmod(key, engine.num_envs)
        row = buffers._actions[key : key + 1].copy_to_host()[0]
        return engine._bad_row(f"the policy's action of env {i} at step {t}", row)

    engine._finish(run, refused)
    return buffers
