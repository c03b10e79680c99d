"""N matches of a game of several agents as one batched ``VectorEnv``, for self-play training.

Every output carries a match axis and an agent axis, the layout PufferLib's and CleanRL's
self-play scripts consume: observations ``{field: (N, A, *shape)}`` (a shared field such as the
board repeated per agent), rewards (N, A), terminated/truncated (N, A), and in the infos the
legal-move masks of the agents to move. ``flat`` folds the two axes into one of N * A rows
without a copy.
"""

import gymnasium
import numba as nb
import numpy as np
from gymnasium import spaces as gym_spaces
from gymnasium.vector import AutoresetMode

from vecenv.engine import Engine
from vecenv.inputs import autoreset_mode as autoreset_mode_of
from vecenv.kernels.turns import ACTIVE

from . import spaces

LEGAL = "legal"
_GYM_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}


def read_only(arr):
    view = arr.view()
    view.flags.writeable = False
    return view


def batched(space, head):
    """``space`` with the leading axes ``head`` (a Box stays a Box, a Dict a Dict of them)."""
    if isinstance(space, gym_spaces.Dict):
        return gym_spaces.Dict({k: batched(v, head) for k, v in space.spaces.items()})
    if isinstance(space, gym_spaces.Discrete):
        return gym_spaces.MultiDiscrete(
            np.full(head, space.n), dtype=np.int64, start=np.full(head, space.start)
        )
    shape = head + space.shape
    return gym_spaces.Box(
        np.broadcast_to(space.low, shape), np.broadcast_to(space.high, shape), dtype=space.dtype
    )


# numpy's broadcasting copies cost several times the engine's step at N = 4096 (short inner
# rows, strided statuses); these loops do the same in one pass.
@nb.njit(cache=True)
def _repeat(src, dst):
    """A shared field (N, S) into every agent's row of ``dst`` (N, A, S)."""
    for i in range(dst.shape[0]):
        for k in range(dst.shape[1]):
            for j in range(dst.shape[2]):
                dst[i, k, j] = src[i, j]


@nb.njit(cache=True)
def _masks(status, legal, to_play, mask):
    """``to_play`` (N, A): status ACTIVE; ``mask`` (N, A, M): ``legal`` (N, 1 or A, M) where to
    play, else False."""
    per_agent = legal.shape[1] > 1
    for i in range(mask.shape[0]):
        for k in range(mask.shape[1]):
            active = status[i, k] == ACTIVE
            to_play[i, k] = active
            row = k if per_agent else 0
            for j in range(mask.shape[2]):
                mask[i, k, j] = active & legal[i, row, j]


@nb.njit(cache=True)
def _flags(terminated, truncated, term_out, trunc_out):
    for i in range(term_out.shape[0]):
        for k in range(term_out.shape[1]):
            term_out[i, k] = terminated[i]
            trunc_out[i, k] = truncated[i]


def flat(x):
    """(N, A, ...) arrays, or a dict of them, as (N * A, ...): row ``i * A + k`` is agent k of
    match i. A view of any array this env returns (all are C-contiguous)."""
    if isinstance(x, dict):
        return {k: flat(v) for k, v in x.items()}
    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])


class MultiAgentVectorEnv(gymnasium.vector.VectorEnv):
    """N matches of a game of A >= 2 agents, every agent's view batched, stepped by one call.

    Args:
        game: a game of several agents (connectx, tictactoe, rps, othello, any registered one).
        num_envs: N, the number of matches.
        autoreset_mode: an ``AutoresetMode`` or its value; NEXT_STEP by default, as gymnasium.
        seed: the seed used until ``reset(seed=...)`` gives another (match i draws from the
            stream of ``(seed, i)``, as the engine's episode i).
        num_threads: threads for N >= 1024; trajectories never depend on it.
        copy: return fresh arrays (True) or read-only views of buffers that the next ``reset``,
            ``step`` or ``set_state`` overwrites (False, saves a copy per call).
        max_episode_steps: the time limit in engine steps (plies of a turn-based game); None
            takes the game's ``episodeSteps``.
        render_mode: None, "rgb_array" or "ansi" (where the game has text frames).
        **configuration: the game's configuration (and ``Engine`` options such as ``parallel``).

    Spaces: ``single_observation_space`` is one agent's view (the spec's fields without
    ``legal``: a Box for one field, a Dict otherwise), ``single_action_space`` a Discrete with the
    spec's start; ``observation_space`` puts (N, A) in front of every field's shape and
    ``action_space`` is a MultiDiscrete of shape (N, A).

    ``step(actions)`` takes (N, A) integers; the action of an agent not to move is ignored, but
    every entry must lie in the action space. It returns ``(obs, rewards, terminated, truncated,
    infos)``: obs as the space (dtypes of the spec), rewards (N, A) float64, terminated/truncated
    (N, A) bool (a match ends for all its agents at once). ``infos["to_play"]`` (N, A) bool marks
    the agents whose status is ACTIVE (Kaggle's: to move; both in a simultaneous game), and
    ``infos["action_mask"]`` (N, A, moves) bool their legal moves (the game's ``legal`` field, or
    every move where it has none), all False for an agent not to move. A match truncated by the
    time limit keeps its mover's mask, as a Q-learning target needs it; its next action is ignored
    all the same. Masks follow the observation: after an autoreset they are the new match's.

    Autoreset as gymnasium's (and ``GameVectorEnv``'s): NEXT_STEP starts a new match in the step
    after one ends, ignoring its actions and returning reward 0; SAME_STEP starts it in the step
    that ended it and puts the ended match's observation in ``infos["final_obs"]`` (an object array
    of N, each a ``{field: (A, *shape)}`` or None, with ``_final_obs``) and its masks in
    ``infos["final_info"]`` (``action_mask``/``to_play`` with their ``_`` masks), as
    ``SyncVectorEnv`` lays them out; DISABLED leaves an ended match frozen (the same observation
    and flags, reward 0) until ``reset(options={"reset_mask": mask})``.

    Gymnasium's vector wrappers expect (N,) rewards: they do not apply to this env as it is; a
    flat view (``flat``) gives PufferLib-style (N * A, ...) rows.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        game,
        num_envs=1,
        autoreset_mode="next_step",
        seed=None,
        num_threads=1,
        copy=True,
        max_episode_steps=None,
        render_mode=None,
        **configuration,
    ):
        mode = autoreset_mode_of(autoreset_mode)
        # The engine's same-step autoreset starts the new match inside its step, before the ended
        # one's statuses (its masks) can be read: this face runs that mode on a disabled engine
        # and resets the ended matches itself, which the engine does identically.
        engine = Engine(
            game,
            num_envs=num_envs,
            seed=seed,
            num_threads=num_threads,
            autoreset="disabled" if mode == "same_step" else mode,
            max_episode_steps=max_episode_steps,
            **configuration,
        )
        if engine.num_agents < 2:
            raise ValueError(f"{engine.name} is a one-agent game: use its GameVectorEnv")
        if "status" not in engine.state_dtype.names:
            raise ValueError(f"{engine.name} keeps no statuses: nothing says who is to move")
        if not engine.action.discrete or engine.action.shape != ():
            raise ValueError(f"{engine.name} has no discrete moves to mask")
        self._engine = engine
        self._same_step = mode == "same_step"
        n, a = self.num_envs, self.num_agents = engine.num_envs, engine.num_agents
        self.possible_agents = [f"player_{k}" for k in range(a)]
        self.metadata = dict(spaces.render_metadata(engine.name), autoreset_mode=_GYM_MODES[mode])
        spaces.check_render_mode(render_mode, self.metadata)
        self.render_mode = render_mode
        self.copy = bool(copy)

        self._fields = [f for f in engine.observation if f.name != LEGAL]
        self._legal = next((f for f in engine.observation if f.name == LEGAL), None)
        view = {f.name: spaces.field_space(f) for f in self._fields}
        self.single_observation_space = (
            next(iter(view.values())) if len(view) == 1 else gym_spaces.Dict(view)
        )
        self.single_action_space = spaces.action_space(engine)
        self.observation_space = batched(self.single_observation_space, (n, a))
        self.action_space = batched(self.single_action_space, (n, a))
        self.moves = self.single_action_space.n

        # Per-agent fields are the engine's own buffers; shared ones are repeated into ours,
        # which the kernels see as (N, S) -> (N, A, S).
        self._shared = {
            f.name: np.zeros((n, a) + f.shape, dtype=f.dtype) for f in self._fields if f.shared
        }
        if self._legal is None:  # every move, for whoever is to move
            self._legal_rows = np.ones((n, 1, self.moves), dtype=np.bool_)
        self._to_play = np.zeros((n, a), dtype=np.bool_)
        self._mask = np.zeros((n, a, self.moves), dtype=np.bool_)
        self._terminated = np.zeros((n, a), dtype=np.bool_)
        self._truncated = np.zeros((n, a), dtype=np.bool_)
        # Same-step mode resets ended matches after the step, which zeroes the engine's rewards.
        if self._same_step:
            self._rewards = np.zeros((n, a))
        self._bind()
        self._refresh()

    def _views_of_engine(self):
        return (
            ("_repeats", "_obs", "_views")
            + (() if self._same_step else ("_rewards",))
            + (() if self._legal is None else ("_legal_rows",))
        )

    def _bind(self):
        """Views of the engine's buffers and read-only views of this env's own (made again when
        the env is loaded)."""
        engine = self._engine
        n, a = self.num_envs, self.num_agents
        self._repeats = [
            (engine.obs[name].reshape(n, -1), buf.reshape(n, a, -1))
            for name, buf in self._shared.items()
        ]
        if self._legal is not None:
            legal = engine.obs[LEGAL]
            self._legal_rows = legal.reshape(n, 1 if self._legal.shared else a, self.moves)
        obs = {
            f.name: read_only(self._shared[f.name]) if f.shared else engine.obs[f.name]
            for f in self._fields
        }
        self._obs = obs if len(obs) > 1 else next(iter(obs.values()))
        if not self._same_step:
            self._rewards = engine.rewards
        self._views = {
            "to_play": read_only(self._to_play),
            "action_mask": read_only(self._mask),
            "terminated": read_only(self._terminated),
            "truncated": read_only(self._truncated),
            "rewards": read_only(self._rewards),
        }

    # Pickled with its engine (states and random streams) and its own buffers: a loaded env
    # continues bit-identically.
    def __getstate__(self):
        views = self._views_of_engine()
        return {k: v for k, v in self.__dict__.items() if k not in views}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind()

    @property
    def engine(self):
        """The underlying engine."""
        return self._engine

    @property
    def num_threads(self):
        return self._engine.num_threads

    @property
    def to_play(self):
        """(N, A) bool: the agents to move now (a read-only view, no copy)."""
        return self._views["to_play"]

    @property
    def action_mask(self):
        """(N, A, moves) bool: the legal moves of the agents to move (a read-only view)."""
        return self._views["action_mask"]

    flat = staticmethod(flat)

    # -- buffers -------------------------------------------------------------------------------

    def _refresh_obs(self):
        """Observations and masks from the engine's buffers and statuses."""
        for src, dst in self._repeats:
            _repeat(src, dst)
        _masks(self._engine.states["status"], self._legal_rows, self._to_play, self._mask)

    def _refresh(self):
        engine = self._engine
        self._refresh_obs()
        _flags(engine.terminated, engine.truncated, self._terminated, self._truncated)
        if self._same_step:
            np.copyto(self._rewards, engine.rewards)

    def _out(self, x):
        if not self.copy:
            return x
        return {k: v.copy() for k, v in x.items()} if isinstance(x, dict) else x.copy()

    def _infos(self):
        views = self._views
        return {
            "action_mask": self._out(views["action_mask"]),
            "to_play": self._out(views["to_play"]),
        }

    # -- the VectorEnv interface ---------------------------------------------------------------

    def reset(self, *, seed=None, options=None):
        """Reset all matches, or those of ``options["reset_mask"]`` (a bool array of N);
        ``options["position"]`` starts them from a given position (one for all, or a list with one
        per match reset; see ``vecenv.positions``). ``seed`` is an int (match i gets the stream of
        ``(seed, i)``) or N ints (match i plays as a one-match env seeded ``seed[i]``)."""
        mask = None
        if options is not None and "reset_mask" in options:
            mask = options["reset_mask"]
            if (
                not isinstance(mask, np.ndarray)
                or mask.dtype != np.bool_
                or mask.shape != (self.num_envs,)
            ):
                raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},)")
        if seed is not None:
            self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(
                seed if isinstance(seed, int) else None
            )
        self._engine.reset(seed=seed, mask=mask, position=spaces.position_option(options))
        self._refresh()
        return self._out(self._obs), self._infos()

    def step(self, actions):
        """Step every match with ``actions`` (N, A); an invalid array (shape, dtype, a value
        outside the action space) raises ValueError before any match moves."""
        engine = self._engine
        engine.step(actions)
        self._refresh()
        final = None
        if self._same_step:
            done = engine.terminated | engine.truncated
            if done.any():
                final = self._final_infos(done)
                engine.reset(mask=done)
                self._refresh_obs()
        infos = self._infos()
        if final is not None:
            infos.update(final)
        views = self._views
        return (
            self._out(self._obs),
            self._out(views["rewards"]),
            self._out(views["terminated"]),
            self._out(views["truncated"]),
            infos,
        )

    def _final_infos(self, done):
        """The ended matches' observations and masks, laid out as gymnasium's ``_add_info``."""
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(done):
            final_obs[i] = spaces.episode_obs(self._obs, i)
        keep = done[:, None, None]
        return {
            "final_obs": final_obs,
            "_final_obs": done.copy(),
            "final_info": {
                "action_mask": self._mask & keep,
                "_action_mask": done.copy(),
                "to_play": self._to_play & keep[:, :, 0],
                "_to_play": done.copy(),
            },
            "_final_info": done.copy(),
        }

    def render(self):
        """One frame per match (a tuple), as ``GameVectorEnv``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        return tuple(self._engine.render(i, self.render_mode) for i in range(self.num_envs))

    def get_state(self, idx=None):
        """Copies of the state records (all, one or a selection); see ``Engine.get_state``."""
        return self._engine.get_state(idx)

    def set_state(self, state, idx=None):
        """Restore records from ``get_state``; a bad one raises ValueError, changing nothing.
        In same-step mode a restored finished match starts a new one at once."""
        engine = self._engine
        engine.set_state(state, idx)
        if self._same_step:
            ended = engine.states["done"] != 0
            if ended.any():
                engine.reset(mask=ended)
        self._refresh()

    def __repr__(self):
        return (
            f"MultiAgentVectorEnv({self._engine.name!r}, num_envs={self.num_envs}, "
            f"num_agents={self.num_agents}, autoreset_mode={self.metadata['autoreset_mode']}, "
            f"num_threads={self.num_threads})"
        )


__all__ = ["MultiAgentVectorEnv", "flat"]
