"""Games from outside the package: ``vecenv.register(folder)``, ``VECENV_GAMES_PATH`` and the
``vecenv.games`` entry points, each a full citizen, with clear errors for broken folders and the
compiled drivers' cache keyed on the game's own files.

The game is ``tests/games/walk``, copied into a temporary folder first; the processes that find
it through the environment or an installed distribution are real subprocesses.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import vecenv
from tests.child import run_python
from vecenv import registry

WALK = Path(__file__).parent / "games" / "walk"
ROOT = Path(__file__).resolve().parents[1]


def copy_walk(where, name="walk", step=1):
    folder = Path(where) / name
    shutil.copytree(WALK, folder)
    (folder / "moves.py").write_text(f"STEP = {step}\n")
    if name != "walk":
        spec = json.loads((folder / "walk.json").read_text())
        spec["name"] = name
        spec["gym"]["id"] = f"{name.title()}-v0"
        (folder / "walk.json").unlink()
        (folder / f"{name}.json").write_text(json.dumps(spec))
    return folder


@pytest.fixture
def walk(tmp_path):
    """The walk game registered in this process (forgotten after each test: conftest.py)."""
    folder = copy_walk(tmp_path, "stroll")
    assert vecenv.register(folder) == "stroll"
    return folder


def test_a_registered_game_is_a_full_citizen(walk):
    assert "stroll" in vecenv.list_envs()
    assert registry.get_game("Stroll-v0").origin == "registered"
    engine = vecenv.make("stroll", num_envs=8, seed=0, length=9)
    start = engine.obs["position"].copy()
    assert ((start >= 1) & (start <= 7)).all()
    engine.step(np.ones(8, dtype=np.int64))
    np.testing.assert_array_equal(
        engine.obs["position"][~engine.terminated], start[~engine.terminated] + 1
    )
    state = engine.get_state()
    engine.step(np.zeros(8, dtype=np.int64))
    engine.set_state(state)
    np.testing.assert_array_equal(engine.get_state(), state)
    assert engine.render(0, mode="ansi").count("o") == 1
    engine.reset(position={"observation": {"position": [4]}})
    assert (engine.obs["position"] == 4).all()


def test_a_registered_game_has_its_gymnasium_ids(walk):
    env = gymnasium.make("vecenv/Stroll-v0")
    from gymnasium.utils.env_checker import check_env

    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    envs = gymnasium.make_vec("vecenv/Stroll-v0", num_envs=4)
    obs, _ = envs.reset(seed=0)
    obs, rewards, terminated, truncated, _ = envs.step(np.ones(4, dtype=np.int64))
    assert obs.shape == (4,) and rewards.shape == (4,)


def test_registering_the_same_folder_again_does_nothing(walk):
    assert vecenv.register(walk) == "stroll"
    assert vecenv.list_envs().count("stroll") == 1


def test_unregister_forgets_a_game_and_its_gymnasium_ids(walk):
    vecenv.unregister("stroll")
    assert "stroll" not in vecenv.list_envs()
    assert "vecenv/Stroll-v0" not in gymnasium.registry
    with pytest.raises(ValueError, match="unknown game"):
        vecenv.make("stroll")
    with pytest.raises(vecenv.GameError, match="bundled"):
        vecenv.unregister("cartpole")
    assert vecenv.register(walk) == "stroll"  # and back
    assert vecenv.make("Stroll-v0").name == "stroll"


def test_unregister_before_gymnasiums_import_leaves_every_other_id_registered(walk):
    """``unregister`` imports vecenv's Gymnasium module, whose first line imports gymnasium: the
    ids still come, and nothing warns."""
    out = run_python(
        f"""
        import warnings
        warnings.simplefilter("error")
        import vecenv
        vecenv.register({str(walk)!r})
        vecenv.unregister("stroll")
        import gymnasium
        print("vecenv/CartPole-v1" in gymnasium.registry, "vecenv/Stroll-v0" in gymnasium.registry)
        """
    )
    assert out.split() == ["True", "False"]


def _broken(tmp_path, change):
    folder = copy_walk(tmp_path, "broken")
    change(folder)
    return folder


def _write(name, text):
    return lambda folder: (folder / name).write_text(text)


BROKEN = {
    "no-such-folder": (lambda folder: shutil.rmtree(folder), "no such game folder"),
    "no-spec": (lambda folder: (folder / "broken.json").unlink(), "holds broken.json"),
    "spec-not-json": (_write("broken.json", "{nope"), "broken.json: not a valid specification"),
    "spec-without-name": (_write("broken.json", '{"agents": [1]}'), "not a valid specification"),
    "spec-of-another-name": (
        lambda folder: (folder / "broken.json").write_text(
            (folder / "broken.json").read_text().replace('"broken"', '"other"')
        ),
        "its name 'other' must be the folder's",
    ),
    "no-rules": (lambda folder: (folder / "rules.py").unlink(), "holds rules.py"),
    "rules-do-not-import": (_write("rules.py", "import no_such_module\n"), "importing the rules"),
    "rules-without-step": (
        lambda folder: (folder / "rules.py").write_text(
            (folder / "rules.py").read_text().replace("def step(", "def stepp(")
        ),
        "rules must define step",
    ),
    "fields-not-a-record": (
        lambda folder: (folder / "rules.py").write_text(
            (folder / "rules.py")
            .read_text()
            .replace('FIELDS = [("position", np.int64)]', 'FIELDS = [("position",)]')
        ),
        "FIELDS is no valid state record",
    ),
    "fields-taking-the-header": (
        lambda folder: (folder / "rules.py").write_text(
            (folder / "rules.py")
            .read_text()
            .replace('("position", np.int64)', '("step", np.int64)')
        ),
        "reserved by the engine header",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_game_folder_is_one_clear_error(tmp_path, case):
    change, words = BROKEN[case]
    folder = _broken(tmp_path, change)
    with pytest.raises(vecenv.GameError, match=words) as raised:
        vecenv.register(folder)
    assert str(folder) in str(raised.value)
    assert "broken" not in vecenv.list_envs()


def test_a_name_taken_is_refused_naming_both_folders(tmp_path):
    folder = copy_walk(tmp_path, "cartpole")
    with pytest.raises(vecenv.GameError, match="already known") as raised:
        vecenv.register(folder)
    assert str(folder) in str(raised.value) and "envs/cartpole" in str(raised.value)


def test_a_gymnasium_id_taken_is_refused(tmp_path):
    folder = copy_walk(tmp_path, "other_walk")
    spec = json.loads((folder / "other_walk.json").read_text())
    spec["gym"]["id"] = "CartPole-v1"
    (folder / "other_walk.json").write_text(json.dumps(spec))
    with pytest.raises(vecenv.GameError, match="Gymnasium id 'CartPole-v1'"):
        vecenv.register(folder)


def test_a_typing_error_in_the_rules_names_the_game_and_function(tmp_path):
    folder = copy_walk(tmp_path, "typo_walk")
    rules = folder / "rules.py"
    rules.write_text(rules.read_text().replace("STEP if actions[0] == 1 else -STEP", '"x"'))
    vecenv.register(folder)
    engine = vecenv.make("typo_walk", num_envs=2, seed=0)
    with pytest.raises(vecenv.GameError) as raised:
        engine.step(np.ones(2, dtype=np.int64))
    message = str(raised.value)
    assert message.startswith("typo_walk: the rules do not compile in step (")
    assert "rules.py" in message and "iadd" in message  # numba's own words
    assert "vecenv_drivers_" not in message  # not the drivers' part of the report


# ---- other processes: the environment variable, entry points and the cache -------------------

PROBE = """
import numpy as np, vecenv, gymnasium
from vecenv import registry
game = registry.get_game("walk")
engine = vecenv.make("walk", num_envs=1, seed=0, length=40)
engine.reset(position={"observation": {"position": [20]}})
engine.step(np.ones(1, dtype=np.int64))
env = gymnasium.make("vecenv/Walk-v0")
print(game.origin, int(engine.obs["position"][0, 0]), env.reset(seed=0)[0].shape)
"""


def test_games_path_finds_folders_of_game_folders(tmp_path):
    copy_walk(tmp_path / "games")
    cache = tmp_path / "cache"
    out = run_python(
        PROBE,
        {"VECENV_GAMES_PATH": str(tmp_path / "games"), "VECENV_CACHE_DIR": str(cache)},
        tmp_path,
    )
    assert out.split() == ["VECENV_GAMES_PATH", "21", "()"]
    listed = subprocess.run(
        [sys.executable, "-m", "vecenv", "list"],
        capture_output=True,
        text=True,
        env=dict(
            os.environ, VECENV_GAMES_PATH=str(tmp_path / "games"), VECENV_CACHE_DIR=str(cache)
        ),
        timeout=300,
    )
    assert listed.returncode == 0, listed.stderr
    assert "walk" in listed.stdout


def test_an_installed_distribution_declares_games_by_entry_point(tmp_path):
    site = tmp_path / "site"
    package = site / "mygames"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    copy_walk(package)
    (package / "walk" / "__init__.py").write_text("")
    info = site / "mygames-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mygames\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[vecenv.games]\nwalk = mygames.walk\n")
    out = run_python(
        PROBE, {"PYTHONPATH": str(site), "VECENV_CACHE_DIR": str(tmp_path / "cache")}, tmp_path
    )
    assert out.split()[:3] == ["entry", "point", "walk"]
    assert out.split()[-2:] == ["21", "()"]


def test_editing_a_game_takes_effect_at_the_next_start(tmp_path):
    games, cache = tmp_path / "games", tmp_path / "cache"
    folder = copy_walk(games)
    env = {"VECENV_GAMES_PATH": str(games), "VECENV_CACHE_DIR": str(cache)}
    assert run_python(PROBE, env, tmp_path).split()[1] == "21"
    (folder / "moves.py").write_text("STEP = 3\n")  # a module the rules import
    assert run_python(PROBE, env, tmp_path).split()[1] == "23"


def test_two_games_of_one_name_in_two_places_never_share_the_cache(tmp_path):
    cache = tmp_path / "cache"
    one, two = copy_walk(tmp_path / "one", step=1), copy_walk(tmp_path / "two", step=2)
    outputs = []
    for games in (one.parent, two.parent, one.parent):
        env = {"VECENV_GAMES_PATH": str(games), "VECENV_CACHE_DIR": str(cache)}
        outputs.append(run_python(PROBE, env, tmp_path).split()[1])
    assert outputs == ["21", "22", "21"]
    drivers = sorted(p.name for p in (cache / "drivers").glob("vecenv_drivers_walk_*.py"))
    assert len(drivers) == 2


# ---- a two-agent game of the user's through every face --------------------------------------


@pytest.fixture
def nim(tmp_path):
    """``vecenv new``'s two-agent game (Nim), registered in this process."""
    from vecenv import scaffold

    folder = scaffold.write_game("pebbles", tmp_path, agents=2)
    assert vecenv.register(folder) == "pebbles"
    return folder


def test_a_users_two_agent_game_plays_through_every_face(nim):
    from vecenv import aisys, kaggle, selfplay
    from vecenv.aisys import EnvInfo, RunData

    # The engine and starting positions.
    engine = vecenv.make("pebbles", num_envs=4, seed=0, pile=7)
    engine.reset(position={"observation": {"stones": 2}, "status": ["INACTIVE", "ACTIVE"]})
    engine.step(np.array([[0, 1]] * 4))  # agent 1 takes both stones and wins
    np.testing.assert_array_equal(engine.rewards, [[-1, 1]] * 4)
    # Kaggle's interface: run, statuses, text, the replay page, the export to Kaggle's register.
    env = kaggle.make("pebbles", configuration={"pile": 9})
    steps = env.run(["random", "random"])
    assert env.done and sorted(s.reward for s in steps[-1]) == [-1, 1]
    assert env.render(mode="ansi") == "0 stones: "
    assert "pebbles" in kaggle.kaggle_games() and kaggle.export("pebbles")["agents"]
    # Self-play and Seats.
    result = selfplay.play("pebbles", ("random", "random"), 200, seed=1, pile=9)
    assert (result.rewards.sum(axis=1) == 0).all() and result.plies.min() >= 3
    # Gymnasium, against the built-in opponent.
    envs = gymnasium.make_vec("vecenv/Pebbles-v0", num_envs=8, opponent="random")
    obs, _ = envs.reset(seed=0)
    assert obs["stones"].shape == (8,) and obs["legal"].shape == (8, 3)
    # AISysProj: its environment class plays a run to the end.
    cls = aisys.environment_class("pebbles")
    assert aisys.Pebbles is cls
    game = cls(EnvInfo(display_name="Pebbles", identifier="pebbles"), {"opponent": "random"})
    state = game.new_run(seed=3)
    for _ in range(30):
        data = RunData(action_history=[], state=state, outcome=None, run_id=1, agent_name="a")
        result = game.act(0, data)
        state = result.new_state
        if result.outcome is not None:
            break
    assert result.outcome in (-1, 1)


def test_a_broken_game_on_the_path_is_left_out_with_a_warning(tmp_path):
    games = tmp_path / "games"
    copy_walk(games)
    broken = copy_walk(games, "broken_walk")
    (broken / "rules.py").unlink()
    code = """
import warnings, vecenv
print("walk" in vecenv.list_envs(), "broken_walk" in vecenv.list_envs())
"""
    env = {"VECENV_GAMES_PATH": str(games), "VECENV_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env, PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
    assert "left out" in done.stderr and "holds rules.py" in done.stderr


# ---- vecenv new, edited, registered each of the three ways, through every face ----------------

EVERY_FACE = """
import contextlib, io, json, sys
import numpy as np, gymnasium, vecenv
from vecenv import aisys, kaggle, registry, selfplay
from vecenv.cli import main

if len(sys.argv) > 2:  # a folder to register, then the arena database
    vecenv.register(sys.argv[1])
out = {"origin": registry.get_game("coins").origin}
engine = vecenv.make("coins", num_envs=4, seed=0)
out["pile"] = int(engine.obs["stones"][0])
engine.reset(position={"observation": {"stones": 3}})
engine.step(np.array([[2, 0]] * 4))
out["engine"] = engine.rewards[0].tolist()
env = kaggle.make("coins")
out["kaggle"] = sorted(s.reward for s in env.run(["random", "random"])[-1])
out["selfplay"] = int(selfplay.play("coins", ("random", "random"), 50, seed=0).summary.matches)
envs = gymnasium.make_vec("vecenv/Coins-v0", num_envs=3, opponent="random")
out["gym"] = list(envs.reset(seed=0)[0]["stones"].shape)
out["aisys"] = aisys.environment_class("coins").__name__
codes = {}
for name, argv in {
    "list": ["list"],
    "play": ["play", "coins", "--agents", "random", "random", "--matches", "20"],
    "train": ["train", "random", "--env", "Coins-v0", "--episodes", "2", "--seed", "1"],
    "bench": ["bench", "--env", "coins", "--num-envs", "8", "--steps", "3", "--no-gym"],
    "check": ["check", "coins", "--only", "spec", "batch", "kaggle"],
    "arena": ["arena", "env", "add", "coins", "--opponent", "random", "--db", sys.argv[-1] + ".db"],
}.items():
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        codes[name] = main(argv)
    if name == "list":
        codes["listed"] = "coins" in text.getvalue()
out["cli"] = codes
print(json.dumps(out))
"""


def _coins(where):
    """``vecenv new coins --agents 2``, then edited: a pile of 13 by default."""
    from vecenv import scaffold

    folder = scaffold.write_game("coins", where, agents=2)
    spec = json.loads((folder / "coins.json").read_text())
    spec["configuration"]["pile"]["default"] = 13
    (folder / "coins.json").write_text(json.dumps(spec))
    return folder


@pytest.mark.parametrize("way", ["register", "VECENV_GAMES_PATH", "entry point"])
def test_a_new_game_is_a_full_citizen_each_way_it_comes(tmp_path, way):
    env = {"VECENV_CACHE_DIR": str(tmp_path / "cache")}
    args = []
    if way == "register":
        args = [str(_coins(tmp_path / "mine"))]
    elif way == "VECENV_GAMES_PATH":
        _coins(tmp_path / "games")
        env["VECENV_GAMES_PATH"] = str(tmp_path / "games")
    else:
        package = tmp_path / "site" / "mygames"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (_coins(package) / "__init__.py").write_text("")
        info = tmp_path / "site" / "mygames-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mygames\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("[vecenv.games]\ncoins = mygames.coins\n")
        env["PYTHONPATH"] = str(tmp_path / "site")
    db = str(tmp_path / "arena")
    done = subprocess.run(
        [sys.executable, "-c", EVERY_FACE, *args, db],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env=dict(
            os.environ,
            **env
            | {"PYTHONPATH": os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT)]))},
        ),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    origin = {"register": "registered", "VECENV_GAMES_PATH": "VECENV_GAMES_PATH"}
    assert out["origin"].startswith(origin.get(way, "entry point"))
    assert out["pile"] == 13  # the edit took
    assert out["engine"] == [1.0, -1.0]  # agent 0 takes the last 3 from a pile of 3
    assert out["kaggle"] == [-1, 1]
    assert out["selfplay"] == 50
    assert out["gym"] == [3]
    assert out["aisys"] == "Coins"
    assert out["cli"] == dict.fromkeys(["list", "play", "train", "bench", "check", "arena"], 0) | {
        "listed": True
    }


@pytest.mark.parametrize("name", ["Cartpole", "CartPole-v1", "x y", "class", "9lives"])
def test_a_folder_whose_name_is_no_game_name_is_refused(tmp_path, name):
    """One rule for names (``vecenv new``'s): a folder differing from a bundled game only in case
    never takes its place, and a name generated code cannot hold is a clear error."""
    folder = copy_walk(tmp_path, "walk")
    folder = folder.rename(tmp_path / name)
    (folder / "walk.json").rename(folder / f"{name}.json")
    with pytest.raises(vecenv.GameError, match="lower-case letters") as raised:
        vecenv.register(folder)
    assert str(folder) in str(raised.value)
    assert registry.get_game("cartpole").origin == "bundled"
    assert vecenv.make("CartPole-v1").name == "cartpole"


@pytest.mark.parametrize("gym_id", ["cartpole", "Catch", "catch-V0"])
def test_a_gymnasium_id_equal_to_a_name_or_id_in_another_case_is_refused(tmp_path, gym_id):
    folder = copy_walk(tmp_path, "other_walk")
    spec = json.loads((folder / "other_walk.json").read_text())
    spec["gym"]["id"] = gym_id
    (folder / "other_walk.json").write_text(json.dumps(spec))
    with pytest.raises(vecenv.GameError, match="already") as raised:
        vecenv.register(folder)
    assert str(folder) in str(raised.value) and "envs/" in str(raised.value)
    assert "other_walk" not in vecenv.list_envs()


def test_a_folder_of_no_game_name_on_the_path_is_left_out(tmp_path):
    games = tmp_path / "games"
    folder = copy_walk(games, "walk").rename(games / "Cartpole")
    (folder / "walk.json").rename(folder / "Cartpole.json")
    code = (
        "import vecenv; print('Cartpole' in vecenv.list_envs(), vecenv.make('cartpole').spec.gym)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, VECENV_GAMES_PATH=str(games), PYTHONPATH=str(ROOT)),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False {'id': 'CartPole-v1'")
    assert "left out" in done.stderr and "lower-case letters" in done.stderr
