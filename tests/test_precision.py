"""precision="float32": the float games' rules compiled from the same source with float32 state
and arithmetic (``vecenv.kernels.precision``), float64 staying the rules as written.

What is proved here: the float32 copy of every float game computes in float32 (its step's LLVM
IR holds no double arithmetic and no double sine or cosine); its arithmetic is float32's wherever
a float32 meets another number and the operator's own elsewhere (property tests); the rewrite
keeps everything else of the source; the engine's checks, pickling, seeding and the faces work on
it; float64 engines still run the rules module itself (their bit-exactness with the references is
``tests/envs``'); a float32 CartPole plays episodes of the float64 game's lengths. The contract of
``vecenv.testing`` runs on every float game in float32 too (its "float32" check).
"""

import importlib
import json
import pickle
import re
import sys
import types
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecenv
from vecenv import registry
from vecenv.kernels import build, precision, precision_ops
from vecenv.kernels.state import state_dtype

from .envs.reference import need

FLOAT_GAMES = [g for g in registry.list_envs() if precision.declared(registry.rules(g))]
# Compiled ahead by tests.warmup where it runs (see tests/conftest.py).
WARM = [(game, {"precision": "float32"}) for game in FLOAT_GAMES]


def test_the_float_games_declare_their_precision():
    assert set(FLOAT_GAMES) == {
        "cartpole",
        "acrobot",
        "mountaincar",
        "mountaincar_continuous",
        "pendulum",
        "csuite_pendulum",
        "pendulum_poke",
    }


def test_float64_runs_the_rules_as_written_and_integer_games_ignore_precision():
    e = vecenv.make("cartpole", num_envs=2, seed=0)
    assert e.precision == "float64" and e.rules is registry.rules("cartpole")
    assert e.state_dtype["x"] == np.float64
    board = vecenv.make("tictactoe", num_envs=2, seed=0, precision="float32")
    assert board.rules is registry.rules("tictactoe")
    plain = build.load_drivers("tictactoe", registry.rules("tictactoe"), True)
    assert board._drivers is plain  # the same compiled loops
    with pytest.raises(ValueError, match="precision must be one of"):
        vecenv.make("cartpole", precision="float16")
    with pytest.raises(ValueError, match="GPU engine"):
        vecenv.make("cartpole", device="cuda", precision="float32")


@pytest.fixture(scope="module")
def cartpoles():
    """float32 CartPoles (one compile of the copy for the module's tests)."""
    return vecenv.make("cartpole", num_envs=8, seed=4, precision="float32")


def test_declared_fields_and_configuration_are_float32_and_the_rest_is_not(cartpoles):
    e = cartpoles
    assert e.precision == "float32" and e.rules is not registry.rules("cartpole")
    assert [e.state_dtype[f] for f in ("x", "x_dot", "theta", "theta_dot")] == [np.float32] * 4
    assert e.state_dtype["rng"] == np.uint64 and e.state_dtype["step"] == np.int64
    assert np.float32(0.02) == e.rules.TAU and isinstance(e.rules.TAU, np.float32)
    assert np.float32(12 * 2 * np.pi / 360) == e.rules.THETA_THRESHOLD
    poke = vecenv.make("pendulum_poke", num_envs=2, seed=0, precision="float32")
    cfg = poke._cfg.dtype
    assert cfg["gravity"] == np.float32 and cfg["perturb_prob"] == np.float32
    assert cfg["act_step_period"] == np.int64  # an integer stays one
    assert poke.state_dtype["torque"] == np.int64


def test_a_float32_engine_steps_checks_pickles_and_replays(cartpoles):
    e = cartpoles
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, rewards, terminated, truncated = e.step(rng.integers(0, 2, 8))
    assert obs["obs"].dtype == np.float32 and rewards.dtype == np.float64
    with pytest.raises(ValueError, match="out of range"):
        e.step(np.full(8, 2))
    with pytest.raises(ValueError, match="dtype of get_state"):
        e.set_state(np.zeros(8, dtype=state_dtype(registry.rules("cartpole").FIELDS)))
    bad = e.get_state()
    bad["theta"][3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        e.set_state(bad)
    loaded = pickle.loads(pickle.dumps(e))
    assert loaded.precision == "float32" and loaded.state_dtype == e.state_dtype
    actions = [rng.integers(0, 2, 8) for _ in range(20)]
    saved = e.get_state()
    for a in actions:
        e.step(a)
        loaded.step(a)
    np.testing.assert_array_equal(loaded.get_state(), e.get_state())
    e.set_state(saved)
    np.testing.assert_array_equal(e.get_state(), saved)


def test_bounds_hold_float32_states_as_float32_computes_them():
    """Acrobot's float32 dynamics wrap its angles into [-float32(pi), float32(pi)], a hair wider
    than float64's [-pi, pi]: its bounds are compared in float32, so a state it made is one
    ``set_state`` takes back."""
    pi32 = np.float32(np.pi)
    assert float(pi32) > np.pi
    e = vecenv.make("acrobot", num_envs=2, seed=1, precision="float32")
    state = e.get_state()
    state["theta1"] = [pi32, -pi32]
    e.set_state(state)
    state["dtheta1"][1] = np.float32(4 * np.pi) * np.float32(1.01)
    with pytest.raises(ValueError, match="dtheta1"):
        e.set_state(state)


def test_float32_cartpole_on_two_threads_and_in_any_batch_split():
    n = vecenv.engine.PARALLEL_MIN_ENVS + 5
    one = vecenv.make("cartpole", num_envs=n, seed=6, precision="float32")
    two = vecenv.make(
        "cartpole", num_envs=n, seed=6, precision="float32", num_threads=2, parallel=True
    )
    part = vecenv.make("cartpole", num_envs=7, seed=6, precision="float32")
    rng = np.random.default_rng(6)
    for _ in range(40):
        a = rng.integers(0, 2, n)
        one.step(a)
        two.step(a)
        part.step(a[:7])
    np.testing.assert_array_equal(one.get_state(), two.get_state())
    np.testing.assert_array_equal(one.get_state()[:7], part.get_state())


def test_float32_cartpole_plays_the_float64_games_episodes():
    """Random play from the same seeds: as many episodes end (the starts differ by float32's
    rounding, the paths then drift apart). The mean count per episode slot within 4 standard
    errors of the difference; docs/precision.md has the long runs."""
    n, steps = 256, 300
    ended = {}
    for p in ("float64", "float32"):
        e = vecenv.make("cartpole", num_envs=n, seed=11, precision=p)
        rng = np.random.default_rng(11)
        count = np.zeros(n)
        for _ in range(steps):
            _, _, terminated, truncated = e.step(rng.integers(0, 2, n))
            count += terminated | truncated
        ended[p] = count
    diff = ended["float32"].mean() - ended["float64"].mean()
    se = np.sqrt((ended["float32"].var() + ended["float64"].var()) / n)
    assert abs(diff) < 4 * se, (diff, se)
    assert ended["float32"].sum() > 10 * n  # random play ends an episode every ~22 steps


# -- the arithmetic ---------------------------------------------------------------------------

OPS = ("add", "sub", "mul", "truediv", "mod", "lt", "eq", "max2")


@numba.njit(error_model="numpy")
def _ops(a, b):
    return (
        precision_ops.add(a, b),
        precision_ops.sub(a, b),
        precision_ops.mul(a, b),
        precision_ops.truediv(a, b),
        precision_ops.mod(a, b),
        precision_ops.lt(a, b),
        precision_ops.eq(a, b),
        precision_ops.max2(a, b),
    )


_PY = (
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    lambda a, b: a / b,
    lambda a, b: a % b,
    lambda a, b: a < b,
    lambda a, b: a == b,
    max,
)

finite32 = st.floats(-1e6, 1e6, width=32).filter(lambda x: abs(x) > 1e-3)
finite64 = st.floats(-1e6, 1e6).filter(lambda x: abs(x) > 1e-3)
ints = st.integers(-(2**20), 2**20).filter(lambda x: x != 0)


@settings(max_examples=60, deadline=None)
@given(x=finite32, y=st.one_of(finite64, ints))
def test_a_float32_meeting_another_number_computes_in_float32(x, y):
    # (float32, float64) and (int64, float32): both sides, both kinds of other number
    f = np.float32(x)
    a, b = (f, np.float64(y)) if isinstance(y, float) else (np.int64(y), f)
    for name, py, value in zip(OPS, _PY, _ops(a, b), strict=True):
        want = py(np.float32(a), np.float32(b))  # NumPy's float32 arithmetic
        if isinstance(want, np.floating):
            # a float32 result (widened when boxed), the very float32 NumPy computes
            assert float(np.float32(value)) == value and np.float32(value) == want, name
        else:
            assert bool(value) == bool(want), name


@settings(max_examples=40, deadline=None)
@given(x=finite64, y=ints)
def test_other_operands_keep_the_operators_own_types(x, y):
    a, b, i = np.float64(x), np.int64(y), np.int64(7)
    for name, py, value in zip(OPS, _PY, _ops(a, b), strict=True):
        assert value == py(a, b), name
    assert _ops(i, b)[:3] == (i + b, i - b, i * b) and _ops(i, b)[4] == i % b


def test_the_narrowing_rule_by_types():
    f32, f64, i64 = numba.float32, numba.float64, numba.int64
    assert precision_ops.narrows(f32, f64) and precision_ops.narrows(i64, f32)
    assert precision_ops.narrows(f32, numba.boolean)
    assert not precision_ops.narrows(f32, f32) and not precision_ops.narrows(f64, i64)
    assert not precision_ops.narrows(f32, numba.types.UniTuple(f32, 2))


# -- the float32 copies really compute in float32 -----------------------------------------------

_DOUBLE_MATH = re.compile(r"= (fadd|fsub|fdiv|frem) (\w+ )*double|@llvm\.\w+\.f64|@(sin|cos|pow)\(")
# The one double operation a step may keep: a random draw's scaling to [0, 1) (2**-53).
_DOUBLE_MUL = re.compile(r"= fmul (\w+ )*double (.*)")


def _fresh_step(engine):
    """The copy's ``step`` compiled afresh (not from numba's cache, whose machine code keeps no
    IR) for the engine's types, and its LLVM IR."""
    source = Path(engine.rules.__file__).read_text().replace("cache=True", "cache=False")
    module = types.ModuleType(f"{engine.rules.__name__}_ir")
    exec(compile(source, engine.rules.__file__, "exec"), module.__dict__)
    sig = (
        numba.typeof(engine._states[0]),
        numba.typeof(engine._cfg[0]),
        numba.typeof(np.zeros(engine._act_width, engine._act_dtype)),
        numba.typeof(np.zeros(1)),
    )
    module.step.compile(sig)
    return module.step.inspect_llvm(sig)


@pytest.mark.parametrize("game", FLOAT_GAMES)
def test_the_float32_copy_computes_in_float32(game):
    engine = vecenv.make(game, num_envs=2, seed=0, precision="float32")
    ir = _fresh_step(engine)
    assert "float" in ir
    assert not _DOUBLE_MATH.findall(ir), game
    for line in _DOUBLE_MUL.findall(ir):
        assert "0x3CA0000000000000" in line[-1], line  # 2**-53: rng.uniform's scale
    if game in ("cartpole", "acrobot"):
        assert re.search(r"@llvm\.(sin|cos)\.f32|@(sinf|cosf)\(", ir)


# -- the rewrite ----------------------------------------------------------------------------

GAME = '''"""A drifting point."""

import math

import numba as nb
import numpy as np

from vecenv.kernels.npmath import square
from .consts import DRAG

FIELDS = [("x", np.float64), ("v", np.float64), ("hits", np.int64)]
PRECISION = ("x", "v", "GAIN", "DRAG")
GAIN = 0.5
LIMIT = 2  # an integer constant: not declared


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.x = 0.25
    s.v = 0.0
    s.hits = 0


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    v = s.v
    v += (actions[0] - 1) * GAIN - DRAG * v
    v = min(max(v, -1.0), 1.0)
    s.x = (s.x + 2 * v) % (2 * math.pi)
    if -LIMIT < s.x < LIMIT:
        s.hits += 1
    s.v = np.float64(v)
    rewards[0] = -square(s.x)
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    obs[0][i, 0, 0] = s.x
    obs[0][i, 0, 1] = s.v


def describe(x):
    return 1.5 * x  # plain Python: never rewritten
'''

SPEC = {
    "name": "drift",
    "title": "Drift",
    "description": "A point drifting on a circle.",
    "version": "1.0.0",
    "agents": [1],
    "configuration": {"episodeSteps": {"type": "integer", "minimum": 1, "default": 20}},
    "reward": {"type": "number", "minimum": -40, "maximum": 0},
    "observation": {
        "obs": {"type": "array", "shape": [2], "dtype": "float32", "low": -7, "high": 7}
    },
    "action": {"type": "integer", "minimum": 0, "maximum": 2, "default": 1},
}


def _drift(where, source=GAME):
    """The drift game's folder under ``where``, registered."""
    folder = where / "drift"
    folder.mkdir(parents=True)
    (folder / "rules.py").write_text(source)
    (folder / "consts.py").write_text("DRAG = 0.1\nPRECISION = ('DRAG',)\n")
    (folder / "drift.json").write_text(json.dumps(SPEC))
    assert vecenv.register(folder) == "drift"
    return folder


@pytest.fixture
def drift(tmp_path):
    return _drift(tmp_path)


def test_the_rewrite_of_a_games_source(drift):
    rules = registry.rules("drift")
    names = precision.module_names(rules, ("vecenv_games.",))
    copies = {m: f"copy_{k}" for k, m in enumerate(names)}
    assert list(copies)[-1] == rules.__name__ and len(copies) == 2  # the helper module first
    text = precision.rewrite(rules, copies)
    f = precision.ALIAS
    assert f"from {copies[rules.__name__.rsplit('.', 1)[0] + '.consts']} import DRAG" in text
    assert "from vecenv.kernels.precision_ops import square" in text
    assert f"s.x = {f}.FLOAT(0.25)" in text
    assert f"v = {f}.add(v, {f}.sub({f}.mul({f}.sub(actions[0], 1), GAIN), {f}.mul(DRAG, v)))" in (
        text
    )
    assert f"{f}.min2({f}.max2(v, -{f}.FLOAT(1.0)), {f}.FLOAT(1.0))" in text
    assert f"{f}.FLOAT(math.pi)" in text and f"s.v = {f}.FLOAT(v)" in text
    assert f"{f}.lt(-LIMIT, s.x) and {f}.lt(s.x, LIMIT)" in text
    assert f"s.hits = {f}.add(s.hits, 1)" in text
    assert "return 1.5 * x" in text  # the plain Python function is untouched
    assert f"GAIN = {f}.FLOAT(GAIN)" in text and "LIMIT = " in text.split("FLOAT(GAIN)")[0]
    assert "FIELDS = _vecenv_fields(FIELDS" in text


def test_a_registered_game_runs_in_float32_and_its_declaration_is_checked(drift):
    e = vecenv.make("drift", num_envs=3, seed=0, precision="float32")
    assert e.state_dtype["x"] == np.float32 and e.state_dtype["hits"] == np.int64
    consts = [m for m in list(sys.modules.values()) if getattr(m, "DRAG", None) is not None]
    assert any(isinstance(m.DRAG, np.float32) for m in consts)
    # The copy's arithmetic is NumPy's float32 arithmetic of the same expressions, bit for bit.
    f = np.float32
    actions = np.array([2, 0, 1])
    x, v, hits = np.full(3, f(0.25)), np.zeros(3, f), np.zeros(3, np.int64)
    for _ in range(10):
        e.step(actions)
        v = v + ((actions - 1).astype(f) * f(0.5) - f(0.1) * v)
        v = np.minimum(np.maximum(v, f(-1.0)), f(1.0))
        x = (x + f(2) * v) % (f(2) * f(np.pi))
        hits += (f(-2) < x) & (x < f(2))
    np.testing.assert_array_equal(e.states["x"], x)
    np.testing.assert_array_equal(e.states["v"], v)
    np.testing.assert_array_equal(e.states["hits"], hits)
    declared = 'PRECISION = ("x", "v",'
    for k, (names, message) in enumerate(
        (('"LIMIT",', "'LIMIT', which is no float"), ('"hits",', "'hits', which is no float"))
    ):
        vecenv.unregister("drift")
        _drift(drift.parent / str(k), GAME.replace(declared, f"{declared} {names}"))
        with pytest.raises(registry.GameError, match=message):
            vecenv.make("drift", num_envs=1, precision="float32")


def test_a_plain_import_of_a_rewritten_module_is_refused(tmp_path):
    path = tmp_path / "plain_import_rules.py"
    path.write_text("import vecenv.kernels.npmath\nPRECISION = ()\n")
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("plain_import_rules")
        with pytest.raises(ValueError, match="cannot follow the precision"):
            precision.rewrite(module, {})
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("plain_import_rules", None)


# -- the faces ------------------------------------------------------------------------------


def test_every_face_takes_a_precision():
    import gymnasium

    from vecenv.ppo import vector_env
    from vecenv.sb3 import VecEnv

    vec = gymnasium.make_vec("vecenv/CartPole-v1", num_envs=4, precision="float32")
    single = gymnasium.make("vecenv/CartPole-v1", precision="float32")
    sb3 = VecEnv("CartPole-v1", num_envs=4, precision="float32")
    trainer_env = vector_env("CartPole-v1", 4, precision="float32")
    engines = [vec.unwrapped.engine, single.unwrapped.engine, sb3.engine]
    engines.append(trainer_env.unwrapped.engine)
    assert all(e.precision == "float32" and e.state_dtype["x"] == np.float32 for e in engines)
    vec.reset(seed=0)
    obs = vec.step(np.ones(4, dtype=np.int64))[0]
    assert obs.dtype == np.float32 and obs.shape == (4, 4)
    single.reset(seed=0)
    assert single.step(1)[0].shape == (4,)
    sb3.reset()
    assert sb3.step(np.ones(4, dtype=np.int64))[0].shape == (4, 4)
    with pytest.raises(ValueError, match="as written"):
        vector_env("CartPole-v1", 4, backend="gymnasium", precision="float32")


def test_the_pufferlib_face_takes_a_precision():
    need("pufferlib", "pufferlib 3.0 (see docs/faces/pufferlib.md)")
    from vecenv.pufferlib import PufferEnv

    puffer = PufferEnv("cartpole", num_envs=4, precision="float32")
    assert puffer.engine.precision == "float32"
    assert puffer.engine.state_dtype["x"] == np.float32
    puffer.reset(0)
    assert puffer.step(np.ones(4, dtype=np.int32))[1].dtype == np.float32
