"""Game folders from outside that misbehave on import or in their spec cannot take vecenv down:
a folder whose ``__init__.py`` exits, interrupts or raises anything is left out with a warning
naming it; ``vecenv check`` runs nothing of a folder in its own process (its import and spec are
bounded as its checks are) and checks an observation's bytes before making one."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import vecenv
from tests.test_cli import run
from tests.test_outside_games import copy_walk
from vecenv import registry

ROOT = Path(__file__).resolve().parents[1]
INITS = {
    "exits": "import sys\nsys.exit(0)\n",
    "fails": "import sys\nsys.exit(3)\n",
    "interrupts": "raise KeyboardInterrupt\n",
    "raises": "raise BaseException('a bare one')\n",
    "ends_generator": "raise GeneratorExit\n",
}


def broken(where, name, init=None, rules=None):
    folder = copy_walk(where, name)
    if init is not None:
        (folder / "__init__.py").write_text(init)
    if rules is not None:
        path = folder / "rules.py"
        path.write_text(rules + path.read_text())
    return folder


def test_folders_that_exit_or_interrupt_on_import_are_left_out_naming_them(tmp_path):
    games = tmp_path / "games"
    copy_walk(games)
    for name, init in INITS.items():
        broken(games, name, init)
    env = dict(
        os.environ,
        VECENV_GAMES_PATH=str(games),
        VECENV_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
    )
    for argv in (["list"], ["train", "random", "--env", "CartPole-v1", "--episodes", "1"]):
        done = subprocess.run(
            [sys.executable, "-m", "vecenv", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), "the command said nothing"
        warnings = [line for line in done.stderr.splitlines() if "left out" in line]
        assert len(warnings) == len(INITS), done.stderr
        for name in INITS:
            assert any(f"{name}{os.sep}__init__.py" in line for line in warnings), name
    listed = subprocess.run(
        [sys.executable, "-m", "vecenv", "list"], capture_output=True, text=True, env=env
    ).stdout
    assert "walk" in listed and not any(name in listed for name in INITS)


@pytest.mark.parametrize("name", sorted(INITS))
def test_registering_such_a_folder_is_a_game_error_naming_it(tmp_path, name):
    folder = broken(tmp_path, name, INITS[name])
    with pytest.raises(vecenv.GameError, match="importing the game's package failed") as raised:
        vecenv.register(folder)
    assert str(folder / "__init__.py") in str(raised.value)
    assert name not in vecenv.list_envs()


def test_rules_that_exit_on_import_are_a_game_error_too(tmp_path):
    folder = broken(tmp_path, "quitter", rules="raise SystemExit('bye')\n")
    with pytest.raises(vecenv.GameError, match="importing the rules failed: SystemExit"):
        vecenv.register(folder)
    assert "quitter" not in registry.games()


def test_check_imports_nothing_of_a_folder_in_its_own_process(tmp_path, capsys):
    folder = broken(tmp_path, "stuck", init="while True:\n    pass\n")
    code, out, err = run(capsys, "check", str(folder), "--only", "spec", "batch", "--timeout", "6")
    assert code == 1, err
    assert "timed out: no result after 6 s" in out and "not run: 'spec' timed out" in out
    assert "stuck" not in registry.games()
    exits = broken(tmp_path, "leaves", init="import sys\nsys.exit(0)\n")
    code, out, err = run(capsys, "check", str(exits), "--only", "spec", "--timeout", "120")
    assert code == 1 and "importing the game's package failed: SystemExit(0)" in out, out


def test_the_spec_check_counts_an_observations_bytes_before_making_it(tmp_path, capsys):
    folder = copy_walk(tmp_path, "wide")
    spec = (folder / "wide.json").read_text()
    observation = '"position": {"type": "integer", "shape": [100000, 100000], "dtype": "bool", '
    observation += '"low": 0, "high": 1}'
    start = spec.index('"position"', spec.index('"observation"'))
    end = spec.index("}", start) + 1
    (folder / "wide.json").write_text(spec[:start] + observation + spec[end:])
    code, out, _ = run(capsys, "check", str(folder), "--only", "spec", "--timeout", "120")
    assert code == 1
    assert "one episode's observation takes 9.3 GiB, over the memory budget" in out


def test_new_prints_a_check_command_that_works(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "new", "fresh")
    assert code == 0
    command = out.strip().splitlines()[-1].split("and")[-1].split()
    assert command[:2] == ["vecenv", "check"] and command[2] == os.path.join(".", "fresh")
    code, out, err = run(capsys, "check", command[2], "--only", "spec")
    assert code == 0, out + err
    code, out, err = run(capsys, "check", "fresh", "--only", "spec")  # the bare name, here
    assert code == 0 and "fresh: 1 of 1 checks passed" in out, out + err


def test_new_in_a_folder_that_cannot_be_made_is_one_line(capsys):
    code, _, err = run(capsys, "new", "x", "--dir", "/proc/nope")
    assert code == 2 and "cannot write" in err and len(err.strip().splitlines()) == 1
