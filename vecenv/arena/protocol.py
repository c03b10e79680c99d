"""AISysProj's protocol v1 on the wire: the request an agent sends to ``PUT /act/<env>``, checked
field by field, and the errors the arena answers with.

Everything a client names is checked here, before it reaches the database or an environment:
names are short ASCII identifiers, and a run is named by its identifier in one spelling only
(``"13"``; never ``"013"``, ``"+13"`` or digits of other scripts), so two spellings can never
address one run twice in a request.

A request: ``{"protocol_version": 1, "agent", "pwd", "actions": [{"run", "act_no", "action"}],
"parallel_runs": true, "to_abandon": [run, ...], "client": ""}``; unknown fields are ignored, as
AISysProj does. Anything malformed is an ``ArenaError`` (HTTP 400) before the database is touched.
"""

import dataclasses
import re
from typing import Any

from vecenv.spec import is_integer

PROTOCOL_VERSION = 1
MAX_BODY = 1 << 20  # bytes of one request
MAX_ACTIONS = 1000  # actions (and runs to abandon) in one request
MAX_NAME = 64  # characters of an agent's or environment's identifier
NAME = re.compile(r"[A-Za-z0-9_.-]+")
# The one spelling of a run's identifier: [0-9] is ASCII only, where \d and str.isdigit take
# the digits of every script ("\u0661" is 1 to int()).
RUN_ID = re.compile(r"[1-9][0-9]*")
MAX_RUN_ID = 2**31 - 1  # runs.id is an SQL INTEGER: 32 bits on PostgreSQL
MAX_PASSWORD = 200  # characters; the arena's passwords have 43


class ArenaError(Exception):
    """A request the arena refuses: the HTTP status and a message saying why."""

    def __init__(self, status, message, retry_after=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after  # seconds, for a 429's Retry-After


def bad_request(message):
    return ArenaError(400, message)


def shown(text, limit=40):
    """``repr(text)``, cut short: what a message may quote of a client's string."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def is_name(text):
    """Whether ``text`` can be an environment's or agent's identifier."""
    return isinstance(text, str) and len(text) <= MAX_NAME and NAME.fullmatch(text) is not None


def parse_run_id(text):
    """The run identifier ``text`` spells (an int in [1, MAX_RUN_ID]), or None where it spells
    none: the only place the arena reads a client's run identifier."""
    if not (isinstance(text, str) and len(text) <= len(str(MAX_RUN_ID))):
        return None
    if RUN_ID.fullmatch(text) is None or int(text) > MAX_RUN_ID:
        return None
    return int(text)


def _run_id(text, where):
    run = parse_run_id(text)
    if run is None:
        got = shown(text) if isinstance(text, str) else type(text).__name__
        raise bad_request(
            f"{where} must be a run's identifier: a string of ASCII digits without leading zeros, "
            f"1 to {MAX_RUN_ID}; got {got}"
        )
    return run


@dataclasses.dataclass(frozen=True)
class Action:
    run: int
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
    run = _run_id(item.get("run"), f"{where}.run")
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
    agent = _string(body, "agent")
    if not is_name(agent):
        raise bad_request(
            f"field 'agent' must be 1 to {MAX_NAME} ASCII letters, digits, '_', '.' or '-'"
        )
    pwd = _string(body, "pwd")
    if not (len(pwd) <= MAX_PASSWORD and pwd.isascii()):
        raise bad_request(f"field 'pwd' must be at most {MAX_PASSWORD} ASCII characters")
    parallel = body.get("parallel_runs", True)
    if not isinstance(parallel, bool):
        raise bad_request("field 'parallel_runs' must be true or false")
    abandon = [_run_id(run, f"to_abandon[{i}]") for i, run in enumerate(_list(body, "to_abandon"))]
    actions = [_action(i, item) for i, item in enumerate(_list(body, "actions"))]
    seen = set()
    for run in abandon + [action.run for action in actions]:
        if run in seen:  # on the parsed identifiers: each run is changed once a request
            raise ArenaError(409, f"run {run} appears twice in this request")
        seen.add(run)
    return Request(
        agent=agent,
        pwd=pwd,
        actions=tuple(actions),
        parallel_runs=parallel,
        to_abandon=tuple(abandon),
        client=_string(body, "client", ""),
    )
