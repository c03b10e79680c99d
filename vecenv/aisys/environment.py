"""Two-agent games as AISysProj environments: the agent plays one seat against a built-in agent.

``GameEnvironment`` is one environment for any of vecenv's two-agent Kaggle games; ``ConnectX``,
``TicTacToe`` and ``RockPaperScissors`` are it for one game each. ``config_json`` (a dict or None):

- ``opponent``: a built-in agent of the game (default: the game's first, e.g. connectx "random");
- ``seat``: 0 or 1, the seat the agent plays, or "alternate" (the run's seed decides); default 0;
- ``configuration``: the game's Kaggle configuration (e.g. ``{"rows": 5}``).

A run's state is JSON: the game, opponent, seat, configuration, the seed of the opponent's random
stream and ``steps``, every Kaggle step's actions by seat (None for a seat that did not move). It
is continued by playing those steps again on the Kaggle face, the opponent's moves computed by its
numba policy on an engine stepped alongside (and checked against the recorded ones), so the same
state always gives the same continuation. Matches just played are kept in a per-instance cache
keyed by their state (``CACHE_SIZE`` of them), so a run played in order costs one step per action.

An action request is an ``ActionRequest`` whose ``content`` is ``{"observation": ..., "legal":
[...], "configuration": ...}``: the agent's Kaggle observation (shared fields included), its legal
moves and the game's configuration. An action is a legal move as an int; anything else is refused
with an error and changes nothing. After the agent's move the opponent replies (in rps both move at
once); the run's outcome is the agent's final Kaggle reward (1 win, 0 draw, -1 loss; rps: its
score).
"""

import contextlib
import html
import json

import numpy as np

from vecenv import kaggle, registry
from vecenv.kaggle.schema import configuration as check_configuration
from vecenv.kernels.turns import ACTIVE
from vecenv.seats import Seats, check_agent
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
from .pages import Pages


def game_settings(game):
    """The server settings of a game's environment."""
    settings = EnvSettings()
    settings.INITIAL_RATING = 0.0
    settings.RATING_OBJECTIVE = "max"
    settings.MIN_RUNS_FOR_FULLY_EVALUATED = 20
    settings.NUMBER_OF_ACTION_REQUESTS = 5
    settings.CAN_ABANDON_RUNS = True
    settings.DESCRIPTION = (
        f"<p>{html.escape(game)} against a built-in agent: the outcome of a run is the agent's "
        "final reward (1 win, 0 draw, -1 loss; rps: its score).</p>"
    )
    return settings


class Match:
    """One run being played: the Kaggle environment, and an engine stepped alongside on which the
    opponent's policy moves."""

    def __init__(self, game, configuration, opponent, seat, seed):
        self.game, self.opponent, self.seat, self.other = game, opponent, seat, 1 - seat
        self.configuration, self.seed = configuration, seed
        self.env = kaggle.make(game, configuration=configuration)
        spec = registry.get_spec(self.env.name)
        _, engine_config = check_configuration(spec, configuration)
        self.engine = kaggle_engine(self.env.name, engine_config, seed)
        # The Kaggle game is the engine's episode, its deal and stream included (a game with
        # chance deals from the seed, so the same state always plays on alike).
        self.env.start_record(self.engine.get_state(0))
        self.seats = Seats(self.engine)
        self.seats.assign(opponent, np.array([self.other]))
        self.seats.new_matches(np.ones(1, dtype=np.bool_))
        self._acts = np.zeros((1, 2), dtype=np.int64)
        self.low = int(self.engine.action.low[0])
        self.high = int(self.engine.action.high[0])
        self.steps = []
        self.shared = [
            k for k, v in self.env.specification["observation"].items() if v.get("shared")
        ]

    # -- playing -------------------------------------------------------------------------------

    @property
    def done(self):
        return self.env.done

    def _active(self, k):
        return self.env.state[k].status == "ACTIVE"

    def step(self, agent_action, recorded=None):
        """One Kaggle step: the agent's action where it is to move, the opponent's policy where
        it is. Returns the opponent's move (None when it did not move)."""
        acts = self._acts
        acts[:] = self.low
        status = self.engine.states["status"][0]
        mine = self._active(self.seat)
        theirs = self._active(self.other)
        if (status[self.seat] == ACTIVE) != mine or (status[self.other] == ACTIVE) != theirs:
            raise RuntimeError("the engine and the Kaggle environment disagree on who moves")
        reply = None
        if theirs:
            self.seats.moves(acts)
            reply = int(acts[0, self.other])
            if recorded is not None and recorded != reply:
                raise StateError(
                    f"step {len(self.steps)}: the opponent's recorded move {recorded!r} is not "
                    f"its policy's ({reply})"
                )
        if mine:
            acts[0, self.seat] = agent_action
        self.engine.step(acts)
        actions = [None, None]
        actions[self.seat] = agent_action if mine else None
        actions[self.other] = reply
        self.env.step([0 if a is None else a for a in actions])
        self.steps.append(actions)
        return reply

    def advance(self):
        """The opponent moves until the agent is to move or the game is over; its moves."""
        replies = []
        while not self.done and not self._active(self.seat):
            replies.append(self.step(None))
        return replies

    def play(self, action):
        """The agent's move (legal: see ``refusal``) and the opponent's replies; their moves."""
        reply = self.step(action)
        return ([] if reply is None else [reply]) + self.advance()

    def replay(self, steps):
        """Play recorded steps again (the state a run was left in)."""
        if not isinstance(steps, list):
            raise StateError("steps must be a list")
        for index, recorded in enumerate(steps):
            if self.done:
                raise StateError(f"step {index} follows the end of the game")
            if not (isinstance(recorded, list) and len(recorded) == 2):
                raise StateError(f"step {index} is not a pair of actions")
            mine = recorded[self.seat]
            if self._active(self.seat):
                problem = self.refusal(mine)
                if problem:
                    raise StateError(f"step {index}: {problem}")
            elif mine is not None:
                raise StateError(f"step {index}: the agent moved out of turn")
            theirs = recorded[self.other]
            if not self._active(self.other) and theirs is not None:
                raise StateError(f"step {index}: the opponent moved out of turn")
            if self._active(self.other) and not is_integer(theirs):
                raise StateError(f"step {index}: the opponent's move is missing")
            self.step(mine, recorded=theirs)
        if not self.done and not self._active(self.seat):
            raise StateError("the state stops while the opponent is to move")

    def nbytes(self):
        """What this match holds, estimated from above (the live-run cache's measure): its
        engine's arrays, and the Kaggle environment's states, Python lists of an entry (8
        bytes and more) per observation cell and agent, kept again for every step (measured on
        connectx 1000 x 1000: about 27 bytes a cell for a new match, 21 more a step)."""
        cells = sum(
            int(np.prod(f.shape, dtype=np.int64)) * (1 if f.shared else 2)
            for f in self.engine.observation
        )
        return 2 * engine_bytes(self.engine) + 32 * cells * (len(self.env.steps) + 1) + 4096

    # -- what the agent sees -------------------------------------------------------------------

    def legal(self):
        """The agent's legal moves."""
        if "legal" in self.engine.obs:
            return [int(a) + self.low for a in np.flatnonzero(self.engine.obs["legal"][0])]
        return list(range(self.low, self.high + 1))

    def refusal(self, action):
        """Why ``action`` is no move of the agent's now (None when it is one)."""
        if self.done:
            return "the game is over"
        if not is_integer(action):
            return f"an action must be an integer move, got {action!r}"
        if not self.low <= action <= self.high:
            return f"move {action} is out of range [{self.low}, {self.high}]"
        if int(action) not in self.legal():
            return f"move {action} is not legal here (legal: {self.legal()})"
        return None

    def observation(self):
        """The agent's Kaggle observation, shared fields included."""
        obs = dict(self.env.state[self.seat].observation)
        for key in self.shared:
            obs[key] = self.env.state[0].observation.get(key)
        return json.loads(json.dumps(obs))

    def reward(self):
        return plain(self.env.state[self.seat].reward)

    def state(self):
        return {
            "game": self.game,
            "opponent": self.opponent,
            "seat": self.seat,
            "configuration": self.configuration,
            "seed": self.seed,
            "steps": [list(s) for s in self.steps],
        }


def kaggle_engine(name, engine_config, seed):
    """A one-episode engine as the Kaggle face builds its own."""
    from vecenv.engine import Engine

    return Engine(name, num_envs=1, seed=seed, autoreset="disabled", **engine_config)


class GameEnvironment(Pages, GenericEnvironment):
    """A two-agent game against a built-in opponent (``game`` names it; see the module)."""

    game = None
    settings = game_settings("a two-agent game")
    CACHE_SIZE = CACHE_SIZE

    def __init__(self, env_info, config_json):
        super().__init__(env_info, config_json)
        config = {} if config_json is None else config_json
        if not isinstance(config, dict):
            raise ValueError(f"config_json must be an object or null, got {config!r}")
        unknown = set(config) - {"opponent", "seat", "configuration"}
        if unknown:
            raise ValueError(f"unknown config_json keys: {', '.join(sorted(unknown))}")
        if self.game is None:
            raise TypeError("GameEnvironment is played through a game's subclass")
        spec = registry.get_spec(self.game)
        if spec.num_agents != 2 or spec.kaggle is None:
            raise ValueError(f"{self.game} is no two-agent Kaggle game")
        names = registry.game_module(self.game, "agents").NAMES
        self.opponent = config.get("opponent", names[0])
        check_agent(self.game, self.opponent)
        if not isinstance(self.opponent, str):
            raise ValueError("opponent must be a built-in agent's name")
        self.seat = config.get("seat", 0)
        if self.seat != "alternate" and not (is_integer(self.seat) and self.seat in (0, 1)):
            raise ValueError(f"seat must be 0, 1 or 'alternate', got {self.seat!r}")
        self.configuration = dict(config.get("configuration") or {})
        kaggle.make(self.game, configuration=self.configuration)  # refuses a bad configuration
        self._cache = LiveCache(self.CACHE_SIZE)

    # -- matches -------------------------------------------------------------------------------

    def live_limits(self, runs=None, nbytes=None, agent_runs=None, agent_bytes=None):
        """Bound the live matches kept between requests (``LiveCache``): ``runs`` and
        ``nbytes`` in all, ``agent_runs`` and ``agent_bytes`` per agent (None: keep one)."""
        self._cache.configure(runs, nbytes, agent_runs, agent_bytes)

    def _match(self, state, agent=None):
        """``(key, match)``: the match a state is in, from the cache or played again (kept as
        ``agent``'s, where given)."""
        return self._cache.find(state, self._replay, agent)

    def _replay(self, state):
        """The match a state is in, played again from the state."""
        check_state(state, self.game)
        seat = state.get("seat")
        if not (is_integer(seat) and seat in (0, 1)):
            raise StateError(f"seat {seat!r} is not 0 or 1")
        seed = check_seed(state.get("seed"))
        try:
            match = Match(self.game, state.get("configuration"), state.get("opponent"), seat, seed)
        except (ValueError, TypeError) as exc:  # kaggle.InvalidArgument included
            raise StateError(f"not a state of this environment: {exc}") from None
        match.replay(state.get("steps"))
        return match

    # -- the server's interface ----------------------------------------------------------------

    def new_run(self, seed=None):
        """A new run's state (the opponent's opening move in it when it moves first); ``seed``
        (optional) fixes the opponent's random stream."""
        seed = new_seed(seed)
        seat = seed % 2 if self.seat == "alternate" else int(self.seat)
        match = Match(self.game, self.configuration, self.opponent, seat, seed)
        match.advance()
        state = match.state()
        self._cache.keep(state_key(state), match)
        return state

    def get_action_request(self, run_data):
        _, match = self._match(run_data.state, run_data.agent_name)
        return ActionRequest(
            content={
                "observation": match.observation(),
                "legal": match.legal(),
                "configuration": json.loads(json.dumps(dict(match.env.configuration))),
            }
        )

    def act(self, action, run_data):
        try:
            key, match = self._match(run_data.state, run_data.agent_name)
        except StateError as exc:
            return ActionResult.error(f"this run cannot be continued: {exc}")
        problem = match.refusal(action)
        if problem:
            return ActionResult.error(f"Invalid action: {problem}")
        self._cache.take(key)  # from here on it changes
        replies = match.play(int(action))
        state = match.state()
        if not match.done:  # a finished run is never continued: nothing to keep
            self._cache.keep(state_key(state), match, run_data.agent_name)
        extra = replies[0] if len(replies) == 1 else (replies or None)
        message = f"you played {int(action)}"
        if replies:
            message += f", the opponent ({self.opponent}) played {extra}"
        outcome = None
        if match.done:
            outcome = match.reward()
            message += f"; the game is over, your reward: {outcome}"
        return ActionResult(
            new_state=state, message=message, action_extra_info=extra, outcome=outcome
        )

    def get_abandon_outcome(self, run_data):
        with contextlib.suppress(StateError):  # an abandoned run is never continued
            self._cache.take(state_key(run_data.state))
        return -1

    # -- views ---------------------------------------------------------------------------------

    def view_run(self, run_data):
        """The run's Kaggle replay page (a self-contained HTML page)."""
        return self._match(run_data.state)[1].env.render(mode="html")

    def page_summary(self):
        return f"<p>Opponent: {html.escape(self.opponent)}; seat: {html.escape(str(self.seat))}</p>"


def game_environment(game, class_name):
    """``GameEnvironment`` for ``game``, as a class named ``class_name``."""
    return type(
        class_name,
        (GameEnvironment,),
        {
            "game": game,
            "settings": game_settings(game),
            # Found there by name for any game (``vecenv.aisys.__getattr__``), as plugin
            # references ("vecenv.aisys:ConnectX") name it.
            "__module__": "vecenv.aisys",
            "__qualname__": class_name,
            "__doc__": f"{game} against a built-in opponent, as an AISysProj environment.",
        },
    )


ConnectX = game_environment("connectx", "ConnectX")
TicTacToe = game_environment("tictactoe", "TicTacToe")
RockPaperScissors = game_environment("rps", "RockPaperScissors")

__all__ = [
    "ConnectX",
    "GameEnvironment",
    "Match",
    "RockPaperScissors",
    "StateError",
    "TicTacToe",
    "game_environment",
    "game_settings",
]
