"""The engine: N episodes of one game, stepped by one compiled call.

It owns the state records (a numpy structured array), the output buffers and the seed, validates
everything that comes in before a kernel sees it, and exposes a lean array API. Faces translate
their interfaces onto this object; it knows nothing about them.

Buffers are reused between calls: ``step`` and ``reset`` return views of them, valid until the next
call. Copy what you keep (the faces do, where their interface promises fresh arrays).
"""

import time

import numba
import numpy as np

from vecenv.kernels import build, rng
from vecenv.kernels import precision as _precision
from vecenv.kernels.state import (
    HEADER,
    HEADER_NAMES,
    HELD,
    SAME_STEP,
    state_dtype,
)

from . import memory, positions, registry
from . import threads as threads_policy
from .dispatch import compiling, entry_point
from .inputs import (
    AUTORESET_MODES,
    action_array,
    autoreset_mode,
    check_action_dtype,
    check_seed,
    fresh_seed,
)
from .records import check_loaded_states, copy_records
from .spec import is_integer

# How many threads a step uses is ``vecenv.threads``' concern (never below PARALLEL_MIN_ENVS).
PARALLEL_MIN_ENVS = threads_policy.PARALLEL_MIN_ENVS
NO_TIME_LIMIT = np.iinfo(np.int64).max


def _read_only_views(fields, arrays):
    views = {}
    for f, arr in zip(fields, arrays, strict=True):
        view = arr.view()
        view.flags.writeable = False
        views[f.name] = view
    return views


class Engine:
    """N parallel episodes of one game.

    Args:
        game: a game's folder name or Gymnasium id (``"cartpole"``, ``"CartPole-v1"``).
        num_envs: the number of episodes N.
        seed: the seed of every stream (episode i draws from the stream of ``(seed, i)``);
            None draws one from the operating system.
        num_threads: threads for large batches (N >= 1024); results never depend on it.
        autoreset: ``"next_step"`` (default), ``"same_step"`` or ``"disabled"``, as gymnasium's
            AutoresetMode.
        parallel: with ``num_threads > 1``, whether steps run the threaded loop: None (default)
            times both loops and keeps the faster (``vecenv.threads``), True and False force it.
        max_episode_steps: the time limit; None takes the game's ``episodeSteps`` configuration,
            0 means none.
        memory_budget: the most bytes the engine's arrays may take (bytes or a string such as
            ``"16G"``); None takes ``VECENV_MEMORY_BUDGET`` or the default (see
            ``vecenv.memory``). A make over it raises ValueError before allocating.
        precision: ``"float64"`` (default: the rules as written, exact to their reference) or
            ``"float32"``: a game that declares ``PRECISION`` runs its rules compiled with
            float32 state and arithmetic (docs/precision.md); other games ignore it.
        **configuration: the game's configuration (see its specification).
    """

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
        precision="float64",
        **configuration,
    ):
        self.spec = registry.get_spec(game)
        self.name = self.spec.name
        self.precision = _precision.check(precision)
        memory.check_num_envs(num_envs, is_integer)
        max_threads = numba.config.NUMBA_NUM_THREADS
        if not is_integer(num_threads) or not 1 <= num_threads <= max_threads:
            raise ValueError(
                f"num_threads must be an integer in [1, {max_threads}], got {num_threads!r}"
            )
        self.num_envs = int(num_envs)
        self.num_threads = int(num_threads)
        self.num_agents = self.spec.num_agents
        self.autoreset = autoreset_mode(autoreset)
        self._mode = AUTORESET_MODES[self.autoreset]

        self.config = self.spec.resolve_configuration(configuration)
        self._cfg = self.spec.config_record(self.config)
        if max_episode_steps is None:
            limit = self.config.get("episodeSteps", 0)
        elif is_integer(max_episode_steps) and max_episode_steps >= 0:
            limit = int(max_episode_steps)
        else:
            raise ValueError(
                "max_episode_steps must be a non-negative integer or None, "
                f"got {max_episode_steps!r}"
            )
        self.max_episode_steps = limit or None
        self._max_steps = limit or NO_TIME_LIMIT

        self.observation = self.spec.observation_fields(self.config)
        self.action = self.spec.action_spec(self.config)
        rules = registry.rules(self.name)
        # FIELDS is a list, or a function of the configuration for games whose state size depends
        # on it (a board of rows x columns); numba compiles one loop per resulting record type.
        fields = rules.FIELDS(self.config) if callable(rules.FIELDS) else rules.FIELDS
        # The drivers bound to the rules as written, or to their float32 copy (``game_rules``).
        try:
            if self.precision != _precision.DEFAULT:
                _precision.check_declaration(rules, fields, self._cfg)
            self._drivers = build.load_drivers(
                self.name, rules, self.action.discrete, precision_name=self.precision
            )
        except ValueError as e:  # a declaration the copy cannot follow
            raise registry.GameError(f"{self.name}: {e}") from None
        self.rules = self._drivers.game_rules
        if self.rules is not rules:
            fields = _precision.narrow_fields(fields, _precision.declared(rules))
            self._cfg = _precision.narrow_record(self._cfg, _precision.declared(rules))
        # Every size is known: refuse what would not fit the memory budget before allocating.
        self.memory_budget = memory_budget
        self._episode_bytes = self._bytes_per_episode(fields)
        memory.check(self.name, self.num_envs, self._episode_bytes, 0, memory_budget)
        self.state_dtype = state_dtype(fields)
        self._bounds = getattr(self.rules, "STATE_BOUNDS", {})

        n, a = self.num_envs, self.num_agents
        self._states = np.zeros(n, dtype=self.state_dtype)
        # The kernels write the observation arrays; the public dicts hold read-only views of them,
        # as a game may update only what its step changed (``observe_step``).
        self._obs = tuple(np.zeros(self._obs_shape(f), dtype=f.dtype) for f in self.observation)
        self.obs = _read_only_views(self.observation, self._obs)
        if self._mode == SAME_STEP:
            self._final_obs = tuple(np.zeros_like(v) for v in self._obs)
            self.final_obs = _read_only_views(self.observation, self._final_obs)
        else:
            self.final_obs = None
            self._final_obs = self._obs  # never written outside same-step mode
        # The kernels write these; they stay private (read through properties) so that nothing can
        # swap in an array of another type behind the compiled call's back.
        self._rewards = np.zeros((n, a), dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._fast_steps = {}  # the compiled serial step's entry point, by variant
        if parallel not in (None, True, False):
            raise ValueError(f"parallel must be None, True or False, got {parallel!r}")
        self.threads = threads_policy.Threads(self.num_threads, self.num_envs, parallel)
        # The serial step by address (``_bind_own``), for one agent and one observation field:
        # compiled on the first step; ``_direct`` is it where every step is serial (``step``
        # then calls it first), else None.
        one = a == 1 and len(self._obs) == 1 and not self.observation[0].shared
        self._own_ndim = 1 + len(self.action.shape) if one else None
        self._own_shape = (n,) + self.action.shape
        self._own = self._direct = self._own_head = None
        self._result = (self.obs, self._rewards, self._terminated, self._truncated)

        action = self.action
        self._act_width = a * action.width
        self._act_dtype = action.kernel_dtype
        # Bounds in the actions' own dtype: discrete ones compare as integers, exactly and fast.
        self._act_low = np.tile(action.low, a).astype(self._act_dtype)
        self._act_high = np.tile(action.high, a).astype(self._act_dtype)
        self._flat_shape = (n, self._act_width)
        self._act_shapes = ((n, a) + action.shape, (n,) + action.shape if a == 1 else None)
        self._all = np.ones(n, dtype=np.bool_)
        self._words = np.zeros(n, dtype=np.uint64)
        # Episode i draws from the stream of episode ``first_episode + i`` of the seed: an engine
        # that plays a slice of a larger batch (``vecenv.ray``) sets it before a seeded reset.
        self.first_episode = 0
        self.seed = fresh_seed() if seed is None else check_seed(seed)
        self.reset(seed=self.seed)

    def _bytes_per_episode(self, fields):
        """What one episode's arrays take, by part (see ``vecenv.memory``)."""
        a, width = self.num_agents, self.action.width
        obs = memory.observation_bytes(self.observation, a)
        return {
            "state": memory.field_bytes(HEADER + list(fields)),
            "observations": obs * (2 if self._mode == SAME_STEP else 1),
            # rewards, flags, the random words, a face's copy of the actions
            "buffers": 8 * a + 3 + 8 + 8 * a * width,
        }

    def _obs_shape(self, field):
        head = (self.num_envs,) if field.shared else (self.num_envs, self.num_agents)
        return head + field.shape

    # -- episodes ------------------------------------------------------------------------------

    def _mask(self, mask):
        if mask is None:
            return self._all
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (self.num_envs,):
            raise ValueError(
                f"mask must be a bool array of shape ({self.num_envs},), "
                f"got {m.dtype} of shape {m.shape}"
            )
        return m

    def reset(self, seed=None, mask=None, position=None):
        """Start new episodes (all, or where ``mask``) and return the observation buffers.

        ``seed`` restarts the streams: an int gives episode i the stream of ``(seed, i)``; a
        sequence of N ints gives episode i the stream a single env seeded ``seed[i]`` would have.
        Without it every episode continues its own stream.

        ``position`` starts them from a given position instead of the game's start (games whose
        rules have a ``position`` hook; see ``vecenv.positions``): one dict for every episode
        reset, or a list of dicts, one per episode reset in index order. A position the rules
        cannot represent raises ``PositionError`` (a ValueError) before any episode changes.
        """
        mask = self._mask(mask)
        placed = None
        if position is not None:
            placed = positions.records(self, position, int(np.count_nonzero(mask)))
        reseed = seed is not None
        if reseed:
            if is_integer(seed):
                self.seed = check_seed(seed)
                first = np.uint64(self.first_episode)
                rng.seed_words(np.uint64(self.seed), self._words, mask, first)
            else:
                seeds = list(seed)
                if len(seeds) != self.num_envs:
                    raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
                seeds = [check_seed(s) for s in seeds]
                for i, s in enumerate(seeds):
                    self._words[i] = rng.seed_word(np.uint64(s), np.uint64(0))
        with compiling(self.name):
            self._drivers.reset(self._states, self._cfg, self._obs, mask, self._words, reseed)
        if placed is not None:
            # The header stays the reset's (the stream continued or reseeded, not done), but for
            # the steps the position says were taken.
            where = np.flatnonzero(mask)
            for name in self.state_dtype.names:
                if name not in HEADER_NAMES or name == "step":
                    self._states[name][where] = placed[name]
            self._drivers.observe(self._states, self._cfg, self._obs, mask)
        self._rewards[mask] = 0.0
        self._terminated[mask] = False
        self._truncated[mask] = False
        return self.obs

    def _actions(self, actions):
        """``actions`` as the (N, agents * width) array of the one type the kernels take."""
        a = actions if type(actions) is np.ndarray else action_array(self.name, actions)
        if a.shape in self._act_shapes and self._canonical(a):
            return a.reshape(self._flat_shape)  # a view: the common case costs no copy
        check_action_dtype(self.name, self.action.discrete, a.dtype)
        if a.shape not in self._act_shapes:
            shapes = " or ".join(str(s) for s in self._act_shapes if s is not None)
            raise ValueError(f"{self.name} actions must have shape {shapes}, got {a.shape}")
        if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"action too large: {a.max()}")
        # A copy where needed, so that numba only ever sees one array type (no recompiles).
        flat = np.require(a, dtype=self._act_dtype, requirements="CAW")
        return flat.reshape(self._flat_shape)

    def step(self, actions):
        """Advance every episode by one step.

        ``actions`` has shape (N, agents, *action_shape), or (N, *action_shape) for one agent.
        An invalid action raises ValueError naming the first offending episode, before any
        episode moves. Returns ``(obs, rewards, terminated, truncated)`` (buffer views).
        """
        # The common case first, at the cost of a few attribute reads: an ndarray of the
        # kernels' dtype goes to the serial step by address (``_bind_own``), which checks its
        # rows and layout itself (-3: they differ, nothing moved, the general path says why).
        direct = self._direct
        if (
            direct is not None
            and actions.__class__ is np.ndarray
            and actions.dtype is self._act_dtype
            and actions.ndim == self._own_ndim
        ):
            code = direct(*self._own_head, actions)
            if code == -1:
                return self._result
            if code >= 0:
                self._raise_bad_action(code, actions.reshape(self._flat_shape))
        return self._step(self._actions(actions), None)

    def step_flat(self, flat):
        """``step`` for actions already made canonical by ``_actions`` (or a face's own buffer of
        that exact type: shape (N, agents * action width), kernel dtype, C-contiguous, writeable,
        aligned). The compiled call checks no types, so nothing else may come here."""
        return self._step(flat, None)

    def _step_agents(self, flat, kinds, memory, rngs, plies, returns, ends):
        """``step_flat`` where the built-in agents move, in the same compiled pass over the
        episodes: agent ``kinds[i, k]`` (>= 0) writes the move of ACTIVE seat k of running
        episode i into ``flat``, then the episode steps, ``plies`` times in a row (an episode
        frozen by disabled autoreset stops). ``returns`` (N, agents) and ``ends`` (N,) add up
        the rewards and the episodes ended. The arrays are ``selfplay.Seats``' own, of the one
        type they are made with; ``plies`` is a positive int."""
        return self._step(flat, (kinds, memory, rngs, plies, returns, ends))

    def _step_args(self, flat, agents):
        """The compiled step's arguments, in the drivers' order (its agents last)."""
        return (
            self._states,
            self._cfg,
            flat,
            self._act_low,
            self._act_high,
            self._rewards,
            self._terminated,
            self._truncated,
            self._obs,
            self._final_obs,
            self._mode,
            self._max_steps,
            agents,
        )

    def _step(self, flat, agents):
        policy = self.threads
        k = policy.next() if policy.possible else 1
        if k > 1:
            if numba.get_num_threads() != k:
                numba.set_num_threads(k)
            call, args = self._drivers.step_parallel, self._step_args(flat, agents) + (None,)
        elif agents is None and self._own_ndim is not None:
            if self._own is None:
                self._bind_own()
            call, args = self._own, self._own_head + (flat.reshape(self._own_shape),)
        else:
            args = self._step_args(flat, agents) + (None,)
            # One entry point per variant: with and without agents.
            call = self._fast_steps.get(agents is None)
            if call is None:
                with compiling(self.name):  # compiles or loads the loop on the first call
                    self._drivers.step.compile(tuple(numba.typeof(x) for x in args))
                call = entry_point(self._drivers.step, args) or self._drivers.step
                self._fast_steps[agents is None] = call
        if policy.timing:
            start = time.perf_counter()
            with compiling(self.name):
                bad = call(*args)
            policy.record(k, time.perf_counter() - start)
        else:
            with compiling(self.name):
                bad = call(*args)
        if bad >= 0:
            self._raise_bad_action(bad, flat)
        return self._result

    def _bind_own(self):
        """Compile (or load) the serial step by address of this engine's own buffers, for an
        engine of one agent and one observation field (``step_own`` in the drivers): numba
        unboxes an int and the actions per call instead of fifteen arrays, and a small batch's
        step costs little more than a hand-written loop's. It reads the buffers' addresses
        from ``_own_table``: made again whenever the engine's arrays change
        (``observe_into``)."""
        n = self.num_envs
        addrs = [
            self._states,
            self._cfg,
            None,  # the actions are read where they lie
            self._act_low,
            self._act_high,
            self._rewards,
            self._terminated,
            self._truncated,
            self._obs[0],
            self._final_obs[0],
        ]
        table = np.zeros(build.drivers.TABLE_SLOTS, dtype=np.int64)
        table[:10] = [0 if x is None else x.ctypes.data for x in addrs]
        table[14:19] = [n, 1, self.action.width, self._mode, self._max_steps]
        head = (
            int(table.ctypes.data),
            self.state_dtype,
            self._cfg.dtype,
            self._act_dtype,
            self._obs[0].dtype,
            tuple(int(d) for d in self._obs[0].shape[2:]),
        )
        example = np.zeros(self._own_shape, dtype=self._act_dtype)
        sig = tuple(numba.typeof(x) for x in head)
        sig += (numba.typeof(example).copy(layout="A", readonly=False),)
        fn = self._drivers.step_own
        with compiling(self.name):
            fn.compile(sig)
        self._own_table = table
        self._own_head = head
        self._own = fn.overloads[sig].entry_point
        self._direct = (
            self._own if not self.threads.possible or self.threads.forced is False else None
        )

    @property
    def uses_threads(self):
        """Whether steps run the threaded loop (None while the first steps are being timed)."""
        return self.threads.uses_threads

    def observe_into(self, arrays):
        """Have every later reset and step write the observations into ``arrays`` instead of the
        engine's own buffers: a tuple like ``_obs`` (each array of its shape and dtype,
        C-contiguous, writeable and aligned), such as views of a caller's buffers (PufferLib's),
        which then need no copy. ``obs`` shows them from then on."""
        arrays = tuple(arrays)
        if len(arrays) != len(self._obs):
            raise ValueError(f"expected {len(self._obs)} observation arrays, got {len(arrays)}")
        for mine, theirs in zip(self._obs, arrays, strict=True):
            if (
                not isinstance(theirs, np.ndarray)
                or theirs.shape != mine.shape
                or theirs.dtype != mine.dtype
                or not (theirs.flags.c_contiguous and theirs.flags.writeable)
                or not theirs.flags.aligned
            ):
                raise ValueError("observation arrays must match the engine's own")
        if self._final_obs is self._obs:
            self._final_obs = arrays
        self._obs = arrays
        self.obs = _read_only_views(self.observation, arrays)
        self._result = (self.obs, self._rewards, self._terminated, self._truncated)
        if self._own is not None:
            self._bind_own()  # its table holds the old arrays' addresses

    def step_into(self, flat, out, parallel=False):
        """The compiled step for a face that keeps its own result buffers (PufferLib's), as
        ``(call, head)``: ``call(*head, out)`` reads the actions from ``out[0]`` (validated, then
        copied into ``flat``, an array as ``step_flat`` takes), steps every episode and writes the
        results into the engine's buffers and, in the same pass, into ``out`` (see ``_publish`` in
        the drivers). It returns -1, or the first episode with a bad action (then nothing moved).

        Compiled (or loaded from numba's cache) here, not on a first step. ``call`` is the machine
        code for exactly these argument types and checks none: each call's ``out`` must have the
        types of the one given here (same dtypes, dimensions and contiguity). With ``parallel``
        it is the threaded loop; the caller sets numba's thread count."""
        fn = self._drivers.step_parallel if parallel else self._drivers.step
        head = self._step_args(flat, None)
        args = head + (out,)
        with compiling(self.name):
            fn.compile(tuple(numba.typeof(a) for a in args))
        return entry_point(fn, args) or fn, head

    def step_bound(self, flat, out, report_interval=0):
        """``step_into`` with the cheapest call, where it applies (one agent, one observation
        field, no masks or copies in ``out``; the serial loop), else None: ``(call, head,
        table)`` with ``call(*head, actions)`` doing what ``call(*head, out)`` of ``step_into``
        does with ``out[0]`` replaced by ``actions``, except that the step writes its terminated
        and truncated flags straight into ``out[2]`` and ``out[3]`` (the engine's own stay as
        they were). Every array is passed by its address, in ``table`` (see the drivers'
        ``step_bound``): the caller keeps ``flat``, ``out`` and ``table`` alive and never swaps
        the engine's buffers. ``actions`` must be an ndarray of ``out[0]``'s dtype and number of
        dimensions (``call`` checks no types); ``call`` returns -3, moving nothing, where its
        rows or layout differ. ``table[19]`` counts the steps; the step that brings it to
        ``report_interval`` (0: never) returns -2 instead of -1, and the caller resets it."""
        if self.num_agents != 1 or len(self._obs) != 1 or self.observation[0].shared:
            return None
        if out[4] is not None or out[5] is not None:
            return None
        # The kernel rebuilds each array from its address and these sizes: check them here.
        n = self.num_envs
        for arr, dtype, size in (
            (out[1], np.float32, n),
            (out[2], np.bool_, n),
            (out[3], np.bool_, n),
            (out[6], np.float64, n),
            (out[7], np.float64, 2 * n),
        ):
            if arr.dtype != dtype or arr.size != size:
                raise ValueError("the face's buffers do not match the engine's episodes")
        arrays = (
            self._states,
            self._cfg,
            flat,
            self._act_low,
            self._act_high,
            self._rewards,
            out[2],
            out[3],
            self._obs[0],
            self._final_obs[0],
            out[1],
            out[6],
            out[7],
        )
        for arr in arrays:
            if not (arr.flags.c_contiguous and arr.flags.writeable and arr.flags.aligned):
                return None
        addrs = [arr.ctypes.data for arr in arrays] + [0]
        addrs += [self.num_envs, self.num_agents, self.action.width, self._mode, self._max_steps]
        addrs += [0, int(report_interval)]
        table = np.array(addrs, dtype=np.int64)
        head = (
            int(table.ctypes.data),
            self.state_dtype,
            self._cfg.dtype,
            self._act_dtype,
            self._obs[0].dtype,
            tuple(int(d) for d in self._obs[0].shape[2:]),
        )
        # The actions typed of any layout: the kernel checks their layout before reading them.
        src = numba.typeof(out[0])
        sig = tuple(numba.typeof(x) for x in head) + (src.copy(layout="A", readonly=False),)
        fn = self._drivers.step_bound
        with compiling(self.name):
            fn.compile(sig)
        try:
            call = fn.overloads[sig].entry_point
        except (AttributeError, KeyError):
            return None
        return call, head, table

    def step_only(self, actions, mask):
        """Step the episodes where ``mask``; the others sit the step out, as finished episodes
        do under disabled autoreset (their rewards read 0). Only for engines made with
        ``autoreset="disabled"``: a face that moves some episodes more often than others (an
        opponent's replies) uses it."""
        if self.autoreset != "disabled":
            raise ValueError("step_only needs an engine with autoreset='disabled'")
        held = ~np.asarray(mask, dtype=np.bool_)
        done = self._states["done"]
        was = done[held]
        done[held] = was | HELD
        try:
            result = self.step(actions)
        finally:
            done[held] = was
        return result

    def _canonical(self, a):
        """Whether ``a`` has the one array type the kernels are compiled for (any shape)."""
        flags = a.flags
        return (
            a.dtype == self._act_dtype and flags.c_contiguous and flags.writeable and flags.aligned
        )

    def _raise_bad_action(self, i, flat):
        row = flat[i]
        if self.action.discrete:
            allowed = f"[{self._act_low.min()}, {self._act_high.max()}]"
            raise ValueError(f"action of env {i} is out of range {allowed}: {row.tolist()}")
        raise ValueError(f"action of env {i} is not a finite float32: {row.tolist()}")

    # -- state ---------------------------------------------------------------------------------

    def _index(self, idx):
        if idx is None:
            return np.arange(self.num_envs)
        return np.arange(self.num_envs)[idx]

    def get_state(self, idx=None):
        """A copy of the state records: all, one (``idx`` an int) or a selection."""
        where = self._index(idx)
        # A copy (a record taken by an int index would be a view into the engine), padding zeroed.
        return copy_records(self._states, where)

    def set_state(self, state, idx=None):
        """Overwrite the records at ``idx`` (all by default) after checking them.

        A state of the wrong dtype or shape, with non-finite floats or fields out of the game's
        bounds raises ValueError and leaves every episode unchanged.
        """
        where = self._index(idx)
        state = np.asarray(state)
        if state.dtype != self.state_dtype:
            raise ValueError(
                f"state must have the dtype of get_state() ({self.state_dtype}), got {state.dtype}"
            )
        if state.shape != where.shape:
            raise ValueError(f"state must have shape {where.shape}, got {state.shape}")
        self.check_state(state)
        self._states[where] = state
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[where] = True
        self._drivers.observe(self._states, self._cfg, self._obs, mask)
        self._rewards[mask] = 0.0
        self._terminated[mask] = (state["done"] & 1) != 0 if state.ndim else bool(state["done"] & 1)
        self._truncated[mask] = (state["done"] & 2) != 0 if state.ndim else bool(state["done"] & 2)

    def check_state(self, state):
        """Raise ValueError unless every record in ``state`` is one the rules can run."""
        flat = np.atleast_1d(state)
        if (flat["step"] < 0).any():
            raise ValueError("state field 'step' must be >= 0")
        if (flat["done"] > 3).any():
            raise ValueError("state field 'done' must be in [0, 3]")
        for name in flat.dtype.names:
            if name in HEADER_NAMES:
                continue
            values = flat[name]
            if values.dtype.kind == "f" and not np.isfinite(values).all():
                raise ValueError(f"state field {name!r} must be finite")
            if name in self._bounds:
                lo, hi = self._bounds[name]
                if values.dtype == np.float32:
                    # A float32 copy of the rules keeps its state within its bounds' float32
                    # roundings (float32(pi) > pi): compare in float32, as it computes.
                    lo, hi = np.float32(lo), np.float32(hi)
                if (values < lo).any() or (values > hi).any():
                    raise ValueError(f"state field {name!r} must be in [{lo}, {hi}]")
        # Rules may check what fixed bounds cannot: relations between fields, or bounds that
        # depend on the configuration. The hook returns an error message or None.
        check = getattr(self.rules, "check_state", None)
        message = check(flat, self.config) if check is not None else None
        if message:
            raise ValueError(message)

    @property
    def states(self):
        """The state records (a view: read them, and change them only through set_state)."""
        return self._states

    @property
    def rewards(self):
        """(N, agents) float64 rewards of the last step."""
        return self._rewards

    @property
    def terminated(self):
        """(N,) bool: the episode ended at the last step by the rules."""
        return self._terminated

    @property
    def truncated(self):
        """(N,) bool: the episode reached its time limit at the last step."""
        return self._truncated

    # -- views ---------------------------------------------------------------------------------

    def render(self, index=0, mode="rgb_array"):
        """Render episode ``index`` as an RGB array (H, W, 3) uint8 or, mode "ansi", as text."""
        renderer = registry.game_module(self.name, "render")
        fn = getattr(renderer, mode, None) if renderer is not None else None
        if fn is None:
            raise ValueError(f"{self.name} has no {mode!r} renderer")
        return fn(self.states[self._index(index)], self.config)

    # -- pickling ------------------------------------------------------------------------------

    def __getstate__(self):
        """How the engine was made and where its episodes stand: states, random streams, seed,
        the last step's outputs. The compiled loops are never serialised: loading looks them up
        again (from numba's cache), so a loaded engine continues bit-identically."""
        game = registry.get_game(self.name)
        return {
            "game": self.name,
            # A game registered at run time from a folder is registered again where it loads.
            "folder": str(game.folder) if game.origin == "registered" else None,
            "identity": registry.identity(self.name),
            "num_envs": self.num_envs,
            "num_threads": self.num_threads,
            "autoreset": self.autoreset,
            "max_episode_steps": self.max_episode_steps or 0,
            "memory_budget": self.memory_budget,
            "precision": self.precision,
            "configuration": dict(self.config),
            "seed": self.seed,
            "first_episode": self.first_episode,
            "threads": self.threads.state(),
            "arrays": {
                "_states": self._states,
                "_words": self._words,
                "_obs": self._obs,
                "_final_obs": self._final_obs if self._mode == SAME_STEP else None,
                "_rewards": self._rewards,
                "_terminated": self._terminated,
                "_truncated": self._truncated,
            },
        }

    def __setstate__(self, state):
        registry.check_identity(state["game"], state["folder"], state.get("identity"))
        threads = min(state["num_threads"], numba.config.NUMBA_NUM_THREADS)
        self.__init__(
            state["game"],
            num_envs=state["num_envs"],
            seed=state["seed"],
            num_threads=threads,
            autoreset=state["autoreset"],
            max_episode_steps=state["max_episode_steps"],
            memory_budget=state.get("memory_budget"),
            precision=state.get("precision", "float64"),
            **state["configuration"],
        )
        self.first_episode = state["first_episode"]
        arrays = state["arrays"]
        check_loaded_states(self.check_state, arrays["_states"], self.state_dtype, self.num_envs)
        self._restore_arrays(arrays)
        if threads == state["num_threads"]:
            self.threads.restore(state.get("threads", {}))

    def _restore_arrays(self, arrays):
        """Copy pickled buffers into this engine's own (the faces hold views of them)."""
        for name, saved in arrays.items():
            if saved is None:
                continue
            mine = getattr(self, name)
            if isinstance(mine, tuple):
                if len(mine) != len(saved):
                    raise ValueError(f"a pickled engine's {name} does not fit this game")
                for dst, src in zip(mine, saved, strict=True):
                    np.copyto(dst, src)
            else:
                if mine.shape != saved.shape or mine.dtype != saved.dtype:
                    raise ValueError(f"a pickled engine's {name} does not fit this game")
                np.copyto(mine, saved)

    def __repr__(self):
        return (
            f"Engine({self.name!r}, num_envs={self.num_envs}, num_threads={self.num_threads}, "
            f"autoreset={self.autoreset!r})"
        )
