"""vecenv's compile cache (``vecenv.kernels.cache``): folders that are the user's own, keys that
survive a reinstall, entries that survive damage and concurrent compiles; and the compile policy
beside it (``vecenv.kernels.literals``)."""

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# One cartpole engine stepped once; prints what numba compiled and loaded for its step.
FIRST_STEP = """
import hashlib, json, sys, warnings
import numpy as np
warnings.simplefilter("always")
import vecenv
numba_after_import = "numba" in sys.modules
e = vecenv.make("cartpole", num_envs=4, seed=0)
e.step(np.ones(4, dtype=np.int64))
obs = hashlib.sha256(e.get_state().tobytes()).hexdigest()  # where the episodes are
stats = [e._drivers.reset.stats, e._drivers.step_own.stats]
rules = e._drivers.game_rules.step.stats
print(json.dumps({
    "numba_after_import": numba_after_import,
    "hits": sum(sum(s.cache_hits.values()) for s in stats),
    "misses": sum(sum(s.cache_misses.values()) for s in stats),
    "rules_misses": sum(rules.cache_misses.values()),
    "obs": obs,
    "drivers": e._drivers.__file__,
}))
"""


def first_step(env, cwd=None, tree=ROOT):
    done = subprocess.run(
        [sys.executable, "-c", FIRST_STEP],
        env=dict(env, PYTHONPATH=str(tree)),
        cwd=cwd or tree,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done


def checked(done):
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def environment(cache):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["VECENV_CACHE_DIR"] = str(cache)
    return env


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """A cache filled by one cold first step, and that step's report: the tests that damage a
    filled cache each take a copy (a cold compile is most of a test's time)."""
    cache = tmp_path_factory.mktemp("compiled") / "cache"
    return cache, checked(first_step(environment(cache)))


def filled(compiled, tmp_path):
    """A copy of the module's filled cache in ``tmp_path`` (modes kept), and its first report
    with the paths in it moved to the copy."""
    template, first = compiled
    cache = tmp_path / "cache"
    shutil.copytree(template, cache)
    drivers = Path(first["drivers"])
    return cache, dict(first, drivers=str(cache / drivers.relative_to(template)))


def test_import_leaves_numba_for_the_first_compile_and_the_cache_is_private(compiled, tmp_path):
    first = compiled[1]
    assert first["numba_after_import"] is False  # import vecenv stays cheap
    assert first["misses"] > 0
    cache, _ = filled(compiled, tmp_path)
    for folder in (cache, cache / "numba", cache / "drivers"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    # numba's entries of vecenv's modules are in the cache, named by module, not by path.
    assert (cache / "numba" / "vecenv.envs.cartpole.rules").is_dir()
    again = checked(first_step(environment(cache)))
    assert again["misses"] == 0 and again["hits"] > 0 and again["obs"] == first["obs"]


def test_a_cache_folder_others_may_write_is_refused(tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    done = first_step(environment(cache))
    assert done.returncode != 0
    assert "CacheFolderError" in done.stderr and str(cache) in done.stderr
    assert "VECENV_CACHE_DIR" in done.stderr and "may be written by others" in done.stderr
    assert not list(cache.iterdir())  # nothing written there


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_cache_folder_of_another_user_is_refused(tmp_path):
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)  # nobody's
    done = first_step(environment(cache))
    assert done.returncode != 0
    assert "belongs to another user (uid 65534)" in done.stderr and str(cache) in done.stderr


def test_the_fallback_folder_in_the_temporary_directory_is_checked_too(tmp_path):
    """Where the user cache folder cannot be made, vecenv falls back to <tmp>/vecenv-<uid>: a
    folder planted there by someone else (here: writable by everyone) is refused."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    tmp = tmp_path / "tmp"
    planted = tmp / f"vecenv-{os.getuid()}"
    planted.mkdir(parents=True)
    planted.chmod(0o777)
    env = environment(blocker / "cache")
    env["TMPDIR"] = str(tmp)
    done = first_step(env)
    assert done.returncode != 0 and "CacheFolderError" in done.stderr
    assert str(planted) in done.stderr and "falls back" in done.stderr
    planted.chmod(0o700)  # the user's own: used
    result = checked(first_step(env))
    assert result["misses"] > 0 and list((planted / "numba").iterdir())


def test_a_damaged_driver_module_is_written_again_once(compiled, tmp_path):
    cache, first = filled(compiled, tmp_path)
    driver = Path(first["drivers"])
    text = driver.read_text()
    driver.write_text(text[: len(text) // 2])  # truncated: a SyntaxError on import
    done = first_step(environment(cache))
    again = checked(done)
    assert again["obs"] == first["obs"] and driver.read_text() == text
    assert done.stderr.count("DamagedCacheWarning") == 1 and str(driver) in done.stderr


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
def test_a_garbled_numba_entry_is_compiled_again(compiled, tmp_path, suffix):
    cache, first = filled(compiled, tmp_path)
    entries = sorted((cache / "numba").rglob(f"*{suffix}"))
    assert entries
    for path in entries:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF  # one flipped byte, deep inside
        path.write_bytes(bytes(data))
    done = first_step(environment(cache))
    again = checked(done)
    assert again["obs"] == first["obs"] and again["misses"] > 0
    assert "DamagedCacheWarning" in done.stderr
    third = checked(first_step(environment(cache)))  # repaired: loads again
    assert third["misses"] == 0 and third["obs"] == first["obs"]


def test_two_processes_compiling_one_game_at_once_leave_a_cache_that_works(tmp_path):
    cache = tmp_path / "cache"
    env = dict(environment(cache), PYTHONPATH=str(ROOT))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", FIRST_STEP],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert results[0]["obs"] == results[1]["obs"]
    later = checked(first_step(environment(cache)))
    assert later["misses"] == 0 and later["obs"] == results[0]["obs"]


def test_the_same_sources_installed_elsewhere_reuse_the_cache(tmp_path):
    """An editable install, then a wheel (or a moved virtualenv): the same sources at another
    path compile nothing new."""
    trees = []
    for name in ("install_a", "install_b"):
        tree = tmp_path / name
        for part in ("vecenv", "kernels", "envs"):
            shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
        trees.append(tree)
    cache = tmp_path / "cache"
    first = checked(first_step(environment(cache), tree=trees[0]))
    before = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    second = checked(first_step(environment(cache), tree=trees[1]))
    after = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
    assert second["misses"] == 0 and second["hits"] > 0 and second["obs"] == first["obs"]
    assert first["rules_misses"] > 0 and second["rules_misses"] == 0
    assert after == before
    # An edit of a kernel the rules inline (a comment is enough) retires their entries: numba's
    # own stamp is the rules file's alone, vecenv's covers what the machine code inlined.
    kernel = trees[1] / "kernels" / "rng.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    third = checked(first_step(environment(cache), tree=trees[1]))
    assert third["rules_misses"] > 0 and third["obs"] == first["obs"]


LITERALS = """
import numba as nb


@nb.njit(cache=False)
def ray(d, x):
    return x + d


@nb.njit(cache=False)
def walk(x):
    return ray(0, x) + ray(1, x) + ray(2, x)


@nb.njit(cache=False)
def pick(t, k):
    return t[k]  # a heterogeneous tuple: only a constant k types


@nb.njit(cache=False)
def picks(x):
    t = (1, 2.5)
    return pick(t, 0) + pick(t, 1) + x
"""


def _module(name, folder):
    path = folder / f"{name.replace('.', '_')}.py"
    path.write_text(textwrap.dedent(LITERALS))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_calls_between_vecenvs_functions_compile_once_per_type(tmp_path):
    import numba

    import vecenv  # noqa: F401  (installs the policy when numba loads)
    from vecenv.kernels import cache

    cache.install()
    ours = _module("vecenv_games.literal_probe", tmp_path)  # a game folder's module: owned
    assert ours.walk(1.0) == 6.0
    assert [str(a) for a, _ in ours.ray.signatures] == ["int64"]  # one compile, not three
    assert ours.picks(0.5) == 4.0  # a callee that needs its constants still gets them
    assert any(isinstance(a, numba.types.Literal) for sig in ours.pick.signatures for a in sig)
    theirs = _module("someone_elses.literal_probe", tmp_path)  # numba's rule, untouched
    assert theirs.walk(1.0) == 6.0
    assert len(theirs.ray.signatures) == 3
