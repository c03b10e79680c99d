"""The Kaggle face: kaggle-environments' interface over vecenv's Kaggle games.

``make(name)`` gives an ``Environment`` with ``run``, ``step``, ``reset``, ``train``, ``toJSON``
and ``render``, statuses and rewards as kaggle-environments reports them; ``evaluate`` plays
episodes and returns their final rewards.
"""

from .agents import builtin_callables
from .environment import Environment, evaluate, kaggle_games, make, position_steps
from .errors import DeadlineExceeded, FailedPrecondition, InvalidArgument, NotFound
from .export import export
from .structs import Struct, structify

__all__ = [
    "DeadlineExceeded",
    "Environment",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "Struct",
    "builtin_callables",
    "evaluate",
    "export",
    "kaggle_games",
    "make",
    "position_steps",
    "structify",
]
