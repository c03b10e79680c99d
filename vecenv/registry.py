"""Where games come from: a game is a folder holding ``<name>.json`` and ``rules.py`` (what else
it may hold, and what each file defines: ``vecenv.protocol``).

Four sources, all of them full citizens (every face, the engine's cache, the checks):

- the bundled games, the folders of ``vecenv.envs``;
- the folders of game folders named by the environment variable ``VECENV_GAMES_PATH``
  (``os.pathsep``-separated), read at the first look-up;
- the entry-point group ``vecenv.games``: ``mygame = "mypkg.games.mygame"`` names a package that is
  a game folder;
- ``vecenv.register("path/to/mygame")`` at run time.

A folder that is no installed package is imported as the package ``vecenv_games.<name>_<hash of
its path>``, so two games of one name in different places never share modules or cache entries,
and its modules may import each other relatively (``from .rules import ...``).
"""

import functools
import hashlib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import keyword
import os
import re
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import protocol
from .kernels import cache
from .spec import GameSpec

ENTRY_POINT_GROUP = "vecenv.games"
PATH_VARIABLE = "VECENV_GAMES_PATH"
FOLDER_PACKAGE = "vecenv_games"  # the parent of packages made for plain folders
NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


class GameError(ValueError):
    """A game folder that cannot be a game: the message names the file and the problem."""


def check_name(name):
    """A game's name is a folder's, a module's and an identifier in generated code: lower-case
    letters, digits and _, starting with a letter, no Python keyword (``GameError`` if not). The
    one rule, for ``vecenv new`` as for every game found or registered."""
    if not isinstance(name, str) or not NAME.match(name) or keyword.iskeyword(name):
        raise GameError(
            f"a game name must be lower-case letters, digits and _, starting with a letter "
            f"(and no Python keyword), got {name!r}"
        )
    return name


@dataclass(frozen=True)
class Game:
    name: str
    folder: Path
    package: str  # the module path of the folder's package
    spec: GameSpec
    origin: str  # "bundled", "VECENV_GAMES_PATH", "entry point <dist>", "registered"


_GAMES = {}  # name -> Game, in the order found
_discovered = False


def _folder_package(folder, name):
    """Import a plain folder as a package of its own (see the module's docstring)."""
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    package = f"{FOLDER_PACKAGE}.{name}_{digest}"
    if package in sys.modules:
        return package
    if FOLDER_PACKAGE not in sys.modules:
        parent = types.ModuleType(FOLDER_PACKAGE, "Game folders from outside vecenv's package.")
        parent.__path__ = []
        sys.modules[FOLDER_PACKAGE] = parent
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        package, init if init.is_file() else None, submodule_search_locations=[str(folder)]
    )
    if spec is None:  # no __init__.py: a bare package over the folder
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        if spec.loader is not None:
            _importing(init, "importing the game's package", spec.loader.exec_module, module)
    except GameError:
        del sys.modules[package]
        raise
    return package


def _importing(path, what, load, *args):
    """``load(*args)``, where a game's own code runs on import; whatever it raises, even
    SystemExit (``sys.exit``), KeyboardInterrupt or a bare BaseException, is a GameError naming
    ``path``, so that a game folder cannot end or silence the command that looks at it."""
    try:
        return load(*args)
    except GameError:
        raise
    except BaseException as exc:  # noqa: BLE001 - the game's code, not vecenv's
        raise GameError(f"{path}: {what} failed: {exc!r}") from None


def _load(folder, package, origin):
    """The game in ``folder`` (its package importable as ``package``, or None to make one)."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise GameError(f"{folder}: no such game folder")
    name = folder.name
    try:
        check_name(name)
    except GameError as exc:
        raise GameError(f"{folder}: {exc}") from None
    spec_file = folder / f"{name}.json"
    if not spec_file.is_file():
        raise GameError(f"{folder}: a game folder holds {name}.json (its specification)")
    try:
        spec = GameSpec.load(spec_file)
    except Exception as exc:
        raise GameError(f"{spec_file}: not a valid specification: {exc}") from None
    if spec.name != name:
        raise GameError(f"{spec_file}: its name {spec.name!r} must be the folder's, {name!r}")
    if not (folder / "rules.py").is_file():
        raise GameError(f"{folder}: a game folder holds rules.py (the game's rules)")
    return Game(name, folder, package or _folder_package(folder, name), spec, origin)


def _check_rules(game):
    """The rules module exists, defines what the protocol requires, and a valid ``FIELDS``."""
    from vecenv.kernels.state import state_dtype

    path = game.folder / "rules.py"
    rules = _importing(
        path, "importing the rules", importlib.import_module, f"{game.package}.rules"
    )
    missing = [n for n in protocol.REQUIRED_RULES if not hasattr(rules, n)]
    if missing:
        raise GameError(f"{path}: the rules must define {', '.join(missing)}")
    fields = rules.FIELDS
    try:
        defaults = {key: entry.default for key, entry in game.spec.configuration.items()}
        state_dtype(fields(defaults) if callable(fields) else fields)
    except Exception as exc:
        raise GameError(
            f"{path}: FIELDS is no valid state record ((name, dtype[, shape]) entries): {exc}"
        ) from None


def _keys(name, gym_id):
    """What finds a game (``resolve``): its name and Gymnasium id, case aside."""
    return {name.lower()} | ({gym_id.lower()} if gym_id else set())


def _taken(name, gym_id, origin=None):
    keys = _keys(name, gym_id)
    for other in _GAMES.values():
        if origin in (None, other.origin) and keys & _keys(other.name, other.spec.gym.get("id")):
            return other
    return None


def taken(name, gym_id=None, origin=None):
    """The known game (of ``origin`` only, if given) whose name or Gymnasium id is ``name`` or
    ``gym_id``, case aside; None if none. Two such games would leave ``resolve`` to pick one."""
    _discover()
    return _taken(name, gym_id, origin)


def _add(game):
    known = _GAMES.get(game.name)
    if known is not None and known.folder == game.folder:
        return known
    gym_id = game.spec.gym.get("id")
    other = _taken(game.name, gym_id)
    if other is not None and other.name.lower() == game.name.lower():
        raise GameError(
            f"{game.folder}: a game named {game.name!r} is already known, from {other.folder} "
            f"({other.origin})"
        )
    if other is not None:
        raise GameError(
            f"{game.folder / (game.name + '.json')}: its Gymnasium id {gym_id!r} or name is "
            f"already {other.name!r}'s ({other.folder}), case aside"
        )
    _GAMES[game.name] = game
    _aliases.cache_clear()
    return game


def _discover():
    global _discovered
    if _discovered:
        return
    _discovered = True
    import vecenv.envs as envs_package

    for root in envs_package.__path__:
        for folder in sorted(Path(root).iterdir()):
            if (folder / f"{folder.name}.json").is_file() and folder.name not in _GAMES:
                _add(_load(folder, f"vecenv.envs.{folder.name}", "bundled"))
    # A broken game from outside must not break vecenv for every other game: it is left out,
    # with a warning saying why (``vecenv check`` on its folder says it again).
    for root in filter(None, os.environ.get(PATH_VARIABLE, "").split(os.pathsep)):
        if not Path(root).is_dir():
            warnings.warn(f"{PATH_VARIABLE}: {root} is no folder", stacklevel=2)
            continue
        for folder in sorted(Path(root).iterdir()):
            if folder.is_dir() and (folder / f"{folder.name}.json").is_file():
                _add_or_warn(lambda folder=folder: _load(folder, None, PATH_VARIABLE))
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        _add_or_warn(lambda entry=entry: _from_entry_point(entry))


def _from_entry_point(entry):
    origin = f"entry point {entry.name} = {entry.value}"
    # Its jitted functions are cached in vecenv's folder, not beside its installed files.
    cache.own(entry.value)
    module = _importing(origin, "importing it", importlib.import_module, entry.value)
    folders = list(getattr(module, "__path__", []))
    if len(folders) != 1:
        raise GameError(f"{origin}: must name a package that is a game folder")
    return _load(folders[0], entry.value, origin)


class GameWarning(UserWarning):
    """A game from outside vecenv left out (the message names its folder and why)."""


def _add_or_warn(load):
    try:
        _add(load())
    except GameError as exc:
        # Said as coming from "vecenv" (no source line under it): one line on a terminal.
        warnings.warn_explicit(f"left out: {exc}", GameWarning, "vecenv", 0)


def games():
    """Every known game by name: bundled first, then as found."""
    _discover()
    return dict(_GAMES)


def specs():
    """Every game's parsed specification, by name."""
    return {name: game.spec for name, game in games().items()}


def register(path):
    """Make the game folder ``path`` (holding ``<name>.json`` and ``rules.py``) a game of this
    process; returns its name (``vecenv.register`` adds its Gymnasium ids). Registering the same
    folder again does nothing; another folder of a known game's name is a ``GameError``."""
    _discover()
    game = _load(path, None, "registered")
    known = _GAMES.get(game.name)
    if known is not None and known.folder == game.folder:
        return known.name
    _check_rules(game)
    _add(game)
    return game.name


def unregister(name):
    """Forget a game registered at run time (``register``); bundled games and those found
    through the environment or entry points stay. Returns its Gymnasium id, if it had one."""
    game = get_game(name)
    if game.origin != "registered":
        raise GameError(f"{game.name} is {game.origin}, not registered at run time")
    del _GAMES[game.name]
    _aliases.cache_clear()
    rules.cache_clear()
    return game.spec.gym.get("id")


@functools.cache
def _aliases():
    table = {}
    for name, game in _GAMES.items():
        table[name.lower()] = name
        gym_id = game.spec.gym.get("id")
        if gym_id:
            table[gym_id.lower()] = name
            table[f"vecenv/{gym_id}".lower()] = name
    return table


def resolve(name):
    """The folder name of a game given by folder name or Gymnasium id (case-insensitive)."""
    if not isinstance(name, str):
        raise TypeError(f"a game name must be a string, got {type(name).__name__}")
    _discover()
    key = _aliases().get(name.lower())
    if key is None:
        raise ValueError(f"unknown game {name!r}; available: {', '.join(_GAMES)}")
    return key


def get_game(name):
    return _GAMES[resolve(name)]


def get_spec(name):
    return get_game(name).spec


@functools.cache
def rules(name):
    """The game's rules module, checked once against the protocol (``GameError`` if not)."""
    game = get_game(name)
    _check_rules(game)
    return importlib.import_module(f"{game.package}.rules")


def hidden_information(name):
    """Whether the game declares hidden information (its rules' ``redraw_hidden``): what one
    agent observes is not what another does, and no face or agent may read a whole record on an
    agent's behalf."""
    return hasattr(rules(name), protocol.HIDDEN_INFORMATION)


def chance(name):
    """Whether the game declares chance (its rules' ``CHANCE``): its ``step`` draws from the
    episode's stream (dice, tiles, cards dealt in play), which a search must never read."""
    return bool(getattr(rules(name), protocol.CHANCE, False))


def game_module(name, part):
    """Import the game's module ``part`` (rules, render, agents); None if the game has none."""
    game = get_game(name)
    module = f"{game.package}.{part}"
    try:
        return _importing(game.folder / f"{part}.py", f"importing its {part}", _module, module)
    except GameError as e:
        if isinstance(e.__context__, ModuleNotFoundError) and e.__context__.name == module:
            return None
        raise


def _module(module):
    return importlib.import_module(module)


def _sources_digest(folder):
    """A hash of what makes the game: its spec and its Python modules (not its tests); line ends
    normalised, so a checkout on another system hashes the same."""
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.suffix in (".json", ".py") and path.is_file() and not path.name.startswith("test_"):
            digest.update(path.name.encode() + b"\0")
            digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


def identity(name):
    """What a pickle remembers of its game, to be sure it loads into the same one
    (``check_identity``): the folder it came from and a hash of its spec and sources."""
    game = get_game(name)
    return {"folder": str(game.folder), "sources": _sources_digest(game.folder)}


def check_identity(name, folder, remembered):
    """Make ``name`` the game a pickle was made with: register its ``folder`` (a game registered
    at run time there) where no game of that name is known, and refuse (``ValueError`` naming
    both folders) a game of that name whose spec or sources differ from those remembered. The
    same sources in another folder (another install, a Ray worker's machine) are the same game.
    Pickles made before identities were remembered (``remembered`` None) are taken as they are."""
    if folder is not None and name not in games():
        register(folder)
    if remembered is None:
        return
    game = get_game(name)
    if _sources_digest(game.folder) != remembered["sources"]:
        raise ValueError(
            f"a pickled engine of {name!r} was made with the game in {remembered['folder']}, but "
            f"{name!r} here is the game in {game.folder} ({game.origin}), whose spec or rules "
            "differ; register the same game before loading it"
        )


def list_envs():
    """The names of all games."""
    return list(games())
