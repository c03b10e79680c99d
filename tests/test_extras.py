"""A missing optional extra is one line naming the command that installs it, for every command
that needs one (``vecenv.extras``), never a traceback or a hang."""

import importlib.util

import pytest

from vecenv import extras
from vecenv.cli import main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from .markdown_blocks import ROOT, canonical

CASES = [
    (["arena", "serve", "--db", "{tmp}/a.sqlite"], "flask", "the arena needs", "arena"),
    (["arena", "env", "add", "connectx", "--db", "{tmp}/a.sqlite"], "flask", "arena", "arena"),
    (["train", "ppo", "--env", "CartPole-v1"], "torch", "PPO needs torch", "train"),
    (["train", "alphazero", "--env", "tictactoe"], "torch", "AlphaZero needs torch", "train"),
    (["train", "eval", "--policy", "{tmp}/p.pt"], "torch", "needs torch", "train"),
    (
        ["tournament", "tictactoe", "--agents", "random", "reaction", "--matches-per-pair", "2"],
        "openskill",
        "tournament ratings needs openskill",
        "tournament",
    ),
    (["bench", "--num-envs", "8", "--plot", "{tmp}/p.png"], "matplotlib", "--plot", "train"),
]


@pytest.mark.parametrize(
    ("argv", "hidden", "says", "extra"),
    CASES,
    ids=[c[1] + "-" + c[0][0] + "-" + c[0][1] for c in CASES],
)
def test_a_missing_extra_is_one_line_naming_its_install(
    argv, hidden, says, extra, capsys, monkeypatch, tmp_path
):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.split(".")[0] == hidden else real(name, *a),
    )
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert says in err and f'pip install ".[{extra}]"' in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []  # refused before anything was made


def test_the_extras_table_matches_pyproject():
    """Every extra ``vecenv.extras`` names exists, with the packages it says."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["optional-dependencies"]
    for extra, modules in extras.EXTRAS.items():
        assert extra in declared, extra
        names = {canonical(line.split(";")[0].split("[")[0].split(">")[0].split("=")[0].strip())
                 for line in declared[extra]}  # fmt: skip
        for package in modules.values():
            assert canonical(package) in names, (extra, package)


def test_every_extra_asks_for_the_same_pytorch():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = {
        extra: sorted(line for line in deps if line.startswith("torch"))
        for extra, deps in project["optional-dependencies"].items()
    }
    torches = {tuple(v) for v in lines.values() if v}
    assert len(torches) == 1, lines
    (pins,) = torches
    assert f"torch=={extras.TORCH_PINNED};" in pins[0].replace(" ", "")
