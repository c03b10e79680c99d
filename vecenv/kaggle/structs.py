"""Kaggle's ``Struct``: a dict whose keys are also attributes, and ``structify`` to nest them."""


class Struct(dict):
    """A dict with attribute access, as kaggle-environments hands observations and configurations
    to agents (``obs.board`` and ``obs["board"]`` both read; setting an attribute sets the key
    too)."""

    def __init__(self, **entries):
        entries = {k: v for k, v in entries.items() if k != "items"}
        dict.__init__(self, entries)
        self.__dict__.update(entries)

    def __setattr__(self, attr, value):
        self.__dict__[attr] = value
        self[attr] = value


def structify(o):
    """Lists and dicts, recursively, with every dict a ``Struct``."""
    if isinstance(o, list):
        return [structify(v) for v in o]
    if isinstance(o, dict):
        return Struct(**{k: structify(v) for k, v in o.items()})
    return o
