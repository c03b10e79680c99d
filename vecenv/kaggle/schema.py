"""What the Kaggle face derives from a game's spec: Kaggle's own form of the specification, the
configuration and the checks of actions, all as kaggle-environments applies them.

A game's JSON is Kaggle's plus array extensions (``shape``, ``dtype``, ``low``, ``high``,
``absent``, engine-only fields marked ``"kaggle": false``, and sections for other faces). Kaggle's
specification is that JSON without the extensions, extended as kaggle-environments extends every
specification: its base configuration (episodeSteps, actTimeout, runTimeout) and base observation
(remainingOverageTime, step), a reward that may be null.
"""

import copy
import math
from functools import cache

from vecenv.spec import KAGGLE_BASE_CONFIGURATION

from .errors import InvalidArgument
from .structs import structify

# Keys the engine adds to Kaggle's field schemas, and the sections other faces read.
FIELD_EXTENSIONS = ("shape", "dtype", "low", "high", "absent", "kaggle")
SECTION_EXTENSIONS = ("kaggle", "gym", "csuite", "render")

BASE_OBSERVATION = {
    "remainingOverageTime": {
        "description": "Total remaining banked time (seconds) that can be used in excess of "
        "per-step actTimeouts -- agent is disqualified with TIMEOUT status when this drops "
        "below 0.",
        "shared": False,
        "type": "number",
        "minimum": 0,
        "default": 12,
    },
    "step": {
        "description": "Current step within the episode.",
        "type": "integer",
        "shared": True,
        "minimum": 0,
        "default": 0,
    },
}
BASE_ACTION = {
    "description": "Value returned from the agent based on the observation.",
    "type": "integer",
    "default": 0,
}
SPEC_DEFAULTS = {
    "name": "",
    "title": "",
    "version": "",
    "description": "",
    "configuration": {},
    "agents": [1],
    "reward": {"type": ["number", "null"], "default": 0},
    "info": {},
    "observation": {},
    "action": {"type": "integer", "default": 0},
    "status": {},
}


def _strip(entry):
    if not isinstance(entry, dict):
        return entry
    return {k: copy.deepcopy(v) for k, v in entry.items() if k not in FIELD_EXTENSIONS}


def _extend(base, entries, what):
    """Kaggle's extension of a base schema: a bare value sets a default, a new key is added, a
    key of the same type replaces the base's."""
    fields = copy.deepcopy(base)
    for key, value in entries.items():
        if not isinstance(value, dict):
            if key not in fields:
                raise InvalidArgument(f"{what} {key!r} sets the default of no field")
            fields[key]["default"] = value
        elif key not in fields or fields[key].get("type") == value.get("type"):
            fields[key] = _strip(value)
        else:
            raise InvalidArgument(f"{what} {key!r} cannot extend the base field of another type")
    return fields


def kaggle_specification(spec):
    """The game's specification as kaggle-environments holds it after processing (a fresh copy)."""
    return structify(cached_specification(spec))


@cache
def cached_specification(spec):
    """``kaggle_specification``, built once per game and shared: read it, never change it."""
    raw = {k: v for k, v in spec.raw.items() if k not in SECTION_EXTENSIONS}
    out = {**copy.deepcopy(SPEC_DEFAULTS), **copy.deepcopy(raw)}
    observation = {
        k: v
        for k, v in raw.get("observation", {}).items()
        if not (isinstance(v, dict) and v.get("kaggle") is False)
    }
    out["observation"] = _extend(BASE_OBSERVATION, observation, "observation")
    out["configuration"] = _extend(
        KAGGLE_BASE_CONFIGURATION, raw.get("configuration", {}), "configuration"
    )
    out["action"] = _strip(raw.get("action", SPEC_DEFAULTS["action"]))
    if "reward" in raw:
        out["reward"]["type"] = [out["reward"].get("type", "number"), "null"]
    for key in ("reward", "action"):  # Kaggle fills what a section leaves out from its default
        out[key] = {**SPEC_DEFAULTS[key], **out[key]}
    # kaggle-environments keeps its specification as Structs, which drop every key named "items"
    # (connectx's board schema loses its "items"): so does ours.
    return structify(out)


@cache
def action_schema(spec):
    """The schema Kaggle checks each action against: its base action overlaid with the game's."""
    return {**BASE_ACTION, **cached_specification(spec)["action"]}


def _is_integer(value):
    """JSON Schema's "integer": an int (not a bool) or an integral float."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer()
    return isinstance(value, int)


def _is_number(value):
    return not isinstance(value, bool) and isinstance(value, (int, float))


def _type_ok(value, kind):
    if isinstance(kind, list):
        return any(_type_ok(value, k) for k in kind)
    checks = {
        "integer": _is_integer,
        "number": _is_number,
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    return checks[kind](value) if kind in checks else True


def check_value(schema, value):
    """Kaggle's processing of one value: None takes the schema's default; returns (error or None,
    value). The subset of JSON Schema a game's action and configuration use."""
    if value is None and "default" in schema:
        value = copy.deepcopy(schema["default"])
    kind = schema.get("type")
    if kind is not None and not _type_ok(value, kind):
        return f"{value!r} is not of type {kind!r}", value
    if "enum" in schema and value not in schema["enum"]:
        return f"{value!r} is not one of {schema['enum']}", value
    if _is_number(value):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{value!r} is less than the minimum of {schema['minimum']}", value
        if "maximum" in schema and value > schema["maximum"]:
            return f"{value!r} is greater than the maximum of {schema['maximum']}", value
    return None, value


def configuration(spec, given):
    """Kaggle's configuration for ``given``: every entry's default overlaid with ``given``, each
    checked against its schema (keys the game does not know are kept, as Kaggle keeps them).
    Returns (Kaggle's configuration dict, the engine's configuration overrides)."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InvalidArgument(f"Configuration Invalid: {given!r} is not an object")
    schemas = cached_specification(spec)["configuration"]
    out = {}
    for key, schema in schemas.items():
        err, value = check_value(schema, given.get(key))
        if err:
            raise InvalidArgument(f"Configuration Invalid: {key}: {err}")
        out[key] = value
    for key, value in given.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
    engine = {}
    for key, entry in spec.configuration.items():
        value = out[key]
        if entry.type == "integer" and isinstance(value, float):
            value = int(value)  # JSON Schema counts 6.0 as an integer
        engine[key] = value
    try:
        spec.resolve_configuration(engine)
    except ValueError as exc:
        raise InvalidArgument(f"Configuration Invalid: {exc}") from None
    return out, engine


# ---- agent states, as kaggle-environments fills and checks a state given through ``steps`` ----

BASE_STATE = {
    "action": {"type": "integer", "default": 0},
    "reward": {"type": "number", "default": 0},
    "info": {"type": "object", "default": {}},
    "observation": {"type": "object", "additionalProperties": True, "default": {}},
    "status": {
        "type": "string",
        "default": "ACTIVE",
        "enum": ["INACTIVE", "ACTIVE", "DONE", "ERROR", "INVALID", "TIMEOUT"],
    },
}


def _for_position(props, position):
    """Kaggle's per-seat schema: shared fields only in the first agent's, each ``defaults``
    list read at the seat as its ``default``."""
    out = {}
    for key, prop in props.items():
        if not isinstance(prop, dict):
            out[key] = prop
            continue
        if prop.get("shared", False) and position > 0:
            continue
        prop = dict(prop)
        defaults = prop.get("defaults")
        if isinstance(defaults, list) and len(defaults) > position:
            prop["default"] = defaults[position]
            del prop["defaults"]
        if isinstance(prop.get("properties"), dict):
            prop["properties"] = _for_position(prop["properties"], position)
        out[key] = prop
    return out


@cache
def _agent_schema(spec, position):
    kaggle = cached_specification(spec)
    props = {
        "action": {**BASE_STATE["action"], **kaggle["action"]},
        "reward": {**BASE_STATE["reward"], **kaggle["reward"]},
        "info": {**BASE_STATE["info"], "properties": kaggle["info"]},
        "observation": {**BASE_STATE["observation"], "properties": kaggle["observation"]},
        "status": {**BASE_STATE["status"], **spec.raw.get("status", {})},
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": _for_position(props, position),
    }


def _with_defaults(schema, data):
    """JSON Schema defaults filled in as kaggle-environments fills them: an object (or array)
    that is not one becomes its default, missing keys and None items take theirs."""
    default = schema.get("default")
    if default is None and data is None:
        return None
    kind = schema.get("type")
    if kind == "object":
        obj = (
            data
            if isinstance(data, dict)
            else copy.deepcopy(default if isinstance(default, dict) else {})
        )
        for key, value in (default if isinstance(default, dict) else {}).items():
            obj.setdefault(key, copy.deepcopy(value))
        for key, sub in schema.get("properties", {}).items():
            value = _with_defaults(sub, obj.get(key))
            if value is not None:
                obj[key] = value
        return obj
    if kind == "array":
        fallback = copy.deepcopy(default) if isinstance(default, list) else []
        arr = data if isinstance(data, list) else fallback
        for index, value in enumerate(arr):
            if value is None and len(fallback) > index:
                arr[index] = fallback[index]
        return arr
    return default if data is None else data


def _enum_has(enum, value):
    """JSON Schema's enum membership: booleans are no numbers."""
    return any(
        type(v) is type(value) or (_is_number(v) and _is_number(value)) for v in enum if v == value
    )


def _invalid(schema, value, where):
    """The first way ``value`` breaks ``schema`` (the keywords Kaggle's game schemas use), or
    None."""
    kind = schema.get("type")
    if kind is not None and not _type_ok(value, kind):
        return f"{where}{value!r:.60} is not of type {kind!r}"
    if "enum" in schema and not _enum_has(schema["enum"], value):
        return f"{where}{value!r:.60} is not one of {schema['enum']}"
    if _is_number(value):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where}{value!r} is less than the minimum of {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where}{value!r} is greater than the maximum of {schema['maximum']}"
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{where}{value!r:.60} has fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where}{value!r:.60} has more than {schema['maxItems']} items"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, sub in props.items():
            if key in value and isinstance(sub, dict):
                error = _invalid(sub, value[key], f"{where}{key}: ")
                if error:
                    return error
        if schema.get("additionalProperties", True) is False:
            extra = [k for k in value if k not in props]
            if extra:
                return f"{where}additional property {extra[0]!r} is not allowed"
    return None


def agent_state(spec, position, given):
    """Agent ``position``'s state as kaggle-environments makes it from ``given`` (one agent's
    state in ``steps``): defaults filled, then checked. Returns (error or None, state)."""
    schema = _agent_schema(spec, position)
    data = _with_defaults(schema, copy.deepcopy(given))
    return _invalid(schema, data, ""), data
