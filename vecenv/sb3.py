"""Stable-Baselines3's ``VecEnv`` over one engine (the ``sb3`` extra).

``VecEnv("CartPole-v1", num_envs=8)`` is what ``DummyVecEnv`` over N gymnasium envs is to SB3,
stepped by one compiled call: episodes reset in the step that ends them (the engine's same-step
autoreset), the returned observation of an ended episode is its new episode's, and its info holds
``terminal_observation`` and ``TimeLimit.truncated``; rewards are float32 and dones bool, as SB3's
buffers take them. ``seed(s)`` seeds the next ``reset`` as SB3 does (env i with ``s + i``, the
stream a single vecenv env seeded ``s + i`` has), later resets continue the streams. A two-agent
game is played against its built-in opponent (``opponent``, ``seat``), as its Gymnasium Env is.

Copies: observations, rewards and dones are fresh arrays each step (SB3's wrappers and rollout
buffers keep them, and the engine reuses its buffers); actions go to the engine without a copy
when they already have its type.
"""

import numpy as np

from vecenv import extras

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv
except ImportError as e:
    raise extras.error("sb3", "vecenv.sb3 (Stable-Baselines3's VecEnv)") from e

from vecenv.gym import spaces
from vecenv.inputs import action_array
from vecenv.opponent import engine_for

# What get_attr/set_attr reach: the engine's settings, read-only, and the render mode.
READABLE = ("name", "config", "num_threads", "max_episode_steps", "render_mode", "spec")


class VecEnv(_SB3VecEnv):
    """N episodes of a vecenv game as a Stable-Baselines3 ``VecEnv`` (see the module).

    Args:
        env: a vecenv game (name or Gymnasium id, e.g. "CartPole-v1" or "cartpole").
        num_envs: N.
        seed: the seed of the first ``reset`` (SB3's ``seed()`` replaces it).
        num_threads: threads for large N; trajectories never depend on it.
        opponent: for a two-agent game, the built-in opponent.
        seat: for a two-agent game, the agent's seat.
        max_episode_steps: the time limit (the game's registered one by default).
        render_mode: "rgb_array" for ``get_images``/``render``.
        precision: "float64" (default) or "float32": a floating-point game's rules in float32
            (docs/precision.md).
        **configuration: the game's configuration.
    """

    def __init__(
        self,
        env,
        num_envs=1,
        seed=None,
        num_threads=1,
        opponent=None,
        seat=0,
        max_episode_steps=None,
        render_mode=None,
        precision="float64",
        **configuration,
    ):
        from vecenv import registry

        spec = registry.get_spec(env)
        if max_episode_steps is None:
            max_episode_steps = spec.gym.get("max_episode_steps")
        self.engine = engine_for(
            spec.name,
            opponent=opponent,
            seat=seat,
            num_envs=num_envs,
            seed=seed,
            num_threads=num_threads,
            autoreset="same_step",
            max_episode_steps=max_episode_steps,
            precision=precision,
            **configuration,
        )
        engine = self.engine
        self._renders = spaces.render_metadata(engine.name)
        spaces.check_render_mode(render_mode, self._renders)
        # (SB3's __init__ reads these through get_attr)
        self.num_envs, self.render_mode = engine.num_envs, render_mode
        self.name, self.config = engine.name, engine.config
        self.max_episode_steps = max_episode_steps
        # SB3's wrappers read the Gymnasium EnvSpec (VecMonitor its id)
        self.spec = _gym_spec(spec)
        super().__init__(
            engine.num_envs, spaces.observation_space(engine), spaces.action_space(engine)
        )
        if seed is not None:
            self.seed(seed)
        self._obs = spaces.agent_view(engine, engine.obs)
        self._final = spaces.agent_view(engine, engine.final_obs)
        self._rewards = engine.rewards.reshape(engine.num_envs)
        self._actions = None

    @property
    def num_threads(self):
        return self.engine.num_threads

    # -- SB3's loop ----------------------------------------------------------------------------

    def reset(self):
        seeds = self._seeds
        seed = None if all(s is None for s in seeds) else [int(s) for s in seeds]
        if seed is not None and any(s is None for s in seeds):
            raise ValueError("seed every env or none of them")
        self.engine.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return spaces.copy_obs(self._obs)

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() without step_async()")
        engine = self.engine
        if engine.num_agents == 1 and not isinstance(actions, np.ndarray):
            actions = action_array(engine.name, actions)
        engine.step(actions)
        terminated, truncated = engine.terminated, engine.truncated
        dones = terminated | truncated
        # Every step's infos say whether it was cut by the time limit, as DummyVecEnv's do.
        infos = [{"TimeLimit.truncated": cut} for cut in (truncated & ~terminated).tolist()]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = spaces.episode_obs(self._final, i)
        return (
            spaces.copy_obs(self._obs),
            self._rewards.astype(np.float32),
            dones.copy(),
            infos,
        )

    def close(self):
        pass

    def get_images(self):
        if self.render_mode != "rgb_array":
            raise ValueError(f"get_images needs render_mode='rgb_array', not {self.render_mode!r}")
        return [self.engine.render(i, "rgb_array") for i in range(self.num_envs)]

    # -- what SB3 asks of the sub-environments -------------------------------------------------

    def _indices(self, indices):
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            indices = [indices]
        out = [int(i) for i in indices]
        bad = [i for i in out if not 0 <= i < self.num_envs]
        if bad:
            raise IndexError(f"env indices {bad} out of range for {self.num_envs} envs")
        return out

    def get_attr(self, attr_name, indices=None):
        """One engine runs every env, so an attribute has one value, given once per env."""
        if attr_name not in READABLE:
            raise AttributeError(f"vecenv's VecEnv has no per-env attribute {attr_name!r}")
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None):
        """Only ``render_mode`` can change, and only for every env at once."""
        if attr_name != "render_mode" or len(self._indices(indices)) != self.num_envs:
            raise AttributeError(f"{attr_name!r} cannot be set per env on vecenv's VecEnv")
        spaces.check_render_mode(value, self._renders)
        self.render_mode = value

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        """``get_state``/``set_state``/``render`` of the chosen episodes (the engine's)."""
        chosen = self._indices(indices)
        if method_name == "get_state":
            return [self.engine.get_state(i) for i in chosen]
        if method_name == "set_state":
            (state,) = method_args
            for i in chosen:
                self.engine.set_state(state, i)
            return [None] * len(chosen)
        if method_name == "render":
            mode = method_kwargs.get("mode", self.render_mode or "rgb_array")
            return [self.engine.render(i, mode) for i in chosen]
        raise AttributeError(f"vecenv's VecEnv has no per-env method {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def __repr__(self):
        return f"vecenv.sb3.VecEnv({self.name!r}, num_envs={self.num_envs})"


def _gym_spec(spec):
    import gymnasium

    gym_id = spec.gym.get("id")
    if not gym_id:
        return None
    try:
        return gymnasium.spec(f"vecenv/{gym_id}")
    except gymnasium.error.Error:
        return None
