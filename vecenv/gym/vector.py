"""``gymnasium.vector.VectorEnv`` over the engine (``gymnasium.make_vec("vecenv/CartPole-v1")``)."""

import functools

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from vecenv import variants
from vecenv.inputs import autoreset_mode as autoreset_mode_of
from vecenv.opponent import engine_for

from . import spaces


class GameVectorEnv(spaces.PicklesByGame, gymnasium.vector.VectorEnv):
    """N episodes of a game as one ``VectorEnv``, stepped by one compiled call.

    Args:
        game: the game (set by the registration).
        num_envs: N.
        max_episode_steps: the time limit (gymnasium passes the registered one).
        render_mode: None, "rgb_array" or "ansi" (where the game has text frames).
        num_threads: threads for N >= 1024; trajectories never depend on it.
        autoreset_mode: an ``AutoresetMode`` or its value; NEXT_STEP by default, as gymnasium.
        copy: return fresh arrays from ``reset``/``step`` (True, as gymnasium's vector envs) or
            views of buffers that the next call overwrites (False, saves a copy per call).
        seed: the seed used until ``reset(seed=...)`` gives another.
        device: "cpu", or "cuda" for the GPU engine (one-agent games): observations, rewards and
            flags are then CUDA arrays (``vecenv.cuda``), actions host or CUDA arrays. The GPU
            side (``vecenv.cuda.vector``) is a layer above: found through ``vecenv.variants``.
        precision: "float64" (default) or "float32": the rules of a floating-point game in
            float32 (docs/precision.md; the engine's ``precision``).
        **configuration: the game's configuration.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
    game = None  # set by the per-game subclasses that the registration names

    def __init__(
        self,
        game=None,
        num_envs=1,
        max_episode_steps=None,
        render_mode=None,
        num_threads=1,
        autoreset_mode=AutoresetMode.NEXT_STEP,
        copy=True,
        seed=None,
        device="cpu",
        precision="float64",
        **configuration,
    ):
        game = game or self.game
        if precision != "float64":
            configuration["precision"] = precision
        if game is None:
            raise ValueError("GameVectorEnv needs a game")
        mode = autoreset_mode_name = autoreset_mode_of(autoreset_mode)
        make = engine_for
        if device != "cpu":
            gpu = variants.find("cuda", "gym.vector")
            make = functools.partial(gpu.engine_for_device, device=device)
        self._engine = make(
            game,
            num_envs=num_envs,
            seed=seed,
            num_threads=num_threads,
            autoreset=mode,
            max_episode_steps=max_episode_steps,
            **configuration,
        )
        engine = self._engine
        if engine.num_agents != 1:
            raise ValueError(
                f"{engine.name} is played by {engine.num_agents} agents; "
                "this VectorEnv needs a one-agent game"
            )
        self.num_envs = engine.num_envs
        self.metadata = dict(
            spaces.render_metadata(engine.name), autoreset_mode=_GYM_MODES[autoreset_mode_name]
        )
        spaces.check_render_mode(render_mode, self.metadata)
        self.render_mode = render_mode
        self.copy = bool(copy)
        self.single_observation_space = spaces.observation_space(engine)
        self.single_action_space = spaces.action_space(engine)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._bind()

    _VIEWS = ("_obs", "_final_obs", "_rewards", "_terminated", "_truncated", "_plain")

    def _bind(self):
        """Views of the engine's buffers (made again when the env is loaded)."""
        engine = self._engine
        self._obs = spaces.agent_view(engine, engine.obs)
        self._final_obs = (
            spaces.agent_view(engine, engine.final_obs) if engine.final_obs is not None else None
        )
        self._rewards = engine.rewards.reshape(self.num_envs)
        self._terminated = engine.terminated
        self._truncated = engine.truncated
        self._copy = spaces.copy_obs
        # The common case, stepped without the general path's lookups: a small batch's step
        # costs a few microseconds, and each saved call is a few percent of it.
        self._plain = isinstance(self._obs, np.ndarray) and self._final_obs is None
        if getattr(engine, "device", "cpu") != "cpu":
            gpu = variants.find("cuda", "gym.vector")
            self._copy, self._host = gpu.copy_buffers, gpu.to_host
            self._plain = False

    @property
    def engine(self):
        """The underlying engine."""
        return self._engine

    @property
    def num_threads(self):
        return self._engine.num_threads

    def reset(self, *, seed=None, options=None):
        """Reset all episodes, or those of ``options["reset_mask"]`` (a bool array of N);
        ``options["position"]`` starts them from a given position (one for all, or a list with
        one per episode reset; see ``vecenv.positions``)."""
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
        return self._out(self._obs), {}

    def _out(self, arr):
        return self._copy(arr) if self.copy else arr

    @staticmethod
    def _host(arr):
        return arr

    def step(self, actions):
        self._engine.step(actions)
        if self._plain:
            if self.copy:
                return (
                    self._obs.copy(),
                    self._rewards.copy(),
                    self._terminated.copy(),
                    self._truncated.copy(),
                    {},
                )
            return self._obs, self._rewards, self._terminated, self._truncated, {}
        infos = {}
        if self._final_obs is not None:
            done = self._host(self._terminated) | self._host(self._truncated)
            if done.any():
                infos = self._final_infos(done)
        if self.copy:
            return (
                self._copy(self._obs),
                self._copy(self._rewards),
                self._copy(self._terminated),
                self._copy(self._truncated),
                infos,
            )
        return self._obs, self._rewards, self._terminated, self._truncated, infos

    def _final_infos(self, done):
        """Same-step autoreset's infos, laid out as gymnasium's ``_add_info`` lays them."""
        final = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(done):
            final[i] = spaces.episode_obs(self._host(self._final_obs), i)
        return {
            "final_obs": final,
            "_final_obs": done.copy(),
            "final_info": {},
            "_final_info": done.copy(),
        }

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        return tuple(self._engine.render(i, self.render_mode) for i in range(self.num_envs))

    def get_state(self, idx=None):
        """Copies of the state records (all, one or a selection); see ``Engine.get_state``."""
        return self._engine.get_state(idx)

    def set_state(self, state, idx=None):
        """Restore records from ``get_state``; a bad one raises ValueError, changing nothing."""
        self._engine.set_state(state, idx)

    def __repr__(self):
        return (
            f"GameVectorEnv({self._engine.name!r}, num_envs={self.num_envs}, "
            f"autoreset_mode={self.metadata['autoreset_mode']}, "
            f"num_threads={self.num_threads})"
        )


_GYM_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}

# ``vecenv.gym.vector.<game>`` is that game's VectorEnv class (the registered entry point).
__getattr__ = spaces.class_lookup(GameVectorEnv, "VectorEnv")
