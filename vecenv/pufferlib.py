"""PufferLib's native ``PufferEnv`` for every vecenv game (PufferLib 3.0; see
docs/faces/pufferlib.md).

``PufferEnv("cartpole", num_envs=N)`` is what PufferLib's Ocean environments are: N episodes in one
object, stepped by one compiled call that writes straight into the buffers PufferLib hands it
(shared memory under ``pufferlib.vector.Multiprocessing``): observations, float32 rewards, bool
terminals, truncations and masks, and that reads its int32 (discrete) or float (continuous) actions.
``pufferlib.vector.make(vecenv.pufferlib.env_creator("cartpole"), backend=...)`` runs it under
PufferLib's ``Serial``, ``Multiprocessing`` or native backend and its trainer.

Layout, as PufferLib's multi-agent convention: one row per agent, ``num_agents = N * A``, row
``i * A + k`` is agent k of match i. Observations are one row per agent:
- a game with one observation field gives that field's Box (its shape and dtype);
- several fields are flattened as PufferLib's emulation flattens a Dict observation space
  (``pufferlib.emulation.emulate_observation_space`` of the game's Gymnasium Dict, fields in that
  Dict's order): a Box of the fields' dtype where they share one, else of the bytes (uint8) of the
  aligned record ``obs_dtype``. ``env.observations.view(env.obs_dtype)`` gives the fields by
  name, as ``pufferlib.emulation.nativize`` does; ``obs_fields`` gives each field's place.
  A field shared by the agents (a board) is repeated in every agent's row. Games with choices
  have their ``legal`` field there: the legal moves of the agent to move.
- ``masks`` marks the agents to move (status ACTIVE; both in a simultaneous game, always True in
  a game of one agent); the action of an agent not to move is ignored but must be in range.

Episodes reset inside the step that ends them, as Ocean's do: that step returns the ended
episode's reward and flags with the new episode's observation (no final observation). Actions
out of range (or not finite) raise ValueError before any episode moves. Infos: every
``report_interval`` steps, one dict with the mean ``episode_return`` and ``episode_length`` of the
episodes ended since the last report (agent 0's return; ``n`` of them), when any ended.

Copies: for a game of one agent and one observation field, none on the step path but the
rewards' cast to float32 in the compiled pass (the rules write PufferLib's observation rows and
flags, and keep rewards in float64, exact); a game of several fields (or with ``observe_step``,
or of several agents: their flags and masks per row) is observed
into the engine's buffers and copied byte for byte into PufferLib's rows in the same compiled pass
(a field shared by the agents must be repeated in each row anyway). Actions are copied into the
kernels' dtype (int64/float64) in that pass, after validation; actions of the kernels' dtype
(a torch policy's int64) go to a step compiled for them, without a copy. Actions of any other
dtype or layout are converted first (checked for range before any cast).
"""

import contextlib
import io
import os
import time

import numba
import numpy as np

# PufferLib imports the old gym, whose import prints a four-line notice (gym is unmaintained) to
# stderr where gym_notices is installed: vecenv's users never call gym, so that notice is only
# noise on every import of this face. Exceptions still propagate.
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    import pufferlib
    import pufferlib.emulation

from vecenv import registry
from vecenv.engine import Engine
from vecenv.gym import spaces
from vecenv.inputs import action_array, check_action_dtype
from vecenv.kernels.turns import ACTIVE

__all__ = ["PufferEnv", "env_creator"]


def _remove_resources_link():
    """PufferLib's import leaves a ``resources`` link to its package in the working directory;
    remove it (only that link) so that a run leaves no trace in the user's folder. Processes
    importing this face at once in one folder (a test suite's workers) race for the same link:
    the one that finds it gone has nothing left to do."""
    target = os.path.join(pufferlib.__path__[0], "resources")
    with contextlib.suppress(FileNotFoundError):
        if os.path.islink("resources") and os.readlink("resources") == target:
            os.unlink("resources")


_remove_resources_link()


class PufferEnv(pufferlib.PufferEnv):
    """N episodes of a vecenv game as one native PufferLib env (see the module).

    Args:
        game: a vecenv game (name or Gymnasium id, e.g. "cartpole", "CartPole-v1", "connectx").
        num_envs: N, the episodes (matches) in this env; ``num_agents`` is N * agents.
        buf: PufferLib's buffers (its vector backends pass them), or None to own them.
        seed: the seed (PufferLib passes one per env); episode i draws from the stream of
            ``(seed, i)``, as the engine's.
        num_threads: threads for N >= 1024; trajectories never depend on it.
        max_episode_steps: the time limit; None takes the game's registered one (CartPole-v1:
            500), 0 means none.
        report_interval: steps between info reports.
        precision: "float64" (default) or "float32": a floating-point game's rules in float32
            (docs/precision.md), as Ocean's C environments compute.
        **configuration: the game's configuration.
    """

    def __init__(
        self,
        game="cartpole",
        num_envs=1,
        buf=None,
        seed=0,
        num_threads=1,
        max_episode_steps=None,
        report_interval=128,
        precision="float64",
        **configuration,
    ):
        spec = registry.get_spec(game)
        if max_episode_steps is None:
            max_episode_steps = spec.gym.get("max_episode_steps")
        self.engine = engine = Engine(
            spec.name,
            num_envs=num_envs,
            seed=seed,
            num_threads=num_threads,
            autoreset="same_step",
            max_episode_steps=max_episode_steps,
            precision=precision,
            **configuration,
        )
        if not isinstance(report_interval, int) or report_interval < 1:
            raise ValueError(f"report_interval must be a positive int, got {report_interval!r}")
        self.report_interval = report_interval
        n, a = engine.num_envs, engine.num_agents
        self.num_envs = n
        self.num_agents = n * a
        self.agents_per_env = a
        self._single_box, self.obs_dtype = _observation_layout(engine)
        self.single_observation_space = self._single_box
        self.single_action_space = spaces.action_space(engine)
        self.render_mode = None
        super().__init__(buf)

        # The action PufferLib hands over: int32 per agent (discrete), else the Box's dtype.
        action = engine.action
        self._act_dtype = np.dtype(np.int32) if action.discrete else np.dtype(action.dtype)
        self._act_shape = (self.num_agents,) + action.shape
        self._flat = np.zeros((n, a * action.width), dtype=action.kernel_dtype)

        rows = (n, a)
        self._running = np.zeros(rows, dtype=np.float64)  # each agent's return so far
        self._ended = np.zeros(rows + (2,), dtype=np.float64)  # episodes ended, their returns
        self._steps_at_report = np.zeros(n, dtype=np.int64)
        masks = None
        if a > 1 and "status" in engine.state_dtype.names:
            masks = _rows(self.masks, rows)
        self.obs_fields, direct, copies = _observation_buffers(engine, self.observations, rows)
        if direct is not None:
            engine.observe_into(direct)  # the rules write PufferLib's rows
        self._copies = copies
        self._out_tail = (
            _rows(self.rewards, rows),
            _rows(self.terminals, rows),
            _rows(self.truncations, rows),
            masks,
            copies,
            self._running,
            self._ended,
        )
        self._example = (np.zeros(self._act_shape, dtype=self._act_dtype),) + self._out_tail
        # How many threads a step takes is the engine's policy (``vecenv.threads``): where it
        # may choose threads, every step goes through it, the serial and threaded loops taking
        # the same arguments; else the cheapest call where it applies (arrays by address).
        self._threads = engine.threads
        bound = None
        if not self._threads.possible:
            bound = engine.step_bound(self._flat, self._example, report_interval)
        self._bound = bound is not None
        self._buffers = (self.observations, self.rewards, self.terminals, self.truncations)
        self._table = None
        self._calls = {}  # by thread count: 1 the serial loop, more the threaded one
        if bound is not None:
            self._call, self._head, self._table = bound
        else:
            self._call, self._head = engine.step_into(self._flat, self._example, False)
            self._calls[1] = self._call
        self._since_report = 0
        self._wide_call = None
        if bound is not None and len(self._act_shape) <= 2:
            # (the call checks the rows and size, which fix the shape up to two dimensions)
            self.step = self._bound_step()

    # -- PufferLib's interface -----------------------------------------------------------------

    def reset(self, seed=None):
        """Start every episode (``seed``: episode i gets the stream of ``(seed, i)``; None
        continues the streams) and return ``(observations, [])``."""
        engine = self.engine
        engine.reset(seed=seed)
        self._publish_reset()
        return self.observations, []

    def step(self, actions):
        """Step every episode with ``actions`` (one per agent row) and return PufferLib's
        ``(observations, rewards, terminals, truncations, infos)`` (its own buffers)."""
        # PufferLib's own action buffer (the common case) goes to the compiled step as it is;
        # anything else is checked and converted first (the compiled call checks no types).
        if not (
            actions.__class__ is np.ndarray
            and actions.dtype is self._act_dtype
            and actions.shape == self._act_shape
            and actions.flags.c_contiguous
        ):
            actions = self._coerce(actions)
        if self._bound:
            code = self._call(*self._head, actions)
            return (*self._buffers, []) if code == -1 else self._after_bound_step(code, actions)
        bad = self._step(actions)
        if bad >= 0:
            self._raise_bad_action(bad, actions)
        self._since_report += 1
        if self._since_report == self.report_interval:
            return (*self._buffers, self._report(self._since_report))
        return (*self._buffers, [])

    def _bound_step(self):
        """``step`` as a closure over what it reads, for the compiled call by address: a small
        batch's step costs well under a microsecond, and each attribute lookup saved is a few
        percent of it. The call checks the actions' rows and layout and counts the steps
        between reports itself; only their class, dtype and dimensions (which its types rest
        on) are checked here."""
        call = self._call
        table, state_t, cfg_t, action_t, obs_t, obs_shape = self._head
        dtype, ndim, ndarray = self._act_dtype, len(self._act_shape), np.ndarray
        obs, rewards, terminals, truncations = self._buffers
        after = self._after_bound_step

        def step(actions):
            if actions.__class__ is ndarray and actions.dtype is dtype and actions.ndim == ndim:
                code = call(table, state_t, cfg_t, action_t, obs_t, obs_shape, actions)
                if code == -1:
                    return obs, rewards, terminals, truncations, []
                return after(code, actions)
            return after(-3, actions)

        step.__doc__ = PufferEnv.step.__doc__
        return step

    def _after_bound_step(self, code, actions):
        """The by-address step's result other than a plain step (-1): a report is due (-2),
        a bad action (an episode's index), or actions the call does not take as they are (-3):
        those of the kernels' own dtype (int64 or float64, what a torch policy's actions become)
        go as they are, to a step compiled for them on first use; anything else is checked and
        converted."""
        if code == -3:
            a = action_array(self.engine.name, actions)
            wide = self.engine.action.kernel_dtype
            if a.dtype == wide and a.shape == self._act_shape and a.flags.c_contiguous:
                if self._wide_call is None:
                    self._wide_call = self.engine.step_bound(
                        self._flat, (a,) + self._out_tail, self.report_interval
                    )[0]
                call = self._wide_call
            else:
                a = self._coerce(a)
                call = self._call
            code = call(*self._head, a)
            actions = a
        if code >= 0:
            self._raise_bad_action(code, actions)
        infos = self._report(int(self._table[19])) if code == -2 else []
        return (*self._buffers, infos)

    def close(self):
        pass

    # -- helpers -------------------------------------------------------------------------------

    def _step(self, actions):
        policy = self._threads
        if not policy.possible:
            return self._call(*self._head, (actions,) + self._out_tail)
        k = policy.next()
        call = self._calls.get(k)
        if call is None:  # the threaded loop, compiled (or loaded) on its first use
            call = self._calls[k] = self.engine.step_into(self._flat, self._example, True)[0]
        if k > 1 and numba.get_num_threads() != k:
            numba.set_num_threads(k)
        if not policy.timing:
            return call(*self._head, (actions,) + self._out_tail)
        start = time.perf_counter()
        bad = call(*self._head, (actions,) + self._out_tail)
        policy.record(k, time.perf_counter() - start)
        return bad

    def _coerce(self, actions):
        """``actions`` as PufferLib's own action array, or ValueError (never a silent cast)."""
        name = self.engine.name
        a = action_array(name, actions)
        discrete = self.engine.action.discrete
        check_action_dtype(name, discrete, a.dtype)
        if a.shape != self._act_shape:
            raise ValueError(
                f"{name} actions must have shape {self._act_shape} (one per agent row), "
                f"got {a.shape}"
            )
        if discrete and a.size:
            low, high = self.engine.action.low[0], self.engine.action.high[0]
            lo, hi = a.min(), a.max()
            if lo < low or hi > high:
                row = int(np.flatnonzero((a < low) | (a > high))[0])
                self._raise_row(row, a[row], f"is out of range [{int(low)}, {int(high)}]")
        return np.ascontiguousarray(a, dtype=self._act_dtype)

    def _raise_bad_action(self, episode, actions):
        rows = np.asarray(actions).reshape(self.num_envs, -1)[episode]
        if self.engine.action.discrete:
            low, high = self.engine.action.low[0], self.engine.action.high[0]
            self._raise_row(episode, rows.tolist(), f"is out of range [{int(low)}, {int(high)}]")
        self._raise_row(episode, rows.tolist(), "is not a finite float32")

    def _raise_row(self, row, value, what):
        raise ValueError(f"{self.engine.name}: the action of row {row} {what}: {value}")

    def _publish_reset(self):
        """PufferLib's buffers after a reset (the compiled step keeps them up to date after)."""
        engine = self.engine
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self._running[:] = 0.0
        self._ended[:] = 0.0
        self._steps_at_report[:] = 0
        self._since_report = 0
        if self._table is not None:
            self._table[19] = 0
        masks = self._out_tail[3]
        if masks is not None:
            masks[:] = engine.states["status"] == ACTIVE
        if self._copies is not None:
            for src, dst in zip(*self._copies, strict=True):
                dst[:] = src  # a shared field (one row) goes to every agent's row

    def _report(self, since):
        """Agent 0's mean return and length over the episodes ended since the last report. Every
        step moves every episode by one (same-step autoreset), so the steps of the episodes
        ended are the steps taken less those of the episodes running now, plus those they had
        at the last report."""
        steps = self.engine.states["step"]
        ended = self._ended[:, 0, 0].sum()
        lengths = since * self.num_envs - steps.sum() + self._steps_at_report.sum()
        returns = self._ended[:, 0, 1].sum()
        self._since_report = 0
        if self._table is not None:
            self._table[19] = 0
        self._steps_at_report[:] = steps
        self._ended[:] = 0.0
        if ended == 0:
            return []
        return [
            {
                "episode_return": float(returns / ended),
                "episode_length": float(lengths / ended),
                "n": int(ended),
            }
        ]


def env_creator(game="cartpole", **defaults):
    """A creator for ``pufferlib.vector.make``: ``creator(buf=None, seed=0, **kwargs)`` makes a
    ``PufferEnv`` of ``game`` (``defaults`` and ``kwargs`` are its arguments)."""

    def make(buf=None, seed=0, **kwargs):
        return PufferEnv(game, buf=buf, seed=seed, **{**defaults, **kwargs})

    return make


def _rows(arr, rows):
    """``arr`` (N * A, ...) as (N, A, ...): a view, never a copy (PufferLib's buffers may be
    shared memory that another process reads)."""
    view = arr.view()
    view.shape = rows + arr.shape[1:]  # raises rather than copying
    return view


def _observation_layout(engine):
    """The single observation Box and the record dtype of one agent's row."""
    fields = engine.observation
    if len(fields) == 1:
        box = spaces.field_space(fields[0])
        return box, np.dtype([(fields[0].name, box.dtype, box.shape)])
    dict_space = spaces.observation_space(engine)
    box, record = pufferlib.emulation.emulate_observation_space(dict_space)
    return box, record


def _observation_buffers(engine, observations, rows):
    """How observations reach PufferLib's ``observations`` (N * A, ...): ``(fields, direct,
    copies)``. ``fields`` maps each field name to ``(byte offset, dtype, shape)`` in a row.
    ``direct`` is a one-field tuple of the buffer as the engine's own observation array, for the
    rules to write into (one field of the row's dtype, one row per agent, no ``observe_step``
    relying on the previous observation), else None; ``copies`` is None or the byte views the
    compiled step copies each field through."""
    fields = engine.observation
    n, a = rows
    _, record = _observation_layout(engine)
    layout = {f.name: (record.fields[f.name][1], f.dtype, f.shape) for f in fields}
    if (
        len(fields) == 1
        and observations.dtype == fields[0].dtype
        and (not fields[0].shared or a == 1)
        and not hasattr(engine.rules, "observe_step")
        and observations.flags.c_contiguous
    ):
        return layout, (_rows(observations, rows),), None
    row_bytes = observations.view()
    row_bytes.shape = (n, a, -1)
    row_bytes = row_bytes.view(np.uint8)
    sources, targets = [], []
    for f, arr in zip(fields, engine._obs, strict=True):
        src = arr.view()
        src.shape = (n, 1 if f.shared else a, -1)
        sources.append(src.view(np.uint8))
        offset = layout[f.name][0]
        width = f.dtype.itemsize * int(np.prod(f.shape, dtype=np.int64))
        targets.append(row_bytes[:, :, offset : offset + width])
    return layout, None, (tuple(sources), tuple(targets))
