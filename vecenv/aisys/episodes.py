"""One-agent games as AISysProj environments: a run is one episode.

``EpisodeEnvironment`` is one environment for any of vecenv's one-agent games (the classic-control
games, the csuite games, ...); ``episode_environment`` makes it a class for one game, as
``vecenv.aisys.environment_class`` does for every game. ``config_json`` (an object or None) holds
the game's configuration parameters, as ``Engine(game, **configuration)`` takes them (e.g.
``{"sutton_barto_reward": true}`` for cartpole), and optionally ``max_steps``: the steps after
which an episode is truncated (an integer in [1, 100000]). Its default is the game's own time
limit: its ``episodeSteps`` configuration where it has one (the classic-control games, where it is
gymnasium's ``max_episode_steps``: CartPole 500, MountainCar 200, ...), else gymnasium's
``max_episode_steps`` from the spec, else 1000 (the continuing csuite games, which never end on
their own).

A run's state is JSON: ``{"game", "configuration", "seed", "max_steps", "actions"}``, every action
taken so far. It is continued by playing the actions again on a fresh one-episode engine (autoreset
disabled) seeded with the run's seed, so the same state always gives the same continuation; the
episodes just played are kept in a per-instance cache keyed by their state (``CACHE_SIZE`` of
them), so a run played in order costs one engine step per action.

An action request is an ``ActionRequest`` whose ``content`` is ``{"observation", "step",
"max_steps", "action_space"}``: the observation as JSON (nested lists, a number for a scalar, an
object of them for a game with several fields), the actions taken so far, the time limit, and the
action space: ``{"discrete": true, "low", "high"}`` (an integer action in [low, high]) or
``{"discrete": false, "shape", "low", "high"}`` (numbers nested as ``shape``; a bare number where
the action has one component; null bounds for infinite ones). A continuous action may lie outside
[low, high]: the game clips it exactly as gymnasium does (MountainCarContinuous still charges the
square of the action sent), so a run equals the episode of vecenv's engine or Gymnasium face with
the same seed and actions; it must be finite and within float32 range, the action space's dtype.
Anything else (a bool, a float for a discrete game, a string, a wrong shape, NaN, a number out of
range) is refused with an error and changes nothing.

The outcome is the episode's return, the sum of its rewards, once it terminates or is truncated at
``max_steps``. An abandoned run scores the lowest return it could still have reached: its return
so far plus the game's smallest reward (from its spec) for every step left, so abandoning never
beats playing on. A game whose spec gives no smallest reward (MountainCarContinuous) cannot be
abandoned.
"""

import base64
import html
import json
import math
import numbers

import numpy as np

from vecenv import registry
from vecenv.engine import Engine
from vecenv.spec import is_integer

from .common import (
    CACHE_SIZE,
    LiveCache,
    StateError,
    check_seed,
    check_state,
    engine_bytes,
    new_seed,
    plain,
    state_key,
)
from .interface import ActionRequest, ActionResult, EnvSettings, GenericEnvironment
from .pages import Pages, page

DEFAULT_MAX_STEPS = 1000
MAX_STEPS_LIMIT = 100_000  # a state lists every action, and a cold continuation replays them all
FLOAT32_MAX = float(np.finfo(np.float32).max)
STATE_KEYS = ("game", "configuration", "seed", "max_steps", "actions")


def reward_minimum(spec):
    """A game's smallest reward per step, from its spec (None where it gives none)."""
    value = spec.reward.get("minimum")
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def episode_settings(game):
    """The server settings of a one-agent game's environment."""
    spec = registry.get_spec(game)
    settings = EnvSettings()
    settings.INITIAL_RATING = 0.0
    settings.RATING_OBJECTIVE = "max"
    settings.MIN_RUNS_FOR_FULLY_EVALUATED = 20
    settings.NUMBER_OF_ACTION_REQUESTS = 5
    settings.CAN_ABANDON_RUNS = reward_minimum(spec) is not None
    settings.DESCRIPTION = (
        f"<p>{html.escape(spec.title)}: {html.escape(spec.description)}</p>"
        "<p>A run is one episode; its outcome is the episode's return (the sum of its rewards), "
        "to be maximised.</p>"
    )
    return settings


def default_max_steps(spec, configuration):
    """The time limit of a game's episodes when ``max_steps`` is not given."""
    limit = spec.resolve_configuration(configuration).get("episodeSteps")
    return limit or spec.gym.get("max_episode_steps") or DEFAULT_MAX_STEPS


def check_max_steps(value):
    """``value`` as a time limit, or ValueError."""
    if not (is_integer(value) and 1 <= value <= MAX_STEPS_LIMIT):
        raise ValueError(f"max_steps must be an integer in [1, {MAX_STEPS_LIMIT}], got {value!r}")
    return int(value)


def _numbers(value, shape):
    """``value``'s numbers, flat, if it is numbers nested as ``shape``; else None."""
    if not shape:
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
            return [value]
        return None
    if not isinstance(value, (list, tuple)) or len(value) != shape[0]:
        return None
    flat = []
    for item in value:
        part = _numbers(item, shape[1:])
        if part is None:
            return None
        flat.extend(part)
    return flat


def _finite_or_none(value):
    """Nested lists of numbers with every non-finite float as None (JSON has no infinities)."""
    if isinstance(value, list):
        return [_finite_or_none(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _json_array(array):
    value = array.tolist()
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        value = _finite_or_none(value)
    return value


def _copy(action):
    return [_copy(a) for a in action] if isinstance(action, list) else action


class Episode:
    """One run being played: a one-episode engine and what has happened on it."""

    def __init__(self, game, configuration, max_steps, seed):
        self.game, self.configuration, self.max_steps, self.seed = (
            game,
            configuration,
            max_steps,
            seed,
        )
        self.engine = Engine(
            game,
            num_envs=1,
            seed=seed,
            autoreset="disabled",
            max_episode_steps=max_steps,
            **configuration,
        )
        self.action = self.engine.action
        self._flat = np.zeros((1, self.action.width), dtype=self.action.kernel_dtype)
        self.actions = []
        self.rewards = []
        self.total = 0.0

    @property
    def terminated(self):
        return bool(self.engine.terminated[0])

    @property
    def truncated(self):
        return bool(self.engine.truncated[0])

    @property
    def done(self):
        return self.terminated or self.truncated

    # -- actions -------------------------------------------------------------------------------

    def parse(self, action):
        """``(action as recorded, None)`` for an action the game takes now, else
        ``(None, why not)``."""
        if self.done:
            return None, "the episode is over"
        spec = self.action
        if spec.discrete:
            low, high = int(spec.low[0]), int(spec.high[0])
            if not is_integer(action):
                return None, f"an action must be an integer in [{low}, {high}], got {action!r}"
            if not low <= action <= high:
                return None, f"action {action} is out of range [{low}, {high}]"
            return int(action), None
        shape = spec.shape
        flat = _numbers(action, shape)
        if flat is None and spec.width == 1:
            flat = _numbers(action, ())  # a bare number for a one-component action
        if flat is None:
            return None, (
                f"an action must be numbers nested as shape {list(shape)}"
                f"{' (or one number)' if spec.width == 1 else ''}, got {action!r}"
            )
        try:
            values = [float(x) for x in flat]
        except (OverflowError, TypeError, ValueError):
            return None, f"an action's numbers must be finite, got {action!r}"
        if not all(math.isfinite(x) and abs(x) <= FLOAT32_MAX for x in values):
            return (
                None,
                f"an action's numbers must be finite and within float32 range, got {action!r}",
            )
        return np.array(values, dtype=np.float64).reshape(shape).tolist(), None

    def step(self, action):
        """Take ``action`` (as ``parse`` returned it); its reward."""
        self._flat[0] = np.ravel(action)
        self.engine.step_flat(self._flat)
        reward = float(self.engine.rewards[0, 0])
        self.actions.append(action)
        self.rewards.append(reward)
        self.total += reward
        return reward

    def replay(self, actions):
        """Take recorded actions again (the state a run was left in)."""
        if not isinstance(actions, list):
            raise StateError("actions must be a list")
        if len(actions) > self.max_steps:
            raise StateError(f"{len(actions)} actions exceed max_steps {self.max_steps}")
        for index, recorded in enumerate(actions):
            if self.done:
                raise StateError(f"action {index} follows the end of the episode")
            action, problem = self.parse(recorded)
            if problem:
                raise StateError(f"action {index}: {problem}")
            self.step(action)

    # -- what the agent sees -------------------------------------------------------------------

    def observation(self):
        """The observation as JSON: one field's value, or an object of the fields'."""
        fields = {}
        for field in self.engine.observation:
            array = self.engine.obs[field.name]
            fields[field.name] = _json_array(array[0] if field.shared else array[0, 0])
        return next(iter(fields.values())) if len(fields) == 1 else fields

    def action_space(self):
        spec = self.action
        if spec.discrete:
            return {"discrete": True, "low": int(spec.low[0]), "high": int(spec.high[0])}
        return {
            "discrete": False,
            "shape": list(spec.shape),
            "low": _json_array(spec.low.reshape(spec.shape)),
            "high": _json_array(spec.high.reshape(spec.shape)),
        }

    def outcome(self):
        """The return once the episode is over, else None."""
        return plain(self.total) if self.done else None

    def frame(self):
        """The current frame as a PNG, or None where the game has no RGB renderer."""
        renderer = registry.game_module(self.game, "render")
        if renderer is None or not hasattr(renderer, "rgb_array"):
            return None
        from vecenv.render.frames import png_bytes

        return png_bytes(self.engine.render(0, "rgb_array"))

    def nbytes(self):
        """What this episode holds, estimated from above (the live-run cache's measure): its
        engine's arrays and its actions and rewards so far."""
        return 2 * engine_bytes(self.engine) + 64 * (len(self.actions) + 1) + 4096

    def state(self):
        return {
            "game": self.game,
            "configuration": dict(self.configuration),
            "seed": self.seed,
            "max_steps": self.max_steps,
            "actions": _copy(self.actions),
        }


class EpisodeEnvironment(Pages, GenericEnvironment):
    """A one-agent game, one episode per run (``game`` names it; see the module)."""

    game = None
    settings = EnvSettings()
    CACHE_SIZE = CACHE_SIZE

    def __init__(self, env_info, config_json):
        super().__init__(env_info, config_json)
        if self.game is None:
            raise TypeError("EpisodeEnvironment is played through a game's subclass")
        self.spec = registry.get_spec(self.game)
        if self.spec.num_agents != 1:
            raise ValueError(f"{self.game} is no one-agent game")
        config = {} if config_json is None else config_json
        if not isinstance(config, dict):
            raise ValueError(f"config_json must be an object or null, got {config!r}")
        configuration = {k: v for k, v in config.items() if k != "max_steps"}
        try:
            json.dumps(configuration, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(
                f"the configuration must be finite JSON, got {configuration!r}"
            ) from None
        self.spec.resolve_configuration(configuration)  # unknown keys, bad values: ValueError
        max_steps = config.get("max_steps")
        if max_steps is None:
            max_steps = default_max_steps(self.spec, configuration)
        self.configuration = configuration
        self.max_steps = check_max_steps(max_steps)
        self._reward_minimum = reward_minimum(self.spec)
        Episode(self.game, self.configuration, self.max_steps, 0)  # what the engine refuses
        self._cache = LiveCache(self.CACHE_SIZE)

    # -- episodes ------------------------------------------------------------------------------

    def live_limits(self, runs=None, nbytes=None, agent_runs=None, agent_bytes=None):
        """Bound the live episodes kept between requests (``LiveCache``): ``runs`` and
        ``nbytes`` in all, ``agent_runs`` and ``agent_bytes`` per agent (None: keep one)."""
        self._cache.configure(runs, nbytes, agent_runs, agent_bytes)

    def _episode(self, state, agent=None):
        """``(key, episode)``: the episode a state is in, from the cache or played again (kept
        as ``agent``'s, where given)."""
        return self._cache.find(state, self._replay, agent)

    def _replay(self, state):
        check_state(state, self.game)
        if sorted(state) != sorted(STATE_KEYS):
            raise StateError(f"a state has the keys {', '.join(STATE_KEYS)}")
        seed = check_seed(state["seed"])
        configuration = state["configuration"]
        if not isinstance(configuration, dict):
            raise StateError("the configuration is not an object")
        try:
            max_steps = check_max_steps(state["max_steps"])
            # Only the game's own parameters may reach the engine's keywords.
            self.spec.resolve_configuration(configuration)
            episode = Episode(self.game, configuration, max_steps, seed)
        except (ValueError, TypeError) as exc:
            raise StateError(f"not a state of this environment: {exc}") from None
        episode.replay(state["actions"])
        return episode

    # -- the server's interface ----------------------------------------------------------------

    def new_run(self, seed=None):
        """A new run's state; ``seed`` (optional) fixes the episode's random stream."""
        episode = Episode(self.game, self.configuration, self.max_steps, new_seed(seed))
        state = episode.state()
        self._cache.keep(state_key(state), episode)
        return state

    def get_action_request(self, run_data):
        _, episode = self._episode(run_data.state, run_data.agent_name)
        return ActionRequest(
            content={
                "observation": episode.observation(),
                "step": len(episode.actions),
                "max_steps": episode.max_steps,
                "action_space": episode.action_space(),
            }
        )

    def act(self, action, run_data):
        try:
            key, episode = self._episode(run_data.state, run_data.agent_name)
        except StateError as exc:
            return ActionResult.error(f"this run cannot be continued: {exc}")
        action, problem = episode.parse(action)
        if problem:
            return ActionResult.error(f"Invalid action: {problem}")
        self._cache.take(key)  # from here on it changes
        reward = plain(episode.step(action))
        state = episode.state()
        if not episode.done:  # a finished run is never continued: nothing to keep
            self._cache.keep(state_key(state), episode, run_data.agent_name)
        message = f"reward {reward}"
        outcome = episode.outcome()
        steps = len(episode.actions)
        if episode.terminated:
            message += f"; the episode is over (terminated after {steps} steps), return {outcome}"
        elif episode.truncated:
            message += f"; the episode is over (truncated at max_steps {steps}), return {outcome}"
        return ActionResult(
            new_state=state, message=message, action_extra_info=reward, outcome=outcome
        )

    def get_abandon_outcome(self, run_data):
        """The lowest return the run could still reach (see the module)."""
        key, episode = self._episode(run_data.state)
        self._cache.take(key)  # an abandoned run is never continued
        if episode.done:
            return episode.outcome()
        if self._reward_minimum is None:
            raise NotImplementedError(f"{self.game} runs cannot be abandoned")
        left = episode.max_steps - len(episode.actions)
        return plain(episode.total + self._reward_minimum * left)

    # -- views ---------------------------------------------------------------------------------

    def page_summary(self):
        return (
            f"<p>{html.escape(self.spec.title)}; configuration: "
            f"{html.escape(json.dumps(self.configuration, sort_keys=True))}; "
            f"max_steps: {self.max_steps}</p>"
        )

    def view_run(self, run_data):
        """The run: its settings, the final frame where the game draws one, and every step."""
        _, episode = self._episode(run_data.state)
        if episode.terminated:
            status = "terminated"
        elif episode.truncated:
            status = "truncated at max_steps"
        else:
            status = "running"
        agent = html.escape(str(getattr(run_data, "agent_name", "")))
        facts = (
            f"<p>Agent: {agent}; seed: {episode.seed}; configuration: "
            f"{html.escape(json.dumps(episode.configuration, sort_keys=True))}; "
            f"max_steps: {episode.max_steps}</p>"
            f"<p>Steps: {len(episode.actions)}; status: {status}; "
            f"return: {html.escape(str(plain(episode.total)))}</p>"
        )
        png = episode.frame()
        image = ""
        if png is not None:
            data = base64.b64encode(png).decode("ascii")
            image = f'<p><img alt="the last frame" src="data:image/png;base64,{data}"></p>'
        rows = []
        total = 0.0
        for index, (action, reward) in enumerate(
            zip(episode.actions, episode.rewards, strict=True), start=1
        ):
            total += reward
            rows.append(
                f"<tr><td>{index}</td><td>{html.escape(json.dumps(action))}</td>"
                f"<td>{plain(reward)}</td><td>{plain(total)}</td></tr>"
            )
        table = (
            "<table><tr><th>Step</th><th>Action</th><th>Reward</th><th>Return</th></tr>"
            f"{''.join(rows)}</table>"
        )
        title = f"{self.page_title()}: run {html.escape(str(run_data.run_id))}"
        return page(title, facts + image + table)


def episode_environment(game, class_name):
    """``EpisodeEnvironment`` for ``game``, as a class named ``class_name``."""
    return type(
        class_name,
        (EpisodeEnvironment,),
        {
            "game": registry.resolve(game),
            "settings": episode_settings(game),
            "__module__": "vecenv.aisys",
            "__qualname__": class_name,
            "__doc__": f"{game}, one episode per run, as an AISysProj environment.",
        },
    )


__all__ = [
    "DEFAULT_MAX_STEPS",
    "MAX_STEPS_LIMIT",
    "Episode",
    "EpisodeEnvironment",
    "episode_environment",
    "episode_settings",
]
