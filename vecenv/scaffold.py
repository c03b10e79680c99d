"""``vecenv new``: a working game folder to start from (the templates in ``vecenv/templates``).

One agent: a walk on a line (spec, rules with a starting-position hook, text and picture renders).
Two agents: Nim, a Kaggle game with turns, a legal mask and a built-in ``random`` agent. Each comes
with a test file that holds the game to vecenv's contract (``vecenv.testing``).
"""

import string
from importlib import resources
from pathlib import Path

from . import registry

TEMPLATES = {1: "one_agent", 2: "two_agents"}


def gym_id(name):
    """The Gymnasium id a new game gets: its title, then -v0 (``coin_flip``: ``CoinFlip-v0``)."""
    return name.replace("_", " ").title().replace(" ", "") + "-v0"


def check_name(name):
    """A name a new game can register under anywhere: valid (``registry.check_name``) and, with
    its Gymnasium id, no bundled game's, case aside (``ValueError`` if not)."""
    registry.check_name(name)
    bundled = registry.taken(name, gym_id(name), origin="bundled")
    if bundled is not None:
        raise ValueError(
            f"{name!r} (Gymnasium id {gym_id(name)!r}) would clash with the bundled game "
            f"{bundled.name!r} ({bundled.spec.gym.get('id')}), case aside: choose another name"
        )
    return name


def write_game(name, directory=".", agents=1):
    """Write the game folder ``directory/name`` and return its path; an existing folder is left
    alone (``FileExistsError``)."""
    check_name(name)
    if agents not in TEMPLATES:
        raise ValueError(f"agents must be 1 or 2, got {agents!r}")
    folder = Path(directory) / name
    if folder.exists():
        raise FileExistsError(f"{folder} exists already")
    values = {
        "name": name,
        "title": name.replace("_", " ").title(),
        "gym_id": gym_id(name),
        "folder": str(folder),
        "agents": agents,
        "action_shape": "(64,)" if agents == 1 else "(64, 2)",
    }
    templates = resources.files("vecenv") / "templates"
    files = {
        f"{name}.json": f"{TEMPLATES[agents]}/game.json.tmpl",
        f"test_{name}.py": "test_game.py.tmpl",
    }
    for part in ("rules", "render", "agents"):
        source = templates / TEMPLATES[agents] / f"{part}.py.tmpl"
        if source.is_file():
            files[f"{part}.py"] = f"{TEMPLATES[agents]}/{part}.py.tmpl"
    folder.mkdir(parents=True)
    for target, source in files.items():
        text = (templates / source).read_text(encoding="utf-8")
        (folder / target).write_text(string.Template(text).substitute(values), encoding="utf-8")
    return folder
