"""The AISysProj face: vecenv's two-agent games as AISysProj server environments.

The server loads them as plugins (``vecenv.aisys:ConnectX``, ``vecenv.aisys:TicTacToe``,
``vecenv.aisys:RockPaperScissors``); each is a ``GenericEnvironment`` whose agent plays one seat
against a built-in agent of the game (see ``environment``).
"""

from .environment import (
    ConnectX,
    GameEnvironment,
    RockPaperScissors,
    StateError,
    TicTacToe,
    game_environment,
)
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
    "GameEnvironment",
    "GenericEnvironment",
    "RockPaperScissors",
    "RunData",
    "StateError",
    "TicTacToe",
    "game_environment",
]
