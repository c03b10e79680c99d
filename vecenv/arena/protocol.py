"""AISysProj's protocol v1 on the wire: the request an agent sends to ``PUT /act/<env>``, checked
field by field, and the errors the arena answers with.

A request: ``{"protocol_version": 1, "agent", "pwd", "actions": [{"run", "act_no", "action"}],
"parallel_runs": true, "to_abandon": [run, ...], "client": ""}``; unknown fields are ignored, as
AISysProj does. Anything malformed is an ``ArenaError`` (HTTP 400) before the database is touched.
"""

import dataclasses
from typing import Any

from vecenv.engine import is_integer

PROTOCOL_VERSION = 1
MAX_BODY = 1 << 20  # bytes of one request
MAX_ACTIONS = 1000  # actions (and runs to abandon) in one request
MAX_NAME = 64  # characters of an agent's or environment's identifier


class ArenaError(Exception):
    """A request the arena refuses: the HTTP status and a message saying why."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def bad_request(message):
    return ArenaError(400, message)


@dataclasses.dataclass(frozen=True)
class Action:
    run: str
    act_no: int
    action: Any


@dataclasses.dataclass(frozen=True)
class Request:
    agent: str
    pwd: str
    actions: tuple = ()
    parallel_runs: bool = True
    to_abandon: tuple = ()
    client: str = ""


def _string(body, key, default=None):
    value = body.get(key, default)
    if not isinstance(value, str):
        raise bad_request(f"field {key!r} must be a string, got {type(value).__name__}")
    return value


def _list(body, key):
    value = body.get(key, [])
    if value is None:
        return []
    if not isinstance(value, list):
        raise bad_request(f"field {key!r} must be a list")
    if len(value) > MAX_ACTIONS:
        raise bad_request(f"field {key!r} has {len(value)} entries, at most {MAX_ACTIONS}")
    return value


def _action(index, item):
    where = f"actions[{index}]"
    if not isinstance(item, dict):
        raise bad_request(f"{where} must be an object with run, act_no and action")
    run = item.get("run")
    if not isinstance(run, str):
        raise bad_request(f"{where}.run must be a string (a run's identifier)")
    act_no = item.get("act_no")
    if not is_integer(act_no) or isinstance(act_no, bool) or act_no < 0:
        raise bad_request(f"{where}.act_no must be a non-negative integer")
    if "action" not in item:
        raise bad_request(f"{where} has no action")
    return Action(run, int(act_no), item["action"])


def parse_request(body):
    """The ``Request`` in a decoded JSON body (an ``ArenaError`` if it is none)."""
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    version = body.get("protocol_version", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        raise bad_request(f"unsupported protocol version {version!r} (this arena speaks 1)")
    if "agent" not in body:
        raise bad_request("no agent was given")
    if "pwd" not in body:
        raise ArenaError(401, "no password (pwd) was given")
    parallel = body.get("parallel_runs", True)
    if not isinstance(parallel, bool):
        raise bad_request("field 'parallel_runs' must be true or false")
    abandon = _list(body, "to_abandon")
    if not all(isinstance(run, str) for run in abandon):
        raise bad_request("field 'to_abandon' must be a list of run identifiers (strings)")
    return Request(
        agent=_string(body, "agent"),
        pwd=_string(body, "pwd"),
        actions=tuple(_action(i, item) for i, item in enumerate(_list(body, "actions"))),
        parallel_runs=parallel,
        to_abandon=tuple(abandon),
        client=_string(body, "client", ""),
    )
