"""A ``gymnasium.vector.VectorEnv`` whose episodes are spread over Ray actors.

``VectorEnv(game, num_envs, num_workers, seed)`` splits N episodes into ``num_workers``
contiguous slices; each slice lives in one Ray actor that holds one engine (using its node's
threads), and every call steps the slices in parallel and gathers their results into arrays made
once. Episode i draws from the stream of ``(seed, i)`` wherever it runs (each worker's engine
plays its slice as episodes ``first .. first + n - 1`` of the whole batch), so trajectories are
bit-identical to the local ``GameVectorEnv`` of the same seed for any number of workers.

A worker that dies is restarted by Ray (``max_restarts``); its episodes start again from their
seeds and are reported truncated (see ``VectorEnv``). Every wait is bounded by ``timeout``, so a
caller never hangs on a lost node. Ray is an optional dependency: ``pip install "vecenv[ray]"``.
"""

import contextlib
import pickle
import time

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space, create_empty_array

from vecenv.engine import autoreset_mode as autoreset_mode_of
from vecenv.engine import fresh_seed, is_integer

from . import sharedarrays
from .cluster import connect, ray, require_ray  # noqa: F401  (re-exported)

if ray is not None:
    from ray.exceptions import (
        ActorUnavailableError,
        GetTimeoutError,
        RayActorError,
        RayChannelError,
        RayChannelTimeoutError,
    )

DEFAULT_TIMEOUT = 120.0  # seconds a worker may take to answer one call (a restart included)
TRANSPORTS = ("ray", "compiled")
SHARED = "shared"  # in an answer: this array was written in the driver's shared memory
_GYM_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}


def split(num_envs, num_workers):
    """The (first, count) slices of ``num_envs`` episodes over ``num_workers`` workers: counts
    differ by at most one, the larger first."""
    base, extra = divmod(num_envs, num_workers)
    slices, first = [], 0
    for w in range(num_workers):
        n = base + (w < extra)
        slices.append((first, n))
        first += n
    return slices


class Worker:
    """One slice of the episodes, in one Ray actor: a local ``GameVectorEnv`` (buffers, no
    copies) whose engine plays episodes ``first .. first + n - 1`` of the whole batch."""

    def __init__(self, make, first, seed):
        from vecenv.gym.vector import GameVectorEnv

        if isinstance(make, bytes):  # a pickled env, where a VectorEnv is loaded
            self.env = pickle.loads(make)
        else:
            self.env = GameVectorEnv(**make)
            self.engine.first_episode = first
            self.env.reset(seed=seed)
        self.mode = autoreset_mode_of(self.env.metadata["autoreset_mode"])
        self.skip = False  # next-step mode after a restart: the next step is the reset step
        self.frozen = False  # disabled mode after a restart: frozen until reset
        self.first, self.n = first, self.env.num_envs
        self.shared = None  # this slice of the driver's shared arrays (compiled transport)
        self.count, self.last = 0, None  # the last compiled step taken, and its answer
        # A new process after a crash: its episodes are lost until the driver recovers them.
        self.lost = ray.get_runtime_context().was_current_actor_reconstructed

    @property
    def engine(self):
        engine = self.env.engine
        return getattr(engine, "inner", engine)  # a two-agent game's OpponentEngine

    def describe(self):
        env = self.env
        return env.single_observation_space, env.single_action_space, env.metadata

    def reset(self, seed, mask, options):
        self.skip = self.frozen = False
        if mask is not None:
            options = dict(options or {}, reset_mask=mask)
        obs, infos = self.env.reset(seed=seed, options=options)
        return obs, infos

    def step(self, actions):
        if self.skip or self.frozen:
            # The episodes lost with the old process: the reset step (next-step mode), or still
            # frozen (disabled mode), as the local env would do after a truncation.
            n = self.env.num_envs
            trunc = np.full(n, self.frozen)
            self.skip = False
            obs = None if self.frozen else self.env._obs  # frozen: the caller keeps the last
            return obs, np.zeros(n), np.zeros(n, dtype=np.bool_), trunc, {}
        return self.env.step(actions)

    def recover(self, seed, layout=None):
        """After a restart: the episodes start again from ``seed`` (an int, or this slice's
        per-episode seeds), as at the first reset."""
        self.env.reset(seed=seed)
        self.skip = self.mode == "next_step"
        self.frozen = self.mode == "disabled"
        self.lost = False
        if layout is not None:
            self.attach(layout)
        return self.env._obs

    # -- the compiled transport ---------------------------------------------------------------

    def attach(self, layout):
        """Map the driver's shared arrays where they are on this machine; True if mapped."""
        arrays = sharedarrays.attach(layout)
        if arrays is None:
            self.shared = None
            return False
        self.shared = _slice_results(arrays, self.first, self.n)
        self.shared["_segment"] = arrays["_segment"]  # the mapping lives as long as the views
        return True

    def compiled_step(self, message):
        """The compiled graph's step: ``message`` is (count, actions). A step already taken
        (asked again after the graph broke) answers as before."""
        count, actions = message
        if count != self.count:
            self.last = self._shared_answer(self.step(actions))
            self.count = count
        return self.last

    def settle(self, count, actions):
        """After the compiled graph broke: take step ``count`` unless taken; None if this
        process is new (its episodes were lost)."""
        return None if self.lost else self.compiled_step((count, actions))

    def _shared_answer(self, answer):
        if self.shared is None:
            return answer
        obs, rewards, terminated, truncated, infos = answer
        shared = self.shared
        if obs is not None:  # None: frozen, the driver keeps the last observation
            _put(shared["obs"], obs, 0, self.n)
            obs = SHARED
        shared["rewards"][:] = rewards
        shared["terminated"][:] = terminated
        shared["truncated"][:] = truncated
        return obs, SHARED, SHARED, SHARED, infos

    def get_env(self):
        return pickle.dumps(self.env)

    def get_state(self):
        return self.env.get_state()

    def set_state(self, state):
        self.env.set_state(state)

    def render(self):
        return self.env.render()

    def where(self):
        """(node id, process id): where this slice runs."""
        import os

        return ray.get_runtime_context().get_node_id(), os.getpid()


class VectorEnv(gymnasium.vector.VectorEnv):
    """N episodes of a one-agent game (or a two-agent game against an opponent, as
    ``GameVectorEnv``) spread over Ray actors.

    Args:
        game: a game's name or Gymnasium id.
        num_envs: N.
        num_workers: Ray actors; worker w plays a contiguous slice of about N / num_workers.
        seed: as ``GameVectorEnv``'s (None draws one).
        autoreset_mode, max_episode_steps, render_mode, copy, **configuration: as
            ``GameVectorEnv``'s.
        num_threads: threads of each worker's engine (trajectories never depend on it).
        worker_options: ``ray.remote`` options of the actors (default ``num_cpus=1``, spread over
            the nodes; ``max_restarts=3``).
        timeout: seconds a worker may take to answer a call before ``TimeoutError``.
        address: the cluster to connect to when this process is not connected yet (see
            ``connect``).

    Steps can overlap other work: ``step_async(actions)`` sends the actions and returns,
    ``step_wait()`` gathers the results (EnvPool's ``send``/``recv`` are the same calls).

    A worker that dies is restarted by Ray and its episodes start again from their seeds (the
    seed of the last seeded reset): the step reports them truncated with reward 0. In next-step
    mode they come back at the next step, as after any truncation; in same-step mode they are
    back at once, ``infos["final_obs"]`` holding their last observation; in disabled mode they
    stay frozen until a reset covers them.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        game,
        num_envs=1,
        num_workers=2,
        seed=None,
        autoreset_mode=AutoresetMode.NEXT_STEP,
        max_episode_steps=None,
        render_mode=None,
        num_threads=1,
        copy=True,
        worker_options=None,
        timeout=DEFAULT_TIMEOUT,
        address=None,
        transport="ray",
        **configuration,
    ):
        if not is_integer(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if not is_integer(num_workers) or not 1 <= num_workers <= num_envs:
            raise ValueError(
                f"num_workers must be an integer in [1, num_envs], got {num_workers!r}"
            )
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")
        self.transport = transport
        connect(address)
        self.num_envs = int(num_envs)
        self.num_workers = int(num_workers)
        self.seed = fresh_seed() if seed is None else seed
        self.copy = bool(copy)
        self.timeout = float(timeout)
        self._options = {"num_cpus": 1, "max_restarts": 3, "scheduling_strategy": "SPREAD"}
        if transport == "compiled":
            # Ray's compiled graphs across nodes can take a node's raylet down when a worker
            # dies, so the compiled transport keeps its workers on the driver's node.
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            self._options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(here, soft=False)
        self._options.update(worker_options or {})
        make = dict(
            game=game,
            num_envs=1,
            seed=self.seed,
            autoreset_mode=autoreset_mode_of(autoreset_mode),
            max_episode_steps=max_episode_steps,
            render_mode=render_mode,
            num_threads=num_threads,
            copy=False,
            **configuration,
        )
        self._slices = split(self.num_envs, self.num_workers)
        self._workers = [
            self._actor(dict(make, num_envs=n), first, self.seed) for first, n in self._slices
        ]
        self._setup(render_mode)

    def _actor(self, make, first, seed):
        cls = ray.remote(Worker).options(max_task_retries=0, **self._options)
        return cls.remote(make, first, seed)

    def _setup(self, render_mode):
        obs_space, act_space, metadata = self._get(self._workers[0].describe.remote(), 0)
        self.single_observation_space = obs_space
        self.single_action_space = act_space
        self.observation_space = batch_space(obs_space, self.num_envs)
        self.action_space = batch_space(act_space, self.num_envs)
        self.metadata = dict(metadata)
        self.render_mode = render_mode
        self._mode = autoreset_mode_of(metadata["autoreset_mode"])
        n = self.num_envs
        self._obs = create_empty_array(obs_space, n, fn=np.zeros)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terminated = np.zeros(n, dtype=np.bool_)
        self._truncated = np.zeros(n, dtype=np.bool_)
        self._pending = None
        self._seeds = self.seed  # what a restarted worker starts again from
        self._start_transport()

    def _start_transport(self):
        """The compiled transport's shared result arrays (mapped by the workers on this
        machine); its graph is compiled at the first step."""
        self._dag = self._shared = self._layout = None
        self._count = 0  # compiled steps sent
        if self.transport != "compiled":
            return
        here = ray.get_runtime_context().get_node_id()
        for w, worker in enumerate(self._workers):
            if self._get(worker.where.remote(), w)[0] != here:
                raise ValueError(
                    "transport='compiled' needs every worker on the driver's node "
                    f"(worker {w} is not); use transport='ray' across machines"
                )
        results = _flat_results(self._obs, self._rewards, self._terminated, self._truncated)
        self._shared = sharedarrays.SharedArrays(results)
        self._layout = self._shared.layout
        refs = self._call("attach", [self._layout] * self.num_workers)
        for w, ref in enumerate(refs):
            self._get(ref, w)
        self._shared_parts = [
            _slice_results(self._shared.arrays, first, n) for first, n in self._slices
        ]

    # -- calls to the workers --------------------------------------------------------------

    def _get(self, ref, w):
        try:
            return ray.get(ref, timeout=self.timeout)
        except GetTimeoutError:
            raise TimeoutError(
                f"Ray worker {w} of {self.num_workers} did not answer within {self.timeout} s"
            ) from None

    def _call(self, method, *per_worker):
        """Call ``method`` on every worker (argument k of worker w: ``per_worker[k][w]``)."""
        if self.transport == "compiled":
            self._finish_pending()
        return [
            getattr(worker, method).remote(*(args[w] for args in per_worker))
            for w, worker in enumerate(self._workers)
        ]

    def _gather(self, refs):
        """Each worker's answer, or None for a worker that died (it is recovered)."""
        answers = []
        for w, ref in enumerate(refs):
            try:
                answers.append(self._get(ref, w))
            except (RayActorError, ActorUnavailableError):
                answers.append(None)
        return answers

    def _worker_seeds(self, seed):
        if seed is None or is_integer(seed):
            return [seed] * self.num_workers
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} seeds, got {len(seeds)}")
        return [seeds[first : first + n] for first, n in self._slices]

    def _recover(self, w):
        """Worker ``w`` came back from a restart: its episodes start again from their seeds."""
        seed = self._worker_seeds(self._seeds)[w]
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self._get(self._workers[w].recover.remote(seed, self._layout), w)
            except ActorUnavailableError:
                # Still restarting: Ray refuses calls until the new process is up.
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"Ray worker {w} did not come back within {self.timeout} s"
                    ) from None
                time.sleep(0.05)
            except RayActorError as exc:
                raise RuntimeError(f"Ray worker {w} died for good: {exc}") from None

    # -- the VectorEnv interface -----------------------------------------------------------

    def reset(self, *, seed=None, options=None):
        """As ``GameVectorEnv.reset``: ``options["reset_mask"]`` resets some episodes."""
        if self._pending is not None:
            self.step_wait()
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is not None and (
            not isinstance(mask, np.ndarray)
            or mask.dtype != np.bool_
            or mask.shape != (self.num_envs,)
        ):
            raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},)")
        seeds = self._worker_seeds(seed)
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                seed if isinstance(seed, int) else None
            )
            self._seeds = seed
            if is_integer(seed):
                self.seed = int(seed)
        masks = [None if mask is None else mask[f : f + n] for f, n in self._slices]
        positions = self._positions(options, mask)
        refs = []
        for w, worker in enumerate(self._workers):
            if mask is not None and not masks[w].any():
                refs.append(None)
                continue
            opts = dict(options, position=positions[w]) if positions else options
            refs.append(worker.reset.remote(seeds[w], masks[w], opts or None))
        infos = {}
        for w, ref in enumerate(refs):
            if ref is None:
                continue
            first, n = self._slices[w]
            answer = self._gather([ref])[0]
            if answer is None:
                obs, part = self._recover(w), {}
            else:
                obs, part = answer
            _put(self._obs, obs, first, n)
            self._rewards[first : first + n] = 0.0
            self._terminated[first : first + n] = False
            self._truncated[first : first + n] = False
            _merge_infos(infos, part, first, n, self.num_envs)
        return self._out(self._obs), infos

    def _positions(self, options, mask):
        """``options["position"]`` split per worker (a list has one per episode reset)."""
        position = options.get("position")
        if position is None or isinstance(position, dict):
            return None
        position = list(position)
        where = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        out, k = [], 0
        for first, n in self._slices:
            count = int(((where >= first) & (where < first + n)).sum())
            out.append(position[k : k + count] or None)
            k += count
        return out

    def _check_actions(self, actions):
        a = np.asarray(actions)
        space = self.single_action_space
        shape = (self.num_envs,) + (space.shape or ())
        if a.shape != shape:
            raise ValueError(f"actions must have shape {shape}, got {a.shape}")
        if isinstance(space, gymnasium.spaces.Discrete):
            if a.dtype.kind not in "iu":
                raise ValueError(f"actions must be integers, got dtype {a.dtype}")
            low, high = int(space.start), int(space.start + space.n - 1)
            bad = np.flatnonzero((a < low) | (a > high))
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"action of env {i} is out of range [{low}, {high}]: {a[i]}")
            # The smallest integers that hold every move: a quarter or an eighth of the bytes
            # to send, and Ray passes small arguments inline rather than through its store.
            small = np.promote_types(np.min_scalar_type(low), np.min_scalar_type(high))
            if small.itemsize < a.dtype.itemsize:
                a = a.astype(small)
        else:
            if a.dtype.kind not in "iuf":
                raise ValueError(f"actions must be numbers, got dtype {a.dtype}")
            finite = np.isfinite(a.reshape(self.num_envs, -1)).all(axis=1)
            if not finite.all():
                i = int(np.flatnonzero(~finite)[0])
                raise ValueError(f"action of env {i} is not finite: {a[i].tolist()}")
        return a

    def step_async(self, actions):
        """Send the actions (checked here, before any worker moves) and return at once."""
        if self._pending is not None:
            raise RuntimeError("step_async called twice without step_wait")
        a = self._check_actions(actions)
        parts = [a[first : first + n] for first, n in self._slices]
        if self.transport == "compiled":
            self._count += 1
            messages = [(self._count, part) for part in parts]
            self._pending = ("sent", self._count, parts, self._graph().execute(*messages))
        else:
            self._pending = self._call("step", parts)

    # -- the compiled transport: one graph of the workers' steps, results in shared memory --

    def _graph(self):
        if self._dag is None:
            from ray.dag import InputNode, MultiOutputNode

            with InputNode() as inp:
                steps = [wk.compiled_step.bind(inp[w]) for w, wk in enumerate(self._workers)]
                dag = MultiOutputNode(steps)
            self._dag = dag.experimental_compile(_submit_timeout=self.timeout)
        return self._dag

    def _drop_graph(self):
        dag, self._dag = self._dag, None
        if dag is not None:
            # A graph broken by a dead worker may fail to end cleanly.
            with contextlib.suppress(Exception):
                dag.teardown()

    def _finish_pending(self):
        """Gather a compiled step in flight (kept for ``step_wait``) before other calls, which
        run beside the graph's loop in the workers."""
        if self._pending is not None and self._pending[0] == "sent":
            (_, count, parts, refs), self._pending = self._pending, None
            self._pending = ("done", self._gather_compiled(count, parts, refs))

    def _gather_compiled(self, count, parts, refs):
        answers = []
        try:
            for ref in refs:
                answers.append(ray.get(ref, timeout=self.timeout))
        except (RayChannelTimeoutError, GetTimeoutError):
            self._drop_graph()
            raise TimeoutError(
                f"a Ray worker of {self.num_workers} did not answer within {self.timeout} s"
            ) from None
        except (RayChannelError, RayActorError, ActorUnavailableError):
            # A worker died and took the graph down: the others finish this step (once) by a
            # plain call, and the graph is compiled again at the next step.
            self._drop_graph()
            answers = [self._settle(w, count, part) for w, part in enumerate(parts)]
        return [self._resolve(a, w) for w, a in enumerate(answers)]

    def _settle(self, w, count, actions):
        try:
            return self._get(self._workers[w].settle.remote(count, actions), w)
        except (RayActorError, ActorUnavailableError):
            return None

    def _resolve(self, answer, w):
        """An answer whose arrays are in shared memory, with this slice's views in their place."""
        if answer is None:
            return None
        part = self._shared_parts[w] if self._shared is not None else None
        obs, rewards, terminated, truncated, infos = answer
        if isinstance(obs, str):
            obs = part["obs"]
        if isinstance(rewards, str):
            rewards, terminated, truncated = part["rewards"], part["terminated"], part["truncated"]
        return obs, rewards, terminated, truncated, infos

    def step_wait(self):
        """The results of the last ``step_async``."""
        if self._pending is None:
            raise RuntimeError("step_wait called without step_async")
        if self.transport == "compiled":
            self._finish_pending()
            (_, answers), self._pending = self._pending, None
        else:
            refs, self._pending = self._pending, None
            answers = self._gather(refs)
        infos = {}
        for w, answer in enumerate(answers):
            first, n = self._slices[w]
            end = first + n
            if answer is None:  # the worker died with its episodes
                obs = self._recover(w)
                part = {}
                if self._mode == "same_step":
                    part = _final_infos(self._obs, first, n)
                    _put(self._obs, obs, first, n)
                self._rewards[first:end] = 0.0
                self._terminated[first:end] = False
                self._truncated[first:end] = True
            else:
                obs, rewards, terminated, truncated, part = answer
                if obs is not None:
                    _put(self._obs, obs, first, n)
                self._rewards[first:end] = rewards
                self._terminated[first:end] = terminated
                self._truncated[first:end] = truncated
            _merge_infos(infos, part, first, n, self.num_envs)
        if self.copy:
            return (
                self._out(self._obs),
                self._rewards.copy(),
                self._terminated.copy(),
                self._truncated.copy(),
                infos,
            )
        return self._obs, self._rewards, self._terminated, self._truncated, infos

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    # EnvPool's names for the same two halves.
    def send(self, actions):
        self.step_async(actions)

    def recv(self):
        return self.step_wait()

    def _out(self, obs):
        if not self.copy:
            return obs
        return {k: v.copy() for k, v in obs.items()} if isinstance(obs, dict) else obs.copy()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        frames = self._gather(self._call("render"))
        return tuple(f for part in frames for f in part)

    def get_state(self, idx=None):
        """Copies of the state records, gathered from the workers (see ``Engine.get_state``)."""
        parts = self._gather(self._call("get_state"))
        states = np.concatenate(parts)
        return states if idx is None else states[np.arange(self.num_envs)[idx]]

    def set_state(self, state):
        """Restore every episode's record (an array of N from ``get_state``)."""
        state = np.asarray(state)
        if state.shape != (self.num_envs,):
            raise ValueError(f"state must have shape ({self.num_envs},), got {state.shape}")
        parts = [state[first : first + n] for first, n in self._slices]
        answers = self._gather(self._call("set_state", parts))
        if any(a is None for a in answers):
            raise RuntimeError("a Ray worker died while its state was being set")
        self._pending = None

    @property
    def workers(self):
        """The Ray actor handles, one per slice."""
        return list(self._workers)

    def close_extras(self, **kwargs):
        if getattr(self, "_dag", None) is not None:
            self._drop_graph()
        workers, self._workers = getattr(self, "_workers", []), []
        if ray is not None and ray.is_initialized():
            for worker in workers:
                ray.kill(worker, no_restart=True)
        if getattr(self, "_shared", None) is not None:
            self._shared_parts = []
            self._shared.close()

    # -- pickling: the workers' envs travel, and new workers continue them -------------------

    def __getstate__(self):
        if self._pending is not None:
            self.step_wait()
        envs = self._gather(self._call("get_env"))
        transient = ("_workers", "_pending", "_dag", "_shared", "_layout", "_shared_parts")
        state = {k: v for k, v in self.__dict__.items() if k not in transient}
        state["envs"] = envs
        return state

    def __setstate__(self, state):
        envs = state.pop("envs")
        self.__dict__.update(state)
        connect()
        self._pending = None
        if self.transport == "compiled" and "scheduling_strategy" in self._options:
            # Loaded in another process, perhaps on another node: the workers go to this one.
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            strategy = self._options["scheduling_strategy"]
            if isinstance(strategy, NodeAffinitySchedulingStrategy) and not strategy.soft:
                here = ray.get_runtime_context().get_node_id()
                self._options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(here, False)
        self._workers = [
            self._actor(blob, first, None)
            for blob, (first, _) in zip(envs, self._slices, strict=True)
        ]
        self._start_transport()

    def __repr__(self):
        return (
            f"vecenv.ray.VectorEnv({self.single_observation_space}, num_envs={self.num_envs}, "
            f"num_workers={self.num_workers}, autoreset_mode={self.metadata['autoreset_mode']})"
        )


def _flat_results(obs, rewards, terminated, truncated):
    """A step's result buffers as one flat name -> array mapping (observation fields first)."""
    flat = {f"obs:{k}": v for k, v in obs.items()} if isinstance(obs, dict) else {"obs": obs}
    return dict(flat, rewards=rewards, terminated=terminated, truncated=truncated)


def _slice_results(arrays, first, n):
    """Episodes ``first .. first + n - 1`` of flat result arrays, the observation regrouped."""
    end = first + n
    part = {k: v[first:end] for k, v in arrays.items() if k != "_segment"}
    fields = {k[4:]: part.pop(k) for k in list(part) if k.startswith("obs:")}
    part["obs"] = fields if fields else part.pop("obs")
    return part


def _put(buffer, obs, first, n):
    if isinstance(buffer, dict):
        for k, v in buffer.items():
            v[first : first + n] = obs[k]
    else:
        buffer[first : first + n] = obs


def _final_infos(obs, first, n):
    """Same-step infos of a slice whose episodes were lost: their last observation."""
    final = np.full(n, None, dtype=object)
    for i in range(n):
        if isinstance(obs, dict):
            final[i] = {k: v[first + i].copy() for k, v in obs.items()}
        else:
            final[i] = obs[first + i].copy()
    done = np.ones(n, dtype=np.bool_)
    return {"final_obs": final, "_final_obs": done, "final_info": {}, "_final_info": done}


def _merge_infos(infos, part, first, n, total):
    """A worker's infos (arrays over its slice) placed into the whole batch's, laid out as
    gymnasium's ``_add_info``: a key missing from a worker reads None, False or 0 there."""
    for key, value in part.items():
        if isinstance(value, dict):
            _merge_infos(infos.setdefault(key, {}), value, first, n, total)
            continue
        value = np.asarray(value)
        if key not in infos:
            infos[key] = (
                np.full(total, None, dtype=object)
                if value.dtype == object
                else np.zeros((total,) + value.shape[1:], dtype=value.dtype)
            )
        infos[key][first : first + n] = value
