"""AISysProj's plugin interface: its data types and ``GenericEnvironment``.

Where the server package ``aisysprojserver`` is importable, its own classes are used (so the
server's ``issubclass(cls, GenericEnvironment)`` check passes for our environments); otherwise
equivalents with the same names, fields and defaults are defined here, so the environments can be
played and tested without the server.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

try:
    from aisysprojserver.env_interface import (
        AbbreviatedRunData,
        ActionHistoryEntry,
        ActionRequest,
        ActionResult,
        AgentDataSummary,
        EnvData,
        EnvInfo,
        GenericEnvironment,
        RunData,
    )
    from aisysprojserver.env_settings import EnvSettings

    SERVER = True
except ImportError:
    SERVER = False

    class EnvSettings:
        """How the server rates agents and sends action requests (class-level defaults; an
        environment sets its own on an instance)."""

        INITIAL_RATING: float = 0.0
        RATING_STRATEGY: str = "average"  # the mean outcome of the agent's recent runs
        MIN_RUNS_FOR_FULLY_EVALUATED: int = 50
        RATING_OBJECTIVE: str = "max"  # "max" or "min"
        NUMBER_OF_ACTION_REQUESTS: int = 5
        CAN_ABANDON_RUNS: bool = False
        STORE_ACTION_HISTORY: bool = True
        DESCRIPTION: str = ""  # HTML

    @dataclasses.dataclass(frozen=True)
    class ActionResult:
        """What an action did: ``new_state`` None means it was refused (``message`` says why);
        ``outcome`` not None means the run is over."""

        new_state: Any = None
        message: str | None = None
        action_extra_info: Any = None
        outcome: Any = None

        @classmethod
        def error(cls, message: str) -> ActionResult:
            return cls(new_state=None, message=message)

    @dataclasses.dataclass(frozen=True)
    class ActionRequest:
        content: Any  # JSON

    @dataclasses.dataclass(frozen=True)
    class ActionHistoryEntry:
        action: Any
        extra_info: Any

    @dataclasses.dataclass(frozen=True)
    class RunData:
        action_history: list[ActionHistoryEntry]
        state: Any
        outcome: Any
        run_id: int
        agent_name: str

    @dataclasses.dataclass(frozen=True)
    class AbbreviatedRunData:
        run_id: int
        outcome: Any
        agent_name: str

    @dataclasses.dataclass(frozen=True)
    class AgentDataSummary:
        agent_name: str
        agent_rating: float
        current_agent_rating: float
        recent_runs: list[AbbreviatedRunData]
        total_number_of_runs: int
        fully_evaluated: bool

    @dataclasses.dataclass(frozen=True)
    class EnvData:
        agents: list[AgentDataSummary]
        recent_runs: list[AbbreviatedRunData]

    @dataclasses.dataclass(frozen=True)
    class EnvInfo:
        display_name: str
        identifier: str

    class GenericEnvironment(abc.ABC):
        """An environment the server runs: ``new_run`` starts a run (its JSON state),
        ``get_action_request`` says what the agent sees, ``act`` applies its action."""

        settings: EnvSettings = EnvSettings()

        def __init__(self, env_info: EnvInfo, config_json: Any):
            self.env_info = env_info
            self.config_json = config_json

        @abc.abstractmethod
        def act(self, action: Any, run_data: RunData) -> ActionResult:
            raise NotImplementedError

        @abc.abstractmethod
        def new_run(self) -> Any:
            raise NotImplementedError

        @abc.abstractmethod
        def get_action_request(self, run_data: RunData) -> ActionRequest:
            raise NotImplementedError

        def get_abandon_outcome(self, run_data: RunData) -> Any:
            raise NotImplementedError

        def view_run(self, run_data: RunData) -> str:
            raise NotImplementedError("viewing runs is not supported by this environment")

        def view_agent(self, agent_data: AgentDataSummary) -> str:
            raise NotImplementedError("viewing agents is not supported by this environment")

        def view_env(self, env_data: EnvData) -> str:
            raise NotImplementedError


__all__ = [
    "SERVER",
    "AbbreviatedRunData",
    "ActionHistoryEntry",
    "ActionRequest",
    "ActionResult",
    "AgentDataSummary",
    "EnvData",
    "EnvInfo",
    "EnvSettings",
    "GenericEnvironment",
    "RunData",
]
