"""``gymnasium.Env`` over a one-episode engine (``gymnasium.make("vecenv/CartPole-v1")``)."""

import gymnasium
import numpy as np

from vecenv.inputs import action_array
from vecenv.opponent import engine_for
from vecenv.spec import is_integer

from . import spaces


class GameEnv(spaces.PicklesByGame, gymnasium.Env):
    """One episode of a game as a ``gymnasium.Env``.

    Time limits are left to gymnasium's ``TimeLimit`` wrapper, which ``gymnasium.make`` adds from
    the registered ``max_episode_steps``, as for gymnasium's own classic-control envs; an explicit
    ``episodeSteps`` configuration makes the env truncate by itself as well. ``precision="float32"``
    runs a floating-point game's rules in float32 (docs/precision.md).
    """

    metadata = {"render_modes": []}
    game = None  # set by the per-game subclasses that the registration names

    def __init__(self, render_mode=None, game=None, precision="float64", **configuration):
        game = game or self.game
        configuration["precision"] = precision
        if game is None:
            raise ValueError("GameEnv needs a game")
        limit = None if "episodeSteps" in configuration else 0
        self._engine = engine_for(
            game, num_envs=1, autoreset="disabled", max_episode_steps=limit, **configuration
        )
        spec = self._engine.spec
        if self._engine.num_agents != 1:
            raise ValueError(
                f"{spec.name} is played by {self._engine.num_agents} agents; "
                "the single-agent Env needs a one-agent game"
            )
        self.metadata = dict(self.metadata, **spaces.render_metadata(spec.name))
        spaces.check_render_mode(render_mode, self.metadata)
        self.render_mode = render_mode
        self.observation_space = spaces.observation_space(self._engine)
        self.action_space = spaces.action_space(self._engine)
        action = self._engine.action
        self._discrete = action.discrete
        self._flat = np.zeros((1, action.width), dtype=action.kernel_dtype)
        self._bind()

    _VIEWS = ("_obs", "_rewards", "_terminated", "_truncated")

    def _bind(self):
        """Views of the engine's buffers (made again when the env is loaded)."""
        self._obs = spaces.agent_view(self._engine, self._engine.obs)
        self._rewards = self._engine.rewards
        self._terminated = self._engine.terminated
        self._truncated = self._engine.truncated

    @property
    def engine(self):
        """The underlying one-episode engine."""
        return self._engine

    def reset(self, *, seed=None, options=None):
        """``options={"position": position}`` starts from a given position (games with starting
        positions: ``vecenv.positions``) instead of the game's start."""
        super().reset(seed=seed)
        self._engine.reset(seed=seed, position=spaces.position_option(options))
        return self._observation(), {}

    def _observation(self):
        return spaces.episode_obs(self._obs, 0)

    def _set_action(self, action):
        if self._discrete:
            # Python and numpy integers (0-d integer arrays too), as gymnasium's Discrete admits.
            if is_integer(action):
                if not -(2**63) <= action < 2**63:
                    raise ValueError(f"action out of range: {action!r}")
                self._flat[0, 0] = action
                return
            arr = action_array(self._engine.name, action)
            if arr.shape != () or arr.dtype.kind not in "iu":
                raise ValueError(f"{self._engine.name} action must be an integer, got {action!r}")
            self._flat[0, 0] = arr
            return
        arr = action_array(self._engine.name, action)
        if arr.dtype.kind not in "iuf" or arr.shape != self.action_space.shape:
            raise ValueError(
                f"{self._engine.name} action must be numbers of shape "
                f"{self.action_space.shape}, got {action!r}"
            )
        self._flat[0] = arr.ravel()

    def step(self, action):
        self._set_action(action)
        self._engine.step_flat(self._flat)
        obs = self._observation()
        return (
            obs,
            float(self._rewards[0, 0]),
            bool(self._terminated[0]),
            bool(self._truncated[0]),
            {},
        )

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; "
                "pass render_mode='rgb_array' to gymnasium.make"
            )
            return None
        return self._engine.render(0, self.render_mode)

    def get_state(self):
        """A copy of the episode's full state record (its random stream included)."""
        return self._engine.get_state(0)

    def set_state(self, state):
        """Restore a record from ``get_state``; a bad record raises ValueError, changing nothing."""
        self._engine.set_state(state, 0)


# ``vecenv.gym.env.<game>`` is that game's Env class (the registered entry point).
__getattr__ = spaces.class_lookup(GameEnv, "Env")
