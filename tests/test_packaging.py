"""The distribution: folder mapping in wheels and editable installs, and the compile cache."""

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

import vecenv
from vecenv import registry

ROOT = Path(__file__).resolve().parents[1]


def test_installed_layout_imports_under_the_vecenv_namespace():
    import vecenv.envs.cartpole.rules as rules
    import vecenv.kernels.rng as rng

    assert Path(rng.__file__).parent.name == "kernels"
    assert Path(rules.__file__).parent.name == "cartpole"
    assert "cartpole" in vecenv.list_envs()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("vecenv-*.whl")
    return path


def test_wheel_maps_the_folders_and_ships_every_game(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "vecenv/kernels/drivers.py" in names
    assert "vecenv/engine.py" in names
    for game in (n for n, g in registry.games().items() if g.origin == "bundled"):
        assert f"vecenv/envs/{game}/{game}.json" in names
        assert f"vecenv/envs/{game}/rules.py" in names
    assert not any(n.startswith(("kernels/", "envs/", "tests/", "benchmarks/")) for n in names)
    # Every face ships, with every module and the games' replay drawing code.
    root = Path(vecenv.__file__).parent
    for module in root.rglob("*.py"):
        assert f"vecenv/{module.relative_to(root).as_posix()}" in names, module
    for game in ("connectx", "tictactoe", "rps"):
        assert f"vecenv/envs/{game}/replay.js" in names
    assert "vecenv/envs/bridge_bidding/deals.npy" in names  # the deal table the kernels hold
    for template in ("one_agent/rules.py.tmpl", "two_agents/agents.py.tmpl", "test_game.py.tmpl"):
        assert f"vecenv/templates/{template}" in names


def test_wheel_imports_and_runs_from_its_own_files(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import json, numpy as np, vecenv\n"
        "import vecenv.kernels.rng as r, vecenv.envs.cartpole.rules as c\n"
        "import vecenv.kaggle, vecenv.aisys, vecenv.gym.env\n"
        "e = vecenv.make('cartpole', num_envs=2, seed=0); e.step(np.array([0, 1]))\n"
        "assert 'vecenvReplay' in vecenv.kaggle.make('tictactoe').render(mode='html')\n"
        "games = vecenv.list_envs()\n"
        "from vecenv import scaffold\n"
        "vecenv.register(scaffold.write_game('tiny', '.', agents=2))\n"
        "vecenv.make('tiny', num_envs=2, seed=0).step(np.zeros((2, 2), dtype=np.int64))\n"
        "print(json.dumps([vecenv.__file__, r.__file__, c.__file__, games]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(site), VECENV_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    files, games = json.loads(out.stdout)[:3], json.loads(out.stdout)[3]
    for f in files:
        assert f.startswith(str(site)), f
    assert games == [n for n, g in registry.games().items() if g.origin == "bundled"]


START = (
    "import json, numpy as np, vecenv\n"
    "out = {}\n"
    "for game in {games!r}:\n"
    "    e = vecenv.make(game, num_envs=4, seed=0)\n"
    "    spec = e.spec.action\n"
    "    a = np.zeros((4,) + spec.shape, dtype=np.int64 if spec.discrete else np.float64)\n"
    "    e.step(a)\n"
    "    d = e._drivers\n"
    "    stats = [f.stats for f in (d.step, d.step_own)]  # (step_own: one agent, one field)\n"
    "    out[game] = [d.__file__, sum(sum(s.cache_hits.values()) for s in stats),\n"
    "                 sum(sum(s.cache_misses.values()) for s in stats)]\n"
    "print(json.dumps(out))\n"
)


def test_warm_start_loads_compiled_drivers_from_the_cache(tmp_path):
    games = vecenv.list_envs()[:2]
    env = dict(
        os.environ,
        VECENV_CACHE_DIR=str(tmp_path / "cache"),
        NUMBA_CACHE_DIR=str(tmp_path / "numba"),
    )
    runs = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", START.replace("{games!r}", repr(games))],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(out.stdout))
    cold, warm = runs
    for game in games:
        assert cold[game][2] == 1 and cold[game][1] == 0  # compiled
        assert warm[game][1] == 1 and warm[game][2] == 0  # loaded, not compiled
    # Each game compiles into a module of its own: cache entries never mix between games.
    assert len({cold[g][0] for g in games}) == len(games)


def test_generated_driver_name_changes_with_the_rules_source():
    from vecenv.kernels import build

    rules = vecenv.registry.game_module("cartpole", "rules")
    a = build.driver_source(rules, True)
    b = build.driver_source(rules, False)
    assert a != b and "ACTION_DISCRETE = True" in a
    assert "def step_parallel(" in a and "nb.prange(states.shape[0])" in a


def _venv_over_this_one(path):
    """A fresh virtualenv whose site-packages also reads this one's (numpy, numba, gymnasium,
    setuptools, ...) but not vecenv: installs of vecenv into it then need no download."""
    import site
    import sysconfig
    import venv

    venv.create(path, with_pip=False)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (Path(purelib) / "_parent_site.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python, Path(purelib)


def _pip(python, *args, cwd=ROOT):
    # pip runs from this environment, aimed at the new one's interpreter.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "-q", *args],
        check=True,
        capture_output=True,
        cwd=cwd,
        # pip must see the new environment as it is, not a source tree on this one's path.
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )


def test_readme_commands_in_order_leave_a_working_install(tmp_path):
    """README's first command (install, then the benchmark) and then its second (an editable
    install) in one virtualenv: numba's cache never lands in site-packages, so the uninstall
    leaves no folder behind to shadow the editable install; the Quick start also runs from the
    clone's root, where the source folder shadows the installed package."""
    python, site_packages = _venv_over_this_one(tmp_path / "venv")
    env = dict(os.environ, VECENV_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    _pip(python, "install", "--no-deps", "--no-build-isolation", ".")
    bench = [str(python.parent / "vecenv"), "bench", "--num-envs", "1,64", "--steps", "20"]
    done = subprocess.run(
        [*bench, "--repeats", "1"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "CartPole" in done.stdout
    installed = site_packages / "vecenv"
    assert not [p for p in installed.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert list((tmp_path / "cache").rglob("*.nbi"))  # the cache is where it belongs

    # The Quick start's engine from the clone's root, against the installed package.
    quick = (
        "import numpy as np, vecenv\n"
        "e = vecenv.make('cartpole', num_envs=8, seed=0)\n"
        "e.step(np.ones(8, dtype=np.int64))\n"
        "import vecenv.envs, vecenv.kernels\n"
        "print(vecenv.envs.__file__)\n"
    )
    done = subprocess.run(
        [python, "-c", quick], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == ROOT / "envs"

    _pip(python, "install", "--no-deps", "--no-build-isolation", "-e", ".")
    assert not installed.exists(), sorted(map(str, installed.rglob("*")))[:10]
    done = subprocess.run(
        [python, "-c", "import vecenv; print(vecenv.make, vecenv.__version__)"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    listing = subprocess.run(
        [str(python.parent / "vecenv"), "list"], env=env, cwd=tmp_path, capture_output=True
    )
    assert listing.returncode == 0, listing.stderr
    assert b"cartpole" in listing.stdout


def test_a_users_game_compiles_into_vecenvs_cache_not_its_folder(tmp_path):
    """numba's entries of a game registered from a folder go to VECENV_CACHE_DIR, never beside
    the user's files."""
    from vecenv import scaffold

    cache = tmp_path / "cache"
    code = (
        "import sys, numpy as np, vecenv\n"
        "name = vecenv.register(sys.argv[1])\n"
        "vecenv.make(name, num_envs=2, seed=0).step(np.zeros((2, 2), dtype=np.int64))\n"
    )
    folder = scaffold.write_game("tiny", tmp_path / "games", agents=2)
    env = dict(os.environ, VECENV_CACHE_DIR=str(cache))
    subprocess.run([sys.executable, "-c", code, str(folder)], env=env, check=True, cwd=tmp_path)
    assert not [p for p in Path(folder).rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert [p for p in (cache / "numba").rglob("*.nbi") if ".tiny_" in p.parent.name]


def test_readme_commands_in_the_other_order_leave_a_working_install(tmp_path):
    """README's second command's editable install first, then the first command's install and
    benchmark: the regular install replaces the editable one and runs from site-packages."""
    python, site_packages = _venv_over_this_one(tmp_path / "venv")
    env = dict(os.environ, VECENV_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    _pip(python, "install", "--no-deps", "--no-build-isolation", "-e", ".")
    code = "import vecenv; vecenv.make('cartpole', num_envs=2); print(vecenv.__file__)"
    done = subprocess.run([python, "-c", code], env=env, cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.decode().strip()).parent == ROOT / "vecenv"
    _pip(python, "install", "--no-deps", "--no-build-isolation", ".")
    bench = [str(python.parent / "vecenv"), "bench", "--num-envs", "1", "--steps", "5"]
    done = subprocess.run(
        [*bench, "--repeats", "1"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run([python, "-c", code], env=env, cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.decode().strip()).parent == site_packages / "vecenv"
    assert not [p for p in site_packages.rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_rules_compiled_inline_are_called_from_the_parallel_drivers():
    """kuhn_poker's step is compiled inline: the serial step inlines it, the parallel step calls
    it through its wrapper (whose writes numba's parallel loop keeps); a game whose rules are
    plain calls has no wrapper."""
    from vecenv.kernels import build

    kuhn = build.driver_source(vecenv.registry.game_module("kuhn_poker", "rules"), True)
    serial = kuhn.split("def step(", 1)[1].split("\n@nb.njit", 1)[0]
    parallel = kuhn.split("def step_parallel(", 1)[1].split("\n@nb.njit", 1)[0]
    assert "game_step(s, cfg, actions[i]" in serial and "game_step_called" not in serial
    assert "game_step_called(s, cfg, actions[i]" in parallel
    assert kuhn.count("def game_step_called(") == 1
    assert "game_observe_called" not in kuhn
    cartpole = build.driver_source(vecenv.registry.game_module("cartpole", "rules"), True)
    assert "_called" not in cartpole
    # A reset or observe compiled inline runs inside the drivers' own ``_begin``: that is called.
    inline, plain = (SimpleNamespace(targetoptions={"inline": v}) for v in ("always", "never"))
    rules = SimpleNamespace(reset=inline, step=plain, observe=plain)
    assert set(build._called(rules)) == {"_begin"}
    rules = SimpleNamespace(reset=plain, step=plain, observe=inline)
    assert set(build._called(rules)) == {"_begin", "game_observe", "game_observe_step"}
