"""Discovery of games: every folder ``envs/<name>/`` holding ``<name>.json`` is a game."""

import functools
import importlib
from pathlib import Path

from .spec import GameSpec


@functools.cache
def specs():
    """Every game's parsed specification, by folder name, in name order."""
    import vecenv.envs as envs_package

    found = {}
    for root in envs_package.__path__:
        for folder in sorted(Path(root).iterdir()):
            spec_file = folder / f"{folder.name}.json"
            if spec_file.is_file() and folder.name not in found:
                found[folder.name] = GameSpec.load(spec_file)
    return found


@functools.cache
def _aliases():
    table = {}
    for name, spec in specs().items():
        table[name.lower()] = name
        gym_id = spec.gym.get("id")
        if gym_id:
            table[gym_id.lower()] = name
            table[f"vecenv/{gym_id}".lower()] = name
    return table


def resolve(name):
    """The folder name of a game given by folder name or Gymnasium id (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"a game name must be a string, got {type(name).__name__}")
    key = _aliases().get(name.lower())
    if key is None:
        raise ValueError(f"unknown game {name!r}; available: {', '.join(specs())}")
    return key


def get_spec(name):
    return specs()[resolve(name)]


def game_module(name, part):
    """Import ``vecenv.envs.<game>.<part>`` (rules, render, agents); None if the game has none."""
    game = resolve(name)
    try:
        return importlib.import_module(f"vecenv.envs.{game}.{part}")
    except ModuleNotFoundError as e:
        if e.name == f"vecenv.envs.{game}.{part}":
            return None
        raise


def list_envs():
    """The names of all games."""
    return list(specs())
