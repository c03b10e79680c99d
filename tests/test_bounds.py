"""Sizes are bounded before anything is allocated: the specs' maxima, a memory budget every face
meets (it lives in the engine), num_envs' range, and discovery that never allocates a game's
arrays."""

import json
import shutil
import tracemalloc
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv
from tests.child import run_python
from vecenv import memory
from vecenv.engine import Engine
from vecenv.kaggle import make as kaggle_make

WALK = Path(__file__).parent / "games" / "walk"
BIG_BOARD = {"rows": 1000, "columns": 1000}  # the largest board: about 2 MB an episode


def peak_bytes(call):
    """The most bytes Python and numpy held at once while ``call`` ran, and its exception."""
    tracemalloc.start()
    try:
        call()
    except Exception as exc:  # noqa: BLE001 (returned for the test to judge)
        raised = exc
    else:
        raised = None
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, raised


FACES = {
    "engine": lambda **c: vecenv.make("connectx", **c),
    "kaggle": lambda **c: kaggle_make("connectx", configuration=c),
    "gymnasium.make": lambda **c: gymnasium.make("vecenv/ConnectX-v0", **c),
    "gymnasium.make_vec": lambda **c: gymnasium.make_vec("vecenv/ConnectX-v0", num_envs=2, **c),
}


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("key", ["rows", "columns", "inarow"])
def test_connectx_sizes_past_their_maxima_are_refused_by_every_face(face, key):
    peak, raised = peak_bytes(lambda: FACES[face](**{key: 100000}))
    assert isinstance(raised, ValueError)
    assert key in str(raised) and "1000" in str(raised)  # each face words it its own way
    assert peak < 32 * 2**20


@pytest.mark.parametrize("face", FACES)
def test_a_make_over_the_budget_is_refused_by_every_face_before_allocating(face, monkeypatch):
    monkeypatch.setenv(memory.ENV_VAR, "1M")
    # Once unmeasured: the first call imports the face's and the game's modules (whose code
    # objects tracemalloc would count), whatever ran before this test in its process.
    with pytest.raises(ValueError):
        FACES[face](**BIG_BOARD)
    peak, raised = peak_bytes(lambda: FACES[face](**BIG_BOARD))
    assert isinstance(raised, ValueError), raised
    message = str(raised)
    assert "over the memory budget of 1.0 MiB" in message
    assert "state" in message and "observations" in message and memory.ENV_VAR in message
    assert peak < 1 * 2**20  # the board (1 MB a record) was never allocated


def test_num_envs_times_the_sizes_is_what_the_budget_bounds():
    peak, raised = peak_bytes(lambda: Engine("connectx", num_envs=100_000, **BIG_BOARD))
    assert isinstance(raised, ValueError)
    assert "100000 episodes of 1.9 MiB each" in str(raised)
    assert "need 187.1 GiB" in str(raised)
    assert peak < 32 * 2**20


def test_the_budget_is_raised_by_the_argument_or_the_variable(monkeypatch):
    monkeypatch.setenv(memory.ENV_VAR, "100K")
    with pytest.raises(ValueError, match="memory budget of 100.0 KiB"):
        vecenv.make("connectx", **BIG_BOARD)
    engine = vecenv.make("connectx", memory_budget="8M", **BIG_BOARD)
    assert engine.obs["board"].shape == (1, 1000 * 1000)
    monkeypatch.setenv(memory.ENV_VAR, "8MiB")
    assert vecenv.make("connectx", **BIG_BOARD).num_envs == 1


@pytest.mark.parametrize("bad", ["lots", "-5", "0", "1.5.2G", "8X"])
def test_a_bad_budget_is_a_clear_error(monkeypatch, bad):
    monkeypatch.setenv(memory.ENV_VAR, bad)
    with pytest.raises(ValueError, match=memory.ENV_VAR):
        vecenv.make("cartpole")
    monkeypatch.delenv(memory.ENV_VAR)
    with pytest.raises(ValueError, match="memory_budget"):
        vecenv.make("cartpole", memory_budget=bad)


@given(
    number=st.integers(min_value=1, max_value=10**6),
    unit=st.sampled_from(["", "K", "M", "G", "T"]),
    tail=st.sampled_from(["", "B", "iB"]),
)
def test_budget_sizes_parse_in_binary_units(number, unit, tail):
    text = f"{number}{unit.lower() if number % 2 else unit}{tail if unit else ''}"
    assert memory.parse_size(text, "x") == number * memory._UNITS[unit]


def test_the_default_budget_is_4_gib_at_most_and_half_the_memory():
    physical = memory.physical_memory()
    assert memory.default_budget() == min(4 * 2**30, physical // 2 if physical else 4 * 2**30)


@pytest.mark.parametrize("num_envs", [0, -1, -(2**40), 2**31, 10**12, 1.5, True, "8"])
def test_num_envs_out_of_range_is_a_clear_error(num_envs):
    with pytest.raises(ValueError, match=r"num_envs must be a positive integer, at most 2\*\*30"):
        vecenv.make("cartpole", num_envs=num_envs)


def test_listing_a_game_with_a_huge_observation_allocates_nothing_of_its_size(tmp_path):
    """A user game whose observation is 30000 x 30000 float64s (7.2 GB an episode)."""
    folder = tmp_path / "games" / "walk"
    shutil.copytree(WALK, folder)
    spec = json.loads((folder / "walk.json").read_text())
    spec["observation"]["position"].update(shape=[30000, 30000], dtype="float64")
    (folder / "walk.json").write_text(json.dumps(spec))
    code = """
        import contextlib, io, tracemalloc
        tracemalloc.start()
        import vecenv
        from vecenv.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main(["list"])
        peak = tracemalloc.get_traced_memory()[1]
        try:
            vecenv.make("walk")
        except ValueError as exc:
            refused = str(exc)
        print("walk" in vecenv.list_envs(), "(30000,30000)" in out.getvalue().replace(" ", ""))
        print(peak)
        print(refused)
    """
    env = {
        "VECENV_GAMES_PATH": str(tmp_path / "games"),
        "VECENV_CACHE_DIR": str(tmp_path / "cache"),
        "VECENV_MEMORY_BUDGET": "",  # the default budget, whatever this process was given
    }
    out = run_python(code, env, tmp_path)
    found, peak, refused = out.splitlines()[-3:]
    assert found == "True True"
    assert int(peak) < 200 * 2**20  # the observation's bounds alone would be 14 GB
    assert "walk: 1 episode of 6.7 GiB each" in refused


def test_spec_bounds_of_one_value_take_no_memory_of_the_shape():
    spec = vecenv.registry.get_spec("connectx")
    defaults = {key: entry.default for key, entry in spec.configuration.items()}
    fields = spec.observation_fields({**defaults, **BIG_BOARD})
    board = next(f for f in fields if f.name == "board")
    assert board.low.shape == (10**6,) and board.low.strides == (0,)
    assert not board.low.flags.writeable and np.all(board.high[:5] == 2)
