"""The AISysProj face: every vecenv game as an AISysProj server environment.

The server loads them as plugins, ``vecenv.aisys:<Class>``, one class per game (see
``catalog``): the two-agent games (``ConnectX``, ``TicTacToe``, ``RockPaperScissors``) are played
against a built-in agent of the game (see ``environment``), the one-agent games (``CartPole``,
``MountainCarContinuous``, ``Catch``, ...) one episode per run (see ``episodes``).
``environment_class(game)`` gives any game's class, ``games()`` the games that have one.
"""

from .catalog import class_names, environment_class, games
from .common import StateError
from .environment import (
    ConnectX,
    GameEnvironment,
    RockPaperScissors,
    TicTacToe,
    game_environment,
)
from .episodes import EpisodeEnvironment, episode_environment
from .interface import (
    AbbreviatedRunData,
    ActionHistoryEntry,
    ActionRequest,
    ActionResult,
    AgentDataSummary,
    EnvData,
    EnvInfo,
    EnvSettings,
    GenericEnvironment,
    RunData,
)


def __getattr__(name):
    """A game's environment class by its class name (``vecenv.aisys.CartPole``), made on first
    use."""
    game = class_names().get(name)
    if game is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return environment_class(game)


def __dir__():
    return sorted(set(globals()) | set(class_names()))


__all__ = [
    "AbbreviatedRunData",
    "ActionHistoryEntry",
    "ActionRequest",
    "ActionResult",
    "AgentDataSummary",
    "ConnectX",
    "EnvData",
    "EnvInfo",
    "EnvSettings",
    "EpisodeEnvironment",
    "GameEnvironment",
    "GenericEnvironment",
    "RockPaperScissors",
    "RunData",
    "StateError",
    "TicTacToe",
    "environment_class",
    "episode_environment",
    "game_environment",
    "games",
]
