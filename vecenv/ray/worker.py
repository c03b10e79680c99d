"""One slice of a distributed ``VectorEnv``'s episodes, in one Ray actor.

A ``Worker`` holds a local ``GameVectorEnv`` or ``MultiAgentVectorEnv`` whose engine plays
episodes ``first .. first + n - 1`` of the whole batch. The driver (``vecenv.ray.vector``) calls
it through Ray, or, where both are on one machine, links it to its shared arrays
(``vecenv.ray.sharedarrays``) and wakes it through a socket (``vecenv.ray.sharedsteps``). After a
restart by Ray it starts its episodes again from their seeds (``recover``).
"""

import os
import pickle
import threading

import numpy as np

from vecenv.gym.multiagent import MultiAgentVectorEnv
from vecenv.gym.spaces import copy_obs
from vecenv.gym.vector import GameVectorEnv
from vecenv.inputs import autoreset_mode as autoreset_mode_of

from . import results, sharedarrays, sharedsteps
from .cluster import ray

SHARED = "shared"  # in an answer: the arrays are in the driver's shared memory already


class Worker:
    """One slice of the episodes, in one Ray actor: a local ``GameVectorEnv`` or
    ``MultiAgentVectorEnv`` (``make["kind"]``; buffers, no copies) whose engine plays episodes
    ``first .. first + n - 1`` of the whole batch."""

    def __init__(self, make, first, seed):
        if isinstance(make, bytes):  # a pickled env, where a VectorEnv is loaded
            self.env = pickle.loads(make)
        else:
            make = dict(make)
            self.env = _env_class(make.pop("kind"))(**make)
            self.engine.first_episode = first
            self.env.reset(seed=seed)
        # The infos every step gives (a multi-agent env's masks): kept in the shared arrays.
        self.steady = tuple(self._steady_infos())
        self.mode = autoreset_mode_of(self.env.metadata["autoreset_mode"])
        self.skip = False  # next-step mode after a restart: the next step is the reset step
        self.frozen = False  # disabled mode after a restart: frozen until reset
        self.restart_obs = None  # the observations the episodes started again from
        self.restart_infos = {}  # and their steady infos
        self.first, self.n = first, self.env.num_envs
        self.shared = None  # this slice of the driver's shared arrays, where linked
        self.direct = False  # the engine writes its observations straight into them
        self.lock = threading.Lock()  # the linked steps' thread and Ray's calls take turns
        self.conn = None

    @property
    def engine(self):
        engine = self.env.engine
        return getattr(engine, "inner", engine)  # a two-agent game's OpponentEngine

    def _steady_infos(self):
        """Copies of the infos a step always gives (none for a one-agent env)."""
        infos = self.env._infos() if hasattr(self.env, "_infos") else {}
        return {k: np.array(v) for k, v in infos.items()}

    def describe(self):
        """The spaces, metadata, the kernels' action dtype (actions of that type pass without a
        copy), and each result array's per-episode shape and dtype (flat names)."""
        env = self.env
        act_dtype = getattr(env.engine, "_act_dtype", np.dtype(np.int64))
        arrays = results.flat_results(
            env._obs, env._rewards, env._terminated, env._truncated, self._steady_infos()
        )
        arrays["actions"] = np.zeros(env.action_space.shape, dtype=act_dtype)
        layout = {k: (v.shape[1:], v.dtype) for k, v in arrays.items()}
        return env.single_observation_space, env.single_action_space, env.metadata, layout

    def reset(self, seed, mask, options):
        with self.lock:
            self.skip = self.frozen = False
            if mask is not None:
                options = dict(options or {}, reset_mask=mask)
            obs, infos = self.env.reset(seed=seed, options=options)
            return self._publish_obs(obs), infos

    def step(self, actions):
        if self.skip or self.frozen:
            # The episodes lost with the old process: the reset step (next-step mode), or still
            # frozen (disabled mode), as the local env would do after a truncation.
            env = self.env
            trunc = np.full_like(env._truncated, self.frozen)
            self.skip = False
            # Frozen: the caller keeps the last observations and steady infos.
            obs = None if self.frozen else self.restart_obs
            infos = {} if self.frozen else self.restart_infos
            return obs, np.zeros_like(env._rewards), np.zeros_like(trunc), trunc, infos
        return self.env.step(actions)

    def ray_step(self, actions):
        """A step asked by a Ray call (the worker is not linked), its arrays in the answer."""
        with self.lock:
            return self.step(actions)

    def recover(self, seed, link=None):
        """After a restart: the episodes start again from ``seed`` (an int, or this slice's
        per-episode seeds), as at the first reset. Returns their observations, steady infos
        and whether the worker is linked (``link``: ``link``'s arguments but the last)."""
        with self.lock:
            self.env.reset(seed=seed)
            self.restart_obs = copy_obs(self.env._obs)
            self.restart_infos = self._steady_infos()
            self.skip = self.mode == "next_step"
            self.frozen = self.mode == "disabled"
        # The driver keeps the lost episodes' last observations in the shared arrays.
        linked = link is not None and self.link(*link, fill=False)
        return self.restart_obs, self.restart_infos, linked

    # -- linked: steps through the driver's shared memory -------------------------------------

    def link(self, layout, address, index, timeout, fill=True):
        """Map the driver's shared arrays and connect to its socket where both are on this
        machine, and from then on take the steps the driver sends there; True if linked.
        ``fill`` copies the current observations into the shared arrays."""
        self.unlink()
        arrays = sharedarrays.attach(layout)
        if arrays is None:
            return False
        try:
            conn = sharedsteps.connect(address, index, timeout)
        except OSError:
            return False
        with self.lock:
            self.shared = results.slice_results(arrays, self.first, self.n)
            self._write_obs_in_place(fill)
            if fill:
                for key, value in self._steady_infos().items():
                    self.shared["infos"][key][:] = value
            self.conn = conn
        sharedsteps.start(conn, self._linked_step, self.lock)
        return True

    def unlink(self):
        if self.conn is not None:
            self.conn.close()  # its thread ends
        with self.lock:
            if self.direct:  # the engine's own arrays again, with the same observations
                engine = self.env.engine
                engine.observe_into(tuple(v.copy() for v in engine._obs))
                self.env._bind()
            self.conn = self.shared = None
            self.direct = False

    def _write_obs_in_place(self, fill):
        """Have the engine write its observations straight into the shared arrays (where it can:
        a two-agent game's OpponentEngine copies them instead)."""
        engine = self.env.engine
        if self.steady or not hasattr(engine, "observe_into"):  # multi-agent: views of its own
            if fill:
                results.put(self.shared["obs"], self.env._obs, 0, self.n)
            return
        obs = self.shared["obs"]
        views = tuple(
            (obs[f.name] if isinstance(obs, dict) else obs).reshape(mine.shape)
            for f, mine in zip(engine.observation, engine._obs, strict=True)
        )
        if fill:
            for view, mine in zip(views, engine._obs, strict=True):
                view[...] = mine
        engine.observe_into(views)
        self.env._bind()
        self.direct = True

    def _linked_step(self):
        """A step the driver sent through the link: the actions and results are in the shared
        arrays; the answer is None, or (observations withheld, infos) where there is more."""
        obs, rewards, terminated, truncated, infos = self.step(self.shared["actions"])
        shared = self.shared
        if obs is not None:  # None: frozen, the driver keeps the last observation
            self._publish_obs(obs)
        shared["rewards"][:] = rewards
        shared["terminated"][:] = terminated
        shared["truncated"][:] = truncated
        extra = dict(infos)
        for key in self.steady:
            if key in extra:  # absent: frozen, the driver keeps the last
                shared["infos"][key][:] = extra.pop(key)
        return (obs is None, extra) if obs is None or extra else None

    def _publish_obs(self, obs):
        """Observations for the driver: SHARED once they are in its shared arrays (where
        linked), else themselves."""
        if self.shared is None:
            return obs
        if not (self.direct and obs is self.env._obs):
            results.put(self.shared["obs"], obs, 0, self.n)
        return SHARED

    def get_env(self):
        with self.lock:
            return pickle.dumps(self.env)

    def get_state(self):
        with self.lock:
            return self.env.get_state()

    def set_state(self, state):
        with self.lock:
            self.env.set_state(state)

    def render(self):
        with self.lock:
            return self.env.render()

    def where(self):
        """(node id, process id): where this slice runs."""
        return ray.get_runtime_context().get_node_id(), os.getpid()


def _env_class(kind):
    """The local VectorEnv a worker holds: ``GameVectorEnv`` ("game") or ``MultiAgentVectorEnv``
    ("multiagent")."""
    return MultiAgentVectorEnv if kind == "multiagent" else GameVectorEnv
