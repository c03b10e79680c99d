"""``VectorEnv``: N episodes of a game over Ray actors, as one ``gymnasium.vector.VectorEnv``.

The driver's side: it splits the episodes into contiguous slices (``results.split``), starts one
``Worker`` per slice, checks the actions once, sends each worker its slice and gathers the answers
into arrays made once. Its transports: "shared" links the workers on this machine to arrays in
shared memory (``vecenv.ray.sharedarrays``) and wakes them through sockets
(``vecenv.ray.sharedsteps``), the others by Ray calls; "ray" calls every worker through Ray.
"""

import time

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from vecenv.gym.spaces import copy_obs
from vecenv.inputs import action_array, check_action_dtype, fresh_seed
from vecenv.inputs import autoreset_mode as autoreset_mode_of
from vecenv.kernels.state import ACTION_MAX
from vecenv.spec import is_integer

from . import results, sharedarrays, sharedsteps
from .cluster import check_room, connect, ray, worker_cpus
from .results import split
from .worker import SHARED, Worker

if ray is not None:
    from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

DEFAULT_TIMEOUT = 120.0  # seconds a worker may take to answer one call (a restart included)
TRANSPORTS = ("shared", "ray")


class VectorEnv(gymnasium.vector.VectorEnv):
    """N episodes of a one-agent game (or a two-agent game against an opponent, as
    ``GameVectorEnv``) spread over Ray actors.

    Args:
        game: a game's name or Gymnasium id.
        num_envs: N.
        num_workers: Ray actors; worker w plays a contiguous slice of about N / num_workers.
        seed: as ``GameVectorEnv``'s (None draws one).
        autoreset_mode: as ``GameVectorEnv``'s.
        max_episode_steps: as ``GameVectorEnv``'s.
        render_mode: as ``GameVectorEnv``'s.
        copy: as ``GameVectorEnv``'s.
        **configuration: as ``GameVectorEnv``'s.
        num_threads: threads of each worker's engine (trajectories never depend on it).
        num_cpus_per_worker: CPUs Ray reserves for each worker (default 1; a fraction packs
            more workers than CPUs). A cluster that cannot place the workers is a ValueError at
            once, saying what it has.
        worker_options: ``ray.remote`` options of the actors (default ``num_cpus`` above, spread
            over the nodes; ``max_restarts=3``); they win over ``num_cpus_per_worker``.
        timeout: seconds a worker may take to answer a call before ``TimeoutError``.
        address: the cluster to connect to when this process is not connected yet (see
            ``connect``).
        transport: "shared" (the default): workers on this machine take their steps through
            shared memory (``vecenv.ray.sharedsteps``), the others by Ray calls; "ray": every worker
            by Ray calls, the arrays in the messages.

    Steps can overlap other work: ``step_async(actions)`` sends the actions and returns,
    ``step_wait()`` gathers the results (EnvPool's ``send``/``recv`` are the same calls).

    A worker that dies is restarted by Ray and its episodes start again from their seeds (the
    seed of the last seeded reset): the step reports them truncated with reward 0. In next-step
    mode they come back at the next step, as after any truncation; in same-step mode they are
    back at once, ``infos["final_obs"]`` holding their last observation; in disabled mode they
    stay frozen until a reset covers them.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
    _kind = "game"  # what each worker holds (see _env_class)

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
        num_cpus_per_worker=1,
        worker_options=None,
        timeout=DEFAULT_TIMEOUT,
        address=None,
        transport="shared",
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
        self._game = game  # for error messages
        connect(address)
        self.num_envs = int(num_envs)
        self.num_workers = int(num_workers)
        self.seed = fresh_seed() if seed is None else seed
        self.copy = bool(copy)
        self.timeout = float(timeout)
        self._options = {"max_restarts": 3, "scheduling_strategy": "SPREAD"}
        self._options.update(num_cpus=worker_cpus(num_cpus_per_worker), **(worker_options or {}))
        check_room(self.num_workers, self._options)
        make = dict(
            kind=self._kind,
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
        obs_space, act_space, metadata, layout = self._get(self._workers[0].describe.remote(), 0)
        self.single_observation_space = obs_space
        self.single_action_space = act_space
        self._action_shape, self._act_dtype = layout["actions"]
        self._spaces(obs_space, act_space)
        self.metadata = dict(metadata)
        self.render_mode = render_mode
        self._mode = autoreset_mode_of(metadata["autoreset_mode"])
        n = self.num_envs
        whole = results.slice_results(
            {k: np.zeros((n,) + shape, dtype) for k, (shape, dtype) in layout.items()}, 0, n
        )
        self._take(whole)
        self._pending = None
        self._seeds = self.seed  # what a restarted worker starts again from
        self._start_transport()

    def _spaces(self, obs_space, act_space):
        self.observation_space = batch_space(obs_space, self.num_envs)
        self.action_space = batch_space(act_space, self.num_envs)

    def _take(self, whole):
        """Make ``whole`` (as ``_slice_results`` gives) this env's result buffers."""
        self._obs, self._actions, self._steady = whole["obs"], whole["actions"], whole["infos"]
        self._rewards, self._terminated = whole["rewards"], whole["terminated"]
        self._truncated = whole["truncated"]

    def _start_transport(self):
        """The shared transport: the actions and results in shared memory (their current values
        carried over), and each worker on this machine linked to it."""
        self._shared = self._listener = None
        self._links = [None] * self.num_workers
        if self.transport != "shared":
            return
        arrays = results.flat_results(
            self._obs, self._rewards, self._terminated, self._truncated, self._steady
        )
        arrays["actions"] = self._actions
        self._shared = sharedarrays.SharedArrays(arrays)
        for key, value in arrays.items():
            self._shared.arrays[key][...] = value
        self._take(results.slice_results(self._shared.arrays, 0, self.num_envs))
        self._listener = sharedsteps.Listener(backlog=self.num_workers + 8)
        refs = [worker.link.remote(*self._link_args(w)) for w, worker in enumerate(self._workers)]
        for _ in range(sum(self._get(ref, w) for w, ref in enumerate(refs))):
            self._accept()

    def _link_args(self, w):
        return self._shared.layout, self._listener.address, w, self.timeout

    def _accept(self):
        w, link = self._listener.accept(self.timeout)
        self._drop_link(w)
        self._links[w] = link

    def _drop_link(self, w):
        link, self._links[w] = self._links[w], None
        if link is not None:
            link.close()

    # -- calls to the workers --------------------------------------------------------------

    def _get(self, ref, w):
        try:
            return ray.get(ref, timeout=self.timeout)
        except GetTimeoutError:
            raise TimeoutError(
                f"Ray worker {w} of {self.num_workers} did not answer within {self.timeout} s"
            ) from None

    def _check_open(self):
        if self.closed:
            raise RuntimeError("this Ray env is closed: make a new one")

    def _call(self, method, *per_worker):
        """Call ``method`` on every worker (argument k of worker w: ``per_worker[k][w]``)."""
        self._check_open()
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
        """Worker ``w`` came back from a restart: its episodes start again from their seeds.
        Returns their observations and steady infos."""
        self._drop_link(w)
        seed = self._worker_seeds(self._seeds)[w]
        link = self._link_args(w) if self._listener is not None else None
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                obs, infos, linked = self._get(self._workers[w].recover.remote(seed, link), w)
                if linked:
                    self._accept()
                return obs, infos
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
        self._check_open()
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
            obs, part = self._recover(w) if answer is None else answer
            if not isinstance(obs, str):  # else SHARED: in the shared arrays already
                results.put(self._obs, obs, first, n)
            self._rewards[first : first + n] = 0.0
            self._terminated[first : first + n] = False
            self._truncated[first : first + n] = False
            self._place(part, first, n, infos)
        return self._out(self._obs), self._with_steady(infos)

    def _place(self, part, first, n, infos):
        """A worker's infos: the steady ones into their buffers, the others merged into
        ``infos``."""
        part = dict(part)
        for key, buffer in self._steady.items():
            if key in part:  # absent: frozen, the last stay
                buffer[first : first + n] = part.pop(key)
        results.merge_infos(infos, part, first, n, self.num_envs)

    def _with_steady(self, infos):
        """The steady infos (copies, or read-only views), then the others."""
        return dict({k: self._out(v) for k, v in self._steady.items()}, **infos)

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
        a = action_array(self._game, actions)
        space = self.single_action_space
        shape = (self.num_envs,) + self._action_shape
        if a.shape != shape:
            raise ValueError(f"actions must have shape {shape}, got {a.shape}")
        discrete = isinstance(space, gymnasium.spaces.Discrete)
        check_action_dtype(self._game, discrete, a.dtype)
        if discrete:
            low, high = int(space.start), int(space.start + space.n - 1)
            if a.size and (a.min() < low or a.max() > high):  # two passes, none in the common case
                i = int(np.flatnonzero((a < low) | (a > high))[0])
                raise ValueError(f"action of env {i} is out of range [{low}, {high}]: {a[i]}")
        else:
            finite = (np.abs(a.reshape(self.num_envs, -1)) <= ACTION_MAX).all(axis=1)
            if not finite.all():
                i = int(np.flatnonzero(~finite)[0])
                raise ValueError(f"action of env {i} is not a finite float32: {a[i].tolist()}")
        return a

    def _to_send(self, a):
        """Actions for Ray calls: for a discrete game, the smallest integers that hold every
        move (a quarter or an eighth of the bytes; Ray passes small arguments inline)."""
        space = self.single_action_space
        if isinstance(space, gymnasium.spaces.Discrete):
            low, high = int(space.start), int(space.start + space.n - 1)
            small = np.promote_types(np.min_scalar_type(low), np.min_scalar_type(high))
            if small.itemsize < a.dtype.itemsize:
                return a.astype(small)
        return a

    def step_async(self, actions):
        """Send the actions (checked here, before any worker moves) and return at once."""
        self._check_open()
        if self._pending is not None:
            raise RuntimeError("step_async called twice without step_wait")
        a = self._check_actions(actions)
        if any(self._links):
            np.copyto(self._actions, a, casting="unsafe")  # checked: every value fits
        if not all(self._links):
            a = self._to_send(a)
        sent = []
        for w, worker in enumerate(self._workers):
            link = self._links[w]
            if link is None:
                first, n = self._slices[w]
                sent.append(worker.ray_step.remote(a[first : first + n]))
                continue
            try:
                link.send()
                sent.append(link)
            except sharedsteps.WorkerLost:
                sent.append(None)
        self._pending = ("sent", sent)

    def _finish_pending(self):
        """Gather a step in flight (kept for ``step_wait``) before other calls, which would
        otherwise run beside it in the linked workers."""
        if self._pending is not None and self._pending[0] == "sent":
            (_, sent), self._pending = self._pending, None
            self._pending = ("done", self._gather_step(sent))

    def _gather_step(self, sent):
        """Each worker's answer to a step (None for one that died), as ``env.step`` returns it:
        SHARED in place of the arrays already in the shared arrays."""
        answers, failure = [], None
        for w, s in enumerate(sent):
            if not isinstance(s, sharedsteps.Link):
                answers.append(None if s is None else self._gather([s])[0])
                continue
            try:
                extra = s.receive()
            except sharedsteps.WorkerLost:
                self._drop_link(w)
                answers.append(None)
                continue
            except TimeoutError:
                # The unanswered links are out of step: their workers go on by Ray calls.
                for v in range(w, self.num_workers):
                    if isinstance(sent[v], sharedsteps.Link):
                        self._drop_link(v)
                raise TimeoutError(
                    f"Ray worker {w} of {self.num_workers} did not answer within {self.timeout} s"
                ) from None
            except Exception as exc:  # the worker's step failed: raised once all have answered
                failure = failure or exc
                answers.append(None)
                continue
            withheld, infos = extra if extra is not None else (False, {})
            answers.append((None if withheld else SHARED, SHARED, SHARED, SHARED, infos))
        if failure is not None:
            raise failure
        return answers

    def step_wait(self):
        """The results of the last ``step_async``."""
        self._check_open()
        if self._pending is None:
            raise RuntimeError("step_wait called without step_async")
        self._finish_pending()
        (_, answers), self._pending = self._pending, None
        infos = {}
        for w, answer in enumerate(answers):
            first, n = self._slices[w]
            end = first + n
            if answer is None:  # the worker died with its episodes
                obs, restart_infos = self._recover(w)
                part = {}
                if self._mode == "same_step":
                    part = dict(results.final_infos(self._obs, first, n), **restart_infos)
                    results.put(self._obs, obs, first, n)
                self._rewards[first:end] = 0.0
                self._terminated[first:end] = False
                self._truncated[first:end] = True
            else:
                obs, rewards, terminated, truncated, part = answer
                if obs is not None and not isinstance(obs, str):  # None: frozen, the last stays
                    results.put(self._obs, obs, first, n)
                if not isinstance(rewards, str):
                    self._rewards[first:end] = rewards
                    self._terminated[first:end] = terminated
                    self._truncated[first:end] = truncated
            self._place(part, first, n, infos)
        infos = self._with_steady(infos)
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
        return copy_obs(obs) if self.copy else obs

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
        for w in range(len(getattr(self, "_links", []))):
            self._drop_link(w)
        workers, self._workers = getattr(self, "_workers", []), []
        if ray is not None and ray.is_initialized():
            for worker in workers:
                ray.kill(worker, no_restart=True)
        listener, self._listener = getattr(self, "_listener", None), None
        if listener is not None:
            listener.close()
        shared, self._shared = getattr(self, "_shared", None), None
        if shared is not None:
            # The env's arrays become copies; views handed out keep the mapping alive.
            for name in ("_obs", "_rewards", "_terminated", "_truncated", "_actions", "_steady"):
                setattr(self, name, copy_obs(getattr(self, name)))
            shared.close()

    # -- pickling: the workers' envs travel, and new workers continue them -------------------

    def __getstate__(self):
        if self._pending is not None:
            self.step_wait()
        envs = self._gather(self._call("get_env"))
        transient = ("_workers", "_pending", "_shared", "_listener", "_links")
        state = {k: v for k, v in self.__dict__.items() if k not in transient}
        state["envs"] = envs
        return state

    def __setstate__(self, state):
        envs = state.pop("envs")
        self.__dict__.update(state)
        connect()
        check_room(self.num_workers, self._options)
        self._pending = None
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
