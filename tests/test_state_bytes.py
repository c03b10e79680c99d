"""Equal states are equal bytes: the records ``get_state`` returns carry no stray padding."""

import hashlib

import numpy as np
import pytest

from tests.child import run_python
from vecenv.engine import Engine
from vecenv.records import copy_records

GAMES = ["connectx", "cartpole", "tictactoe", "pendulum", "othello"]


def digest(records):
    return hashlib.sha256(records.tobytes()).hexdigest()


@pytest.mark.parametrize("game", GAMES)
def test_identical_engines_give_identical_state_bytes(game):
    engines = [Engine(game, num_envs=5, seed=11) for _ in range(4)]
    for e in engines:
        e.step(np.zeros(e._act_shapes[0], dtype=e.action.kernel_dtype))
    for where in (None, 0, [3, 1], slice(1, 4)):
        assert len({digest(e.get_state(where)) for e in engines}) == 1


def test_padding_is_zero_whatever_the_source_held():
    dtype = np.dtype([("a", np.uint8), ("b", np.int64), ("c", np.uint8, (3,))], align=True)
    fields = np.dtype([("a", np.uint8), ("b", np.int64), ("c", np.uint8, (3,))])
    assert dtype.itemsize > fields.itemsize  # it has padding
    states = np.frombuffer(np.full(4 * dtype.itemsize, 0xAB, np.uint8).tobytes(), dtype).copy()
    states["a"], states["b"], states["c"] = 1, 2, 3
    out = copy_records(states, [2, 0])
    for name in dtype.names:
        np.testing.assert_array_equal(out[name], states[name][[2, 0]])
    expected = np.zeros(2, dtype)
    expected["a"], expected["b"], expected["c"] = 1, 2, 3
    assert out.tobytes() == expected.tobytes()
    assert copy_records(states, 1).shape == ()


def test_nested_records_keep_their_fields_and_lose_their_padding():
    inner = np.dtype([("x", np.uint8), ("y", np.float64)], align=True)
    dtype = np.dtype([("p", inner, (2,)), ("q", np.uint8)], align=True)
    states = np.frombuffer(np.full(3 * dtype.itemsize, 0xFF, np.uint8).tobytes(), dtype).copy()
    states["p"]["x"], states["p"]["y"], states["q"] = 7, 1.5, 9
    out = copy_records(states, [0, 1, 2])
    clean = np.zeros(3, dtype)
    clean["p"]["x"], clean["p"]["y"], clean["q"] = 7, 1.5, 9
    assert out.tobytes() == clean.tobytes()


def test_the_gpu_engine_on_the_simulator_gives_equal_bytes_and_refuses_what_the_cpu_does():
    code = """
        import hashlib, numpy as np, vecenv
        digests = set()
        for _ in range(3):
            engine = vecenv.make("connectx", num_envs=3, seed=5, device="cuda")
            engine.step(np.zeros((3, 2), dtype=np.int64))
            digests.add(hashlib.sha256(engine.get_state().tobytes()).hexdigest())
        print(len(digests))
        pendulum = vecenv.make("pendulum", num_envs=2, seed=0, device="cuda")
        try:
            pendulum.step(np.array([[0.0], [1e300]]))
        except ValueError as exc:
            print(exc)
        try:
            vecenv.make("connectx", num_envs=10**6, device="cuda", rows=1000, columns=1000)
        except ValueError as exc:
            print(exc)
    """
    out = run_python(code, {"NUMBA_ENABLE_CUDASIM": "1"}, timeout=600)
    same, bad_action, too_big = out.splitlines()[-3:]
    assert same == "1"
    assert bad_action.startswith("action of env 1 is not a finite float32")
    assert "over the memory budget" in too_big
