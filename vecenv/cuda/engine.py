"""The engine on a GPU: N episodes of one game, their records and every output in GPU memory.

``CudaEngine`` has the CPU engine's API (``vecenv.make(..., device="cuda")`` makes one): the same
arguments, checks and trajectories, computed by the game's own rules compiled as CUDA code
(``vecenv.cuda.compile``), one thread per episode. Its observations, rewards and end flags are
numba device arrays wrapped as ``vecenv.cuda.dlpack.DeviceArray``: ``__cuda_array_interface__``
and DLPack (``__dlpack__``) hand them to PyTorch (``torch.from_dlpack``, ``torch.as_tensor``), JAX
(``jax.dlpack.from_dlpack``), CuPy or any consumer of either without a copy. Actions may be host
arrays or any CUDA array (PyTorch, CuPy, JAX, numba), through either interface.

An engine pickles and deep-copies mid-episode: its records and buffers travel as host arrays and
go back to the GPU where it loads; the compiled kernels are looked up again, never serialised.

A ``step`` is one kernel launch, its arguments prepared once (``vecenv.cuda.launch``): a CUDA
array of the kernels' action type is read where it lies (its address written into the prepared
arguments), host actions are copied into the engine's own buffer. The kernel checks each
episode's action row before stepping it; a bad one refuses the whole step (every episode put
back, ``drivers.restore``) and raises ValueError naming the first bad episode, as on the CPU.
``rollout(T, policy)`` runs T steps in one launch (``vecenv.cuda.rollout``).
"""

import numpy as np
from numba import cuda

from vecenv import memory, registry
from vecenv.engine import Engine
from vecenv.inputs import AUTORESET_MODES, action_array, check_action_dtype, check_seed, fresh_seed
from vecenv.kernels import rng
from vecenv.kernels.agents import AGENT_RNG, agent_words
from vecenv.kernels.build import _agents_module
from vecenv.kernels.state import SAME_STEP
from vecenv.records import check_loaded_states, copy_records
from vecenv.spec import is_integer

from .compile import describe_error, kernels, simulated_tuple
from .dlpack import DeviceArray, import_actions
from .launch import _SIMULATOR, Launch, contiguous_strides, copy_in, launch, synchronize

THREADS_PER_BLOCK = 128
_KERNELS = {}  # (game, discrete) -> the game's compiled GPU drivers
# The step kernel's arguments that change between calls (see ``drivers.step``).
STEP_ACTIONS, STEP_PLIES = 2, 15
RESET_MASK, RESET_RESEED = 3, 5
NO_BAD = np.iinfo(np.int64).max  # ``bad[0]`` between refusals: above every episode and row


def _game_kernels(name, rules, discrete):
    key = (name, id(rules), discrete)
    if key not in _KERNELS:
        _KERNELS[key] = kernels(rules, _agents_module(rules), discrete)
    return _KERNELS[key]


@cuda.jit
def _cast(src, dst):
    """``dst[i, j] = src[i, j]`` in ``dst``'s dtype (actions of another type or layout)."""
    i = cuda.grid(1)
    if i < dst.shape[0]:
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]


@cuda.jit
def _cast_column(src, dst):
    """``dst[i, 0] = src[i]``: ``_cast`` for (N,) actions of one agent."""
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i, 0] = src[i]


def _on_device(a):
    return hasattr(a, "__cuda_array_interface__")


def _given(a):
    """An array as handed in: a CUDA array (``__cuda_array_interface__``) as numba's device
    array, an object exporting only DLPack as numpy's (host) or numba's (GPU) array, else as
    numpy reads it. Returns ``(array, on_device)``."""
    if _on_device(a):
        return cuda.as_cuda_array(a), True
    if hasattr(a, "__dlpack__") and not isinstance(a, np.ndarray):
        a = import_actions(a)
        return a, not isinstance(a, np.ndarray)
    return np.asarray(a), False


def _wait_for(desc):
    """Order the engine's next kernel after the producer's stream of a CUDA array interface
    (``stream``: None or 1, the legacy default stream, needs nothing)."""
    stream = desc.get("stream")
    if stream not in (None, 1):
        from cuda.bindings import driver

        driver.cuStreamSynchronize(driver.CUstream(int(stream)))


def host_view(array):
    """The host's view of a mapped array (or of the simulator's stand-in for one)."""
    if _SIMULATOR:
        return array._ary
    return np.ndarray.view(array, np.ndarray)


def require_gpu():
    """RuntimeError unless a CUDA GPU (or numba's simulator) is usable here."""
    if not cuda.is_available():
        raise RuntimeError(
            "device='cuda' needs a CUDA GPU and its driver, and none is usable here "
            "(NUMBA_ENABLE_CUDASIM=1, set before numba.cuda is imported, runs numba's "
            "simulator instead)"
        )


class CudaEngine:
    """N parallel episodes of one game on the GPU: the arguments of :class:`vecenv.engine.Engine`
    (``num_threads`` and ``parallel`` are accepted and mean nothing here)."""

    device = "cuda"

    def __init__(
        self,
        game,
        num_envs=1,
        seed=None,
        num_threads=1,
        autoreset="next_step",
        max_episode_steps=None,
        parallel=None,
        memory_budget=None,
        **configuration,
    ):
        memory.check_num_envs(num_envs, is_integer)
        require_gpu()
        # A one-episode CPU engine checks every argument as the CPU engine does, and holds what
        # the host keeps: the spec, the configuration record, the state checks.
        host = Engine(
            game, 1, seed=0, autoreset=autoreset, max_episode_steps=max_episode_steps,
            memory_budget=memory_budget, **configuration,
        )  # fmt: skip
        # The device's arrays (and their host copies) as many as the CPU engine's.
        memory.check(host.name, int(num_envs), host._episode_bytes, 0, memory_budget)
        self._host, self._memory_budget = host, memory_budget
        self.spec, self.name, self.config = host.spec, host.name, host.config
        self.num_envs = n = int(num_envs)
        self.num_threads = 1
        self.num_agents = a = host.num_agents
        self.autoreset = host.autoreset
        self._mode = AUTORESET_MODES[self.autoreset]
        self.max_episode_steps, self._max_steps = host.max_episode_steps, host._max_steps
        self.observation, self.action, self.rules = host.observation, host.action, host.rules
        self.state_dtype = host.state_dtype
        self._act_width, self._act_dtype = host._act_width, host._act_dtype
        self._act_low, self._act_high = host._act_low, host._act_high
        self._flat_shape = (n, self._act_width)
        self._act_shapes = (
            (n, a) + self.action.shape,
            (n,) + self.action.shape if a == 1 else None,
        )
        self._k = _game_kernels(self.name, self.rules, self.action.discrete)
        self._grid = ((n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, min(n, THREADS_PER_BLOCK))

        self._states = cuda.to_device(np.zeros(n, dtype=self.state_dtype))
        self._cfg = cuda.to_device(host._cfg)
        self._obs = tuple(
            cuda.to_device(np.zeros(self._obs_shape(f), f.dtype)) for f in host.observation
        )
        self.obs = {
            f.name: DeviceArray(v) for f, v in zip(self.observation, self._obs, strict=True)
        }
        if self._mode == SAME_STEP:
            self._final_obs = tuple(cuda.to_device(np.zeros(v.shape, v.dtype)) for v in self._obs)
            self.final_obs = {
                f.name: DeviceArray(v)
                for f, v in zip(self.observation, self._final_obs, strict=True)
            }
        else:
            self.final_obs = None
            self._final_obs = self._obs
        self._rewards = cuda.to_device(np.zeros((n, a), dtype=np.float64))
        self._terminated = cuda.to_device(np.zeros(n, dtype=np.bool_))
        self._truncated = cuda.to_device(np.zeros(n, dtype=np.bool_))
        self._out = tuple(map(DeviceArray, (self._rewards, self._terminated, self._truncated)))
        self._low = cuda.to_device(self._act_low)
        self._high = cuda.to_device(self._act_high)
        self._flat = cuda.to_device(np.zeros(self._flat_shape, dtype=self._act_dtype))
        # What a step overwrites, kept by each thread for a refused step (``drivers.restore``).
        self._undo = simulated_tuple(
            (
                cuda.to_device(np.zeros(n, dtype=self.state_dtype)),
                cuda.to_device(np.zeros((n, a), dtype=np.float64)),
                cuda.to_device(np.zeros((n, 2), dtype=np.bool_)),
            )
        )
        self._bad = cuda.to_device(np.array([NO_BAD], dtype=np.int64))
        # Set by a thread that refuses its action: host memory the GPU writes, read after each
        # launch without a copy.
        self._flag = cuda.mapped_array(1, dtype=np.int32)
        self._flag_host = host_view(self._flag)
        self._flag_host[0] = 0
        self._mask = cuda.to_device(np.ones(n, dtype=np.bool_))  # host masks land here
        self._all = cuda.to_device(np.ones(n, dtype=np.bool_))
        # What the plain step is handed for the agents' arrays, which it never reads.
        self._no_agents = simulated_tuple(
            (
                cuda.to_device(np.full((1, 2), -1, dtype=np.int64)),
                cuda.to_device(np.zeros((1, 2, 1), dtype=np.int64)),
                cuda.to_device(np.zeros((1, 2), dtype=AGENT_RNG)),
                cuda.to_device(np.zeros((1, 2), dtype=np.float64)),
                cuda.to_device(np.zeros(1, dtype=np.int64)),
            )
        )
        self._words = np.zeros(n, dtype=np.uint64)  # host: the agents' streams derive from them
        self._words_dev = cuda.to_device(self._words)
        # The streams of ``rollout``'s policies, one an episode (the agent of seat 0's).
        self._policy_rngs = cuda.to_device(np.zeros(n, dtype=AGENT_RNG))
        self._launches = {}
        self._rollouts = {}
        self._given_actions = self._flat
        self.seed = fresh_seed() if seed is None else check_seed(seed)
        self.reset(seed=self.seed)

    def _obs_shape(self, field):
        head = (self.num_envs,) if field.shared else (self.num_envs, self.num_agents)
        return head + field.shape

    def _describe(self, exc):
        """numba-cuda's compile error as an ``UnsupportedConstruct`` naming this game."""
        return describe_error(self.name, exc)

    def _prepared(self, key, kernel, args):
        """The ``Launch`` of ``kernel`` over every episode with ``args``, made once per ``key``."""
        run = self._launches.get(key)
        if run is None:
            run = self._launches[key] = Launch(
                kernel, *self._grid, args, name=f"{self.name} {key}", on_error=self._describe
            )
        return run

    def _launch(self, kernel, *args):
        """An occasional launch over every episode (set_state's observe, a refusal's restore)."""
        try:
            launch(kernel, *self._grid, *args)
        except Exception as exc:
            if type(exc).__module__.startswith("numba") and "pipeline" in str(exc):
                raise describe_error(self.name, exc) from None
            raise

    # -- episodes ------------------------------------------------------------------------------

    def _mask_array(self, mask):
        if mask is None:
            return self._all
        m, on_device = _given(mask)
        if m.dtype != np.bool_ or m.shape != (self.num_envs,):
            raise ValueError(
                f"mask must be a bool array of shape ({self.num_envs},), "
                f"got {m.dtype} of shape {m.shape}"
            )
        if on_device and m.is_c_contiguous():
            return m
        copy_in(self._mask, m.copy_to_host() if on_device else np.ascontiguousarray(m))
        return self._mask

    def reset(self, seed=None, mask=None, position=None):
        """Start new episodes (all, or where ``mask``: a bool array on the host or the GPU) and
        return the observation buffers, as ``Engine.reset`` (starting positions excepted)."""
        if position is not None:
            raise ValueError("starting positions are set on the CPU engine (device='cpu')")
        mask = self._mask_array(mask)
        reseed = seed is not None
        if reseed:
            chosen = np.ones(self.num_envs, np.bool_)
            if is_integer(seed):
                self.seed = check_seed(seed)
                rng.seed_words(np.uint64(self.seed), self._words, chosen)
            else:
                seeds = list(seed)
                if len(seeds) != self.num_envs:
                    raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
                seeds = [check_seed(s) for s in seeds]
                for i, s in enumerate(seeds):
                    self._words[i] = rng.seed_word(np.uint64(s), np.uint64(0))
            copy_in(self._words_dev, self._words)
            self._reseed_policies(mask)
        run = self._prepared(
            "reset", self._k.reset,
            (self._states, self._cfg, self._obs, self._all, self._words_dev, False,
             self._rewards, self._terminated, self._truncated),
        )  # fmt: skip
        run.update(RESET_MASK, mask)
        run.update(RESET_RESEED, reseed)
        run()
        return self.obs

    def _reseed_policies(self, mask):
        """The policies' streams of the reseeded episodes restart from their new words."""
        where = np.ones(self.num_envs, np.bool_) if mask is self._all else None
        if where is None:
            synchronize()
            where = mask.copy_to_host()
        words = np.zeros((self.num_envs, 1), dtype=np.uint64)
        agent_words(self._words, words, where)
        rngs = self._policy_rngs.copy_to_host()
        rngs["rng"][where] = words[where, 0]
        copy_in(self._policy_rngs, rngs)

    def _actions(self, actions):
        """``actions`` as the (N, agents * width) device array of the kernels' one type."""
        if isinstance(actions, np.ndarray):
            actions = action_array(self.name, actions)  # a masked array refused, not unmasked
        a, on_device = _given(actions)
        check_action_dtype(self.name, self.action.discrete, a.dtype)
        if a.shape not in self._act_shapes:
            shapes = " or ".join(str(s) for s in self._act_shapes if s is not None)
            raise ValueError(f"{self.name} actions must have shape {shapes}, got {a.shape}")
        if not on_device:
            if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
                raise ValueError(f"action too large: {a.max()}")
            flat = np.require(a, dtype=self._act_dtype, requirements="CA")
            copy_in(self._flat, flat.reshape(self._flat_shape))
            return self._flat
        if a.dtype == self._act_dtype and a.is_c_contiguous():
            return a.reshape(*self._flat_shape)  # a view: no copy
        # Unsigned words past int64 wrap negative here, where the range check refuses them.
        if a.is_c_contiguous():
            self._launch(_cast, a.reshape(*self._flat_shape), self._flat)
        elif a.ndim == 1:
            self._launch(_cast_column, a, self._flat)
        elif a.ndim == 2:
            self._launch(_cast, a, self._flat)
        else:
            raise ValueError(f"{self.name} actions of {a.ndim} dimensions must be contiguous")
        return self._flat

    def _address(self, desc):
        """The address of CUDA actions (their CUDA array interface ``desc``) the kernel can read
        where they lie (the kernels' dtype, contiguous), after the shape check; None for any
        other (then ``_actions`` checks, casts or copies them). No array object is made."""
        dtype, shape = np.dtype(desc["typestr"]), tuple(desc["shape"])
        if dtype != self._act_dtype or desc.get("mask") is not None:
            return None
        if shape not in self._act_shapes:
            shapes = " or ".join(str(s) for s in self._act_shapes if s is not None)
            raise ValueError(f"{self.name} actions must have shape {shapes}, got {shape}")
        strides = desc.get("strides")
        if strides is not None and tuple(strides) != contiguous_strides(shape, dtype.itemsize):
            return None
        _wait_for(desc)
        return desc["data"][0]

    def _point(self, run, index, actions):
        """Argument ``index`` of ``run`` reads ``actions`` (checked, cast or copied as needed)."""
        desc = getattr(actions, "__cuda_array_interface__", None) if run.raw else None
        if desc is not None:  # read once: a PyTorch tensor builds it anew every time
            address = self._address(desc)
            if address is not None:
                run.point(index, address)
                self._given_actions = actions
                return
        flat = self._actions(actions)
        run.update(index, flat)
        self._given_actions = flat

    def step(self, actions):
        """Advance every episode by one step, as ``Engine.step``; ``actions`` may live on the host
        or the GPU. Returns ``(obs, rewards, terminated, truncated)`` (device buffers)."""
        run = self._prepared(
            "step", self._k.step,
            (self._states, self._cfg, self._flat, self._low, self._high, self._rewards,
             self._terminated, self._truncated, self._obs, self._final_obs, self._mode,
             self._max_steps, self._undo, self._bad, self._flag, 1, self._no_agents),
        )  # fmt: skip
        self._point(run, STEP_ACTIONS, actions)
        return self._finish(run, self._refused_step)

    def _seats_launch(self, seats):
        """The step with the built-in agents of ``seats`` (a ``DeviceSeats``)."""
        return Launch(
            self._k.step_agents, *self._grid,
            (self._states, self._cfg, seats.actions, self._low, self._high, self._rewards,
             self._terminated, self._truncated, self._obs, self._final_obs, self._mode,
             self._max_steps, self._undo, self._bad, self._flag, 1,
             simulated_tuple((seats.kinds, seats.memory, seats.rngs, seats.returns, seats.ends))),
            name=f"{self.name} step_agents", on_error=self._describe,
        )  # fmt: skip

    def _finish(self, run, refused):
        """Launch ``run``, wait for it, and if a thread refused its action, put every episode
        back and raise ``refused(first bad key)``'s ValueError."""
        run()
        synchronize()
        if self._flag_host[0]:
            bad = int(self._bad.copy_to_host()[0])
            copy_in(self._bad, np.array([NO_BAD], dtype=np.int64))
            self._flag_host[0] = 0
            self._launch(
                self._k.restore, self._states, self._cfg, self._obs, self._rewards,
                self._terminated, self._truncated, self._undo,
            )  # fmt: skip
            synchronize()
            raise refused(bad)
        return (self.obs, *self._out)

    def _refused_step(self, bad):
        given = self._given_actions
        if not hasattr(given, "copy_to_host"):
            given = cuda.as_cuda_array(given)
        row = given.reshape(*self._flat_shape)[bad : bad + 1].copy_to_host()[0]
        return self._bad_row(f"action of env {bad}", row)

    def _bad_row(self, what, row):
        if self.action.discrete:
            allowed = f"[{self._act_low.min()}, {self._act_high.max()}]"
            return ValueError(f"{what} is out of range {allowed}: {row.tolist()}")
        return ValueError(f"{what} is not a finite float32: {row.tolist()}")

    def rollout(self, steps, policy="random", params=None):
        """``steps`` steps of every episode in one kernel launch, each action drawn on the GPU by
        ``policy`` ("random", or a device function of the observation); returns the rollout's
        device buffers. See :func:`vecenv.cuda.rollout.rollout`."""
        from .rollout import rollout

        return rollout(self, steps, policy, params)

    # -- state ---------------------------------------------------------------------------------

    def get_state(self, idx=None):
        """A host copy of the state records: all, one (``idx`` an int) or a selection."""
        where = np.arange(self.num_envs) if idx is None else np.arange(self.num_envs)[idx]
        return copy_records(self._states.copy_to_host(), where)  # padding zeroed

    def set_state(self, state, idx=None):
        """Overwrite the records at ``idx`` (all by default) with host records, after the CPU
        engine's checks: a bad state raises ValueError and leaves every episode unchanged."""
        where = np.arange(self.num_envs) if idx is None else np.arange(self.num_envs)[idx]
        state = np.asarray(state)
        if state.dtype != self.state_dtype:
            raise ValueError(
                f"state must have the dtype of get_state() ({self.state_dtype}), got {state.dtype}"
            )
        if state.shape != where.shape:
            raise ValueError(f"state must have shape {where.shape}, got {state.shape}")
        self._host.check_state(state)
        states = self._states.copy_to_host()
        states[where] = state
        self._states.copy_to_device(states)
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[where] = True
        self._launch(self._k.observe, self._states, self._cfg, self._obs, cuda.to_device(mask))
        flat = np.atleast_1d(state)
        for buffer, values in (
            (self._rewards, 0.0),
            (self._terminated, (flat["done"] & 1) != 0),
            (self._truncated, (flat["done"] & 2) != 0),
        ):
            host = buffer.copy_to_host()
            host[np.atleast_1d(where)] = values if np.ndim(values) == 0 else values.reshape(-1)
            buffer.copy_to_device(host)

    def check_state(self, state):
        """Raise ValueError unless every record in ``state`` is one the rules can run."""
        self._host.check_state(state)

    @property
    def states(self):
        """The state records (a device array: read them, change them only through set_state)."""
        return self._states

    @property
    def rewards(self):
        return self._out[0]

    @property
    def terminated(self):
        return self._out[1]

    @property
    def truncated(self):
        return self._out[2]

    def render(self, index=0, mode="rgb_array"):
        """Render episode ``index`` (its record copied to the host), as ``Engine.render``."""
        self._host.set_state(self.get_state(index).reshape(1), None)
        return self._host.render(0, mode)

    def synchronize(self):
        """Wait for every kernel queued so far."""
        synchronize()

    # -- pickling ------------------------------------------------------------------------------

    _PICKLED = (
        "_states", "_obs", "_final_obs", "_rewards", "_terminated", "_truncated", "_policy_rngs",
    )  # fmt: skip

    def __getstate__(self):
        """``Engine.__getstate__``'s state with every device buffer copied to the host."""
        game = registry.get_game(self.name)
        arrays = {"_words": self._words.copy(), "_final_obs": None}
        for name in self._PICKLED:
            if name == "_final_obs" and self._mode != SAME_STEP:
                continue  # the observation buffers themselves
            buf = getattr(self, name)
            arrays[name] = (
                tuple(b.copy_to_host() for b in buf)
                if isinstance(buf, tuple)
                else buf.copy_to_host()
            )
        return {
            "game": self.name,
            "folder": str(game.folder) if game.origin == "registered" else None,
            "identity": registry.identity(self.name),
            "num_envs": self.num_envs,
            "autoreset": self.autoreset,
            "max_episode_steps": self.max_episode_steps or 0,
            "configuration": dict(self.config),
            "seed": self.seed,
            "arrays": arrays,
        }

    def __setstate__(self, state):
        registry.check_identity(state["game"], state["folder"], state.get("identity"))
        self.__init__(
            state["game"],
            num_envs=state["num_envs"],
            seed=state["seed"],
            autoreset=state["autoreset"],
            max_episode_steps=state["max_episode_steps"],
            **state["configuration"],
        )
        check_loaded_states(
            self._host.check_state, state["arrays"]["_states"], self.state_dtype, self.num_envs
        )
        for name, saved in state["arrays"].items():
            if saved is None:
                continue
            mine = getattr(self, name)
            if isinstance(mine, tuple) != isinstance(saved, tuple) or (
                isinstance(mine, tuple) and len(mine) != len(saved)
            ):
                raise ValueError(f"a pickled engine's {name} does not fit this game")
            pairs = zip(mine, saved, strict=True) if isinstance(mine, tuple) else [(mine, saved)]
            for dst, src in pairs:
                if dst.shape != src.shape or dst.dtype != src.dtype:
                    raise ValueError(f"a pickled engine's {name} does not fit this game")
                if isinstance(dst, np.ndarray):
                    np.copyto(dst, src)
                else:
                    dst.copy_to_device(np.ascontiguousarray(src))
        self._words_dev.copy_to_device(self._words)

    def __repr__(self):
        return f"CudaEngine({self.name!r}, num_envs={self.num_envs}, autoreset={self.autoreset!r})"
