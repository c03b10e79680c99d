"""``vecenv new``: a working game folder to start from (the templates in ``vecenv/templates``).

One agent: a walk on a line (spec, rules with a starting-position hook, text and picture renders).
Two agents: Nim, a Kaggle game with turns, a legal mask and a built-in ``random`` agent. Each comes
with a test file that holds the game to vecenv's contract (``vecenv.testing``).
"""

import keyword
import re
import string
from importlib import resources
from pathlib import Path

TEMPLATES = {1: "one_agent", 2: "two_agents"}
NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


def check_name(name):
    """A game's name is a folder and a module name: lower-case letters, digits and _."""
    if not isinstance(name, str) or not NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(
            f"a game name must be lower-case letters, digits and _, starting with a letter "
            f"(and no Python keyword), got {name!r}"
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
    title = name.replace("_", " ").title()
    values = {
        "name": name,
        "title": title,
        "gym_id": title.replace(" ", "") + "-v0",
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
