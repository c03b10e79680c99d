"""Starting positions: what a game's optional ``position`` hook is given and may raise.

A game whose observation determines its state (a board game: the board and whose turn it is) may
define, in ``rules.py``, ``position(record, config, given)``: write every game field of ``record``
(one state record, its game fields zeroed; the engine owns the header) for the position ``given``
describes, or raise ``PositionError`` naming the field and why the rules cannot represent it.
``given`` is what ``Engine.reset(position=...)`` checked against the spec:

- ``given["observation"]``: {field name: array}, each of the observation field's dtype, shape
  (shared fields) or (agents, *shape) (per-agent fields), and inside its bounds; a field left out
  takes its value at the game's start;
- ``given["status"]``, ``given["reward"]``: (agents,) Kaggle status codes (``turns``) and float64
  rewards, or absent for the game's start values (games played by several agents);
- ``given[key]`` for each of the game's own keys (``POSITION_KEYS`` in its rules, such as chess's
  ``"fen"``) the position holds, unchecked: the hook checks it;

The engine then checks the record as ``set_state`` checks one (``STATE_BOUNDS``, ``check_state``),
so a hook that writes something the rules cannot run is refused too, never run.
"""

import numpy as np


class PositionError(ValueError):
    """A position the rules cannot represent: ``field`` (an observation field, "status",
    "reward" or "step"), the ``agent`` it concerns (None when the field is shared) and why."""

    def __init__(self, field, reason, agent=None):
        self.field, self.reason, self.agent = field, reason, agent
        where = field if agent is None else f"agent {agent}'s {field}"
        super().__init__(f"{where}: {reason}")


def observed(given, name, start):
    """Field ``name`` of the position's observation, or ``start`` (its value at the game's
    start) when the position leaves it out."""
    value = given["observation"].get(name)
    return start if value is None else value


def write_turns(record, given, start_status):
    """A turn-based game's ``status`` and ``reward`` from the position: ``start_status`` (codes)
    and zero rewards where it gives none."""
    record["status"] = given.get("status", np.asarray(start_status, dtype=np.int8))
    record["reward"] = given.get("reward", 0.0)


def require_marks(marks, want):
    """Each agent's mark as the rules fix it (agent k plays ``want[k]``)."""
    for k, (mark, expected) in enumerate(zip(marks.tolist(), want, strict=True)):
        if mark != expected:
            raise PositionError(
                "observation.mark", f"is {mark}; agent {k} plays mark {expected}", agent=k
            )
