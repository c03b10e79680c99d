"""Actions are checked once, in the engine, before a kernel reads them: a continuous action must
be a finite float32, and only plain numpy arrays (or what numpy reads as one) are taken."""

import types

import gymnasium
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecenv
import vecenv.ray as vray
from vecenv.engine import Engine
from vecenv.kernels.state import ACTION_MAX

FLOAT_GAMES = ["pendulum", "mountaincar_continuous"]
TOO_BIG = [1e300, -1e300, float(np.nextafter(ACTION_MAX, np.inf)), np.inf, np.nan]


@pytest.fixture(scope="module", params=FLOAT_GAMES)
def float_engine(request):
    return Engine(request.param, num_envs=3, seed=0)


@pytest.mark.parametrize("value", TOO_BIG)
def test_a_float_action_outside_float32_is_refused_by_the_engine(float_engine, value):
    before = float_engine.get_state()
    actions = np.zeros((3, 1))
    actions[1, 0] = value
    with pytest.raises(ValueError, match="action of env 1 is not a finite float32"):
        float_engine.step(actions)
    assert before.tobytes() == float_engine.get_state().tobytes()  # nothing moved


@settings(max_examples=30, deadline=None)
@given(value=st.floats(min_value=-ACTION_MAX, max_value=ACTION_MAX))
def test_every_finite_float32_action_is_taken_with_finite_rewards(value):
    engine = Engine("mountaincar_continuous", num_envs=2, seed=1)
    _, rewards, _, _ = engine.step(np.full((2, 1), value))
    assert np.isfinite(rewards).all()


@pytest.mark.parametrize("game", FLOAT_GAMES)
def test_the_gymnasium_faces_refuse_1e300(game):
    gym_id = vecenv.registry.get_spec(game).gym["id"]
    env = gymnasium.make(f"vecenv/{gym_id}")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite float32"):
        env.step(np.array([1e300]))
    vec = gymnasium.make_vec(f"vecenv/{gym_id}", num_envs=2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="finite float32"):
        vec.step(np.array([[0.0], [1e300]]))


def test_the_ray_env_check_refuses_1e300_and_masked_arrays():
    # The check the Ray env runs on the driver before any worker moves (no cluster needed).
    stub = types.SimpleNamespace(
        single_action_space=gymnasium.spaces.Box(-1, 1, (1,), np.float32),
        num_envs=2,
        _action_shape=(1,),
        _game="mountaincar_continuous",
    )
    with pytest.raises(ValueError, match="env 1 is not a finite float32"):
        vray.VectorEnv._check_actions(stub, np.array([[0.0], [1e300]]))
    with pytest.raises(TypeError, match="masked array"):
        vray.VectorEnv._check_actions(stub, np.ma.masked_array([[0.0], [0.5]]))


@pytest.fixture(scope="module")
def cartpole():
    return Engine("cartpole", num_envs=4, seed=0)


def test_a_masked_array_is_refused_naming_the_actions(cartpole):
    masked = np.ma.masked_array(np.zeros(4, dtype=np.int64), mask=[0, 1, 0, 0])
    with pytest.raises(TypeError, match="cartpole actions must be a plain numpy array"):
        cartpole.step(masked)


@pytest.mark.parametrize(
    "face",
    [
        lambda: gymnasium.make("vecenv/CartPole-v1"),
        lambda: gymnasium.make_vec("vecenv/CartPole-v1", num_envs=4),
    ],
)
def test_the_gymnasium_faces_refuse_a_masked_array(face):
    env = face()
    env.reset(seed=0)
    n = getattr(env, "num_envs", None)
    masked = np.ma.masked_array(np.zeros(n or (), dtype=np.int64), mask=True)
    with pytest.raises(TypeError, match="masked array"):
        env.step(masked)


@pytest.mark.parametrize(
    "actions",
    [
        np.zeros(4, dtype=object),
        np.zeros(4, dtype=[("a", np.int64)]),
        np.zeros(4, dtype=np.bool_),
        np.zeros(4, dtype=np.complex128),
        np.zeros(4, dtype="datetime64[s]"),
    ],
    ids=["object", "structured", "bool", "complex", "datetime"],
)
def test_odd_dtypes_are_refused_with_a_value_error(cartpole, actions):
    with pytest.raises(ValueError, match="cartpole actions must be integers"):
        cartpole.step(actions)


class Tagged(np.ndarray):
    """An ndarray subclass numba has no type for."""


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.view(Tagged),
        lambda a: np.repeat(a, 2)[::2],  # not contiguous
        lambda a: a.astype(">i8"),  # big-endian
        lambda a: a.astype(np.uint8),
        lambda a: np.asfortranarray(np.stack([a, a], axis=1))[:, 0],
        lambda a: a.tolist(),
    ],
    ids=["subclass", "strided", "byteswapped", "uint8", "fortran-column", "list"],
)
def test_array_likes_step_as_the_plain_array_does(make):
    plain = np.array([0, 1, 1, 0], dtype=np.int64)
    one, two = Engine("cartpole", num_envs=4, seed=3), Engine("cartpole", num_envs=4, seed=3)
    for _ in range(5):
        one.step(plain)
        two.step(make(plain))
    assert one.get_state().tobytes() == two.get_state().tobytes()


def test_a_byteswapped_float_action_is_checked_after_conversion():
    engine = Engine("pendulum", num_envs=2, seed=0)
    with pytest.raises(ValueError, match="env 0 is not a finite float32"):
        engine.step(np.array([[1e300], [0.0]], dtype=">f8"))
