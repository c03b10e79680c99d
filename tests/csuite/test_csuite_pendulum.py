"""csuite's continuing pendulum: exact trajectories against a plain numpy implementation of
csuite's equations (same order of operations), configuration effects, the sparse reward, angle
wrapping, random input, and the batched faces (never terminated)."""

import math

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv
from vecenv import registry

from .helpers import (
    FUZZ,
    NEGATIVE,
    OBSERVATION_SPACE,
    PENDULUM_PARAMS,
    POKE_DEFAULTS,
    POSITIVE,
    REWARD_HIGH,
    REWARD_LOW,
    STAY,
    assert_matches,
    assert_refused,
    pumping_actions,
    reference_step,
    run_single_env,
    run_vector_env,
)
from .helpers import PENDULUM_DEFAULTS as DEFAULTS
from .helpers import make_pendulum as make
from .helpers import put_pendulums as put

# -- specification and start -----------------------------------------------------------------


@pytest.mark.parametrize(
    "game, defaults, csuite_name, gym_id",
    [
        ("csuite_pendulum", DEFAULTS, "pendulum", "CSuitePendulum-v0"),
        ("pendulum_poke", dict(DEFAULTS, **POKE_DEFAULTS), "pendulum_poke", "PendulumPoke-v0"),
    ],
)
def test_spec_is_csuites(game, defaults, csuite_name, gym_id):
    spec = registry.get_spec(game)
    config = {k: e.default for k, e in spec.configuration.items()}
    assert config == defaults and config["max_speed"] == np.inf
    assert spec.configuration["act_step_period"].type == "integer"
    (field,) = spec.observation
    assert field.name == "observation" and field.shape == (3,) and field.dtype == np.float32
    np.testing.assert_array_equal(field.low, [-1, -1, -np.inf])
    np.testing.assert_array_equal(field.high, [1, 1, np.inf])
    bounded = vecenv.make(game, max_speed=8.0).observation[0]
    np.testing.assert_array_equal(bounded.low, [-1, -1, -8])
    np.testing.assert_array_equal(bounded.high, [1, 1, 8])
    assert (spec.action.low[0], spec.action.high[0]) == (0, 2)
    assert spec.raw["csuite"] == {
        "name": csuite_name,
        "observation_name": None,
        "action_name": "action",
    }
    assert spec.gym == {"id": gym_id}


def test_start_hangs_down_at_rest():
    engine = make(4, seed=9)
    s = engine.get_state()
    assert (s["angle"] == 0).all() and (s["velocity"] == 0).all() and (s["torque"] == 0).all()
    np.testing.assert_array_equal(engine.obs["observation"][:, 0], [[1, 0, 0]] * 4)


# -- exact trajectories ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"friction": 0.0, "gravity": 3.5, "simulation_step_size": 0.1, "act_step_period": 7},
        {"friction": 0.5, "act_step_period": 1, "max_speed": 2.5},
        {"gravity": -9.81, "simulation_step_size": 0.013, "max_speed": 0.75},
    ],
)
def test_trajectory_is_bit_exact(params):
    """600 actions of a fixed state-feedback rule, with random actions mixed in: every angle,
    velocity, observation and reward equals the numpy reference bit for bit."""
    engine = make(1, params, seed=0)
    rng = np.random.default_rng(1)
    angle, velocity = 0.0, 0.0
    rewarded = 0
    for t in range(600):
        action = pumping_actions(angle, velocity) if t % 7 else int(rng.integers(3))
        engine.step(np.array([action]))
        angle, velocity, obs, reward = reference_step(angle, velocity, action - 1, params)
        assert_matches(engine, 0, angle, velocity, obs, reward)
        assert engine.get_state(0)["torque"] == action - 1
        rewarded += reward
    if not params:
        assert rewarded > 50  # the swing-up reaches the top, again and again


def test_first_actions_from_rest_by_hand():
    """Without gravity and friction the torque integrates exactly: after k substeps of dt the
    velocity is k * tau * dt and the angle dt**2 * tau * k * (k + 1) / 2 (semi-implicit Euler)."""
    engine = make(3, {"gravity": 0.0, "friction": 0.0}, seed=0)
    engine.step(np.array([POSITIVE, STAY, NEGATIVE]))
    s = engine.get_state()
    np.testing.assert_allclose(s["velocity"], [0.2, 0.0, -0.2], rtol=1e-15, atol=0)
    # 0.0025 * 10 = 0.025 forwards; backwards wraps to 2 pi - 0.025.
    np.testing.assert_allclose(s["angle"], [0.025, 0.0, 2 * np.pi - 0.025], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(engine.rewards[:, 0], [0, 0, 0])


def test_one_default_step_from_rest_by_hand():
    """csuite's defaults, torque +1 from rest: the four substeps written out with floats."""
    v = a = 0.0
    for _ in range(4):
        v = v + (1 - 0.1 * v - 9.81 * math.sin(a)) * 0.05
        a = a + v * 0.05
    engine = make(1, seed=0)
    engine.step(np.array([POSITIVE]))
    s = engine.get_state(0)
    assert s["angle"] == a and s["velocity"] == v
    assert 0.02 < a < 0.025 and 0.18 < v < 0.2  # gravity and friction only hold it back


# -- configuration effects -------------------------------------------------------------------


def test_friction_decays_velocity_geometrically():
    """No gravity, no torque: each substep multiplies the velocity by (1 - mu * dt)."""
    for friction in (0.0, 0.1, 2.0):
        engine = make(1, {"gravity": 0.0, "friction": friction}, seed=0)
        put(engine, 1.0, 3.0)
        engine.step(np.array([STAY]))
        want = 3.0
        for _ in range(4):
            want = want + (0 - friction * want - 0.0) * 0.05
        assert engine.get_state(0)["velocity"] == want
        np.testing.assert_allclose(want, 3.0 * (1 - friction * 0.05) ** 4, rtol=1e-14)


def test_substeps_and_step_size():
    """act_step_period substeps of simulation_step_size each: k substeps of dt from rest with
    neither gravity nor friction reach velocity k * dt; with 0 substeps nothing moves."""
    for period, dt in [(1, 0.05), (4, 0.05), (10, 0.01), (3, 0.2)]:
        engine = make(
            1,
            {"gravity": 0.0, "friction": 0.0, "act_step_period": period},
            simulation_step_size=dt,
            seed=0,
        )
        engine.step(np.array([POSITIVE]))
        s = engine.get_state(0)
        np.testing.assert_allclose(s["velocity"], period * dt, rtol=1e-14)
        np.testing.assert_allclose(s["angle"], dt * dt * period * (period + 1) / 2, rtol=1e-13)
    for period in (0, -3):
        engine = make(1, {"act_step_period": period}, seed=0)
        put(engine, 2.0, 1.5)
        engine.step(np.array([POSITIVE]))
        s = engine.get_state(0)
        assert s["angle"] == 2.0 and s["velocity"] == 1.5


def test_gravity_pulls_towards_the_bottom():
    engine = make(2, seed=0)
    put(engine, [1.0, 2 * np.pi - 1.0], [0.0, 0.0])
    engine.step(np.array([STAY, STAY]))
    v = engine.get_state()["velocity"]
    assert v[0] < 0 < v[1] and v[0] == -v[1]
    weak = make(1, {"gravity": 1.0}, seed=0)
    put(weak, 1.0, 0.0)
    weak.step(np.array([STAY]))
    assert v[0] < weak.get_state(0)["velocity"] < 0


@pytest.mark.parametrize("max_speed", [0.0, 0.5, 2.0])
def test_max_speed_clips_the_velocity(max_speed):
    engine = make(4, {"max_speed": max_speed}, seed=0)
    put(engine, [0.0, 0.0, 3.0, 3.0], [5.0, -5.0, 0.1, -0.1])
    engine.step(np.full(4, STAY))
    for i, (a, v) in enumerate([(0.0, 5.0), (0.0, -5.0), (3.0, 0.1), (3.0, -0.1)]):
        ref = reference_step(a, v, 0, {"max_speed": max_speed})
        assert_matches(engine, i, *ref)
    velocity = engine.get_state()["velocity"]
    assert (np.abs(velocity) <= max_speed).all()
    assert velocity[0] == max_speed and velocity[1] == -max_speed


def test_default_max_speed_never_clips():
    engine = make(1, seed=0)
    put(engine, 0.0, 1e300)
    engine.step(np.array([STAY]))
    ref = reference_step(0.0, 1e300, 0)
    assert engine.get_state(0)["velocity"] == ref[1] > 1e299
    assert engine.obs["observation"][0, 0, 2] == np.inf  # float32 overflows, as csuite's


# -- reward ----------------------------------------------------------------------------------


def test_reward_is_one_strictly_inside_thirty_degrees_of_upright():
    """With no substeps the angle stays, so the reward reads the state's own angle."""
    angles = [
        REWARD_LOW,
        np.nextafter(REWARD_LOW, 4.0),
        np.pi,
        np.nextafter(REWARD_HIGH, 0.0),
        REWARD_HIGH,
        0.0,
        np.pi / 2,
        2 * np.pi,
    ]
    engine = make(len(angles), {"act_step_period": 0}, seed=0)
    put(engine, angles, 0.0)
    _, rewards, terminated, _ = engine.step(np.full(len(angles), POSITIVE))
    np.testing.assert_array_equal(rewards[:, 0], [0, 1, 1, 1, 0, 0, 0, 0])
    assert not terminated.any()
    assert math.isclose(REWARD_LOW, math.radians(150)) and math.isclose(
        REWARD_HIGH, math.radians(210)
    )


def test_reward_reads_the_angle_after_the_step():
    engine = make(2, seed=0)
    put(engine, [np.pi, REWARD_LOW - 0.01], [0.0, 2.0])
    _, rewards, _, _ = engine.step(np.array([STAY, STAY]))
    assert engine.get_state(1)["angle"] > REWARD_LOW
    np.testing.assert_array_equal(rewards[:, 0], [1.0, 1.0])
    put(engine, [REWARD_HIGH - 1e-3, np.pi], [3.0, 0.0])
    _, rewards, _, _ = engine.step(np.array([STAY, STAY]))
    assert engine.get_state(0)["angle"] > REWARD_HIGH
    np.testing.assert_array_equal(rewards[:, 0], [0.0, 1.0])


# -- angle wrapping --------------------------------------------------------------------------


def test_angle_wraps_into_zero_two_pi():
    cases = [(6.2, 2.0), (0.05, -2.0), (2 * np.pi, 0.0), (0.0, -1e-18), (3.0, 400.0)]
    engine = make(len(cases), seed=0)
    put(engine, *zip(*cases, strict=True))
    engine.step(np.full(len(cases), STAY))
    for i, (a, v) in enumerate(cases):
        assert_matches(engine, i, *reference_step(a, v, 0))
    angles = engine.get_state()["angle"]
    assert ((angles >= 0) & (angles <= 2 * np.pi)).all()
    assert 0 < angles[0] < 1 and 5.5 < angles[1] < 2 * np.pi
    assert angles[2] == 0.0
    # Python's float modulo of a tiny negative angle rounds to 2 pi itself, as csuite's does.
    assert angles[3] == 2 * np.pi


def test_angle_two_pi_is_a_valid_state_and_beyond_is_not():
    engine = make(1, seed=0)
    put(engine, 2 * np.pi, 0.0)
    np.testing.assert_allclose(engine.obs["observation"][0, 0], [1, 0, 0], atol=1e-6)
    for bad in (np.nextafter(2 * np.pi, 7.0), -1e-300, -1.0, 7.0):
        before = engine.get_state()
        state = engine.get_state(0)
        state["angle"] = bad
        with pytest.raises(ValueError, match=r"expected angle to be in range \[0, 2pi\]"):
            engine.set_state(state, 0)
        np.testing.assert_array_equal(engine.get_state(), before)


def test_no_randomness_is_used():
    engine = make(3, seed=4)
    words = engine.get_state()["rng"]
    for t in range(50):
        engine.step(np.full(3, t % 3))
    np.testing.assert_array_equal(engine.get_state()["rng"], words)
    other = make(3, seed=5)
    for t in range(50):
        other.step(np.full(3, t % 3))
    np.testing.assert_array_equal(other.get_state()["angle"], engine.get_state()["angle"])


# -- random input ----------------------------------------------------------------------------


@FUZZ
@given(
    params=st.fixed_dictionaries({}, optional=PENDULUM_PARAMS),
    actions=st.lists(st.integers(0, 2), max_size=60),
)
def test_random_configurations_and_actions_match_the_reference(params, actions):
    engine = make(1, params, seed=0)
    angle, velocity = 0.0, 0.0
    for action in actions:
        engine.step(np.array([action]))
        angle, velocity, obs, reward = reference_step(angle, velocity, action - 1, params)
        assert_matches(engine, 0, angle, velocity, obs, reward)


@FUZZ
@given(
    angle=st.floats(0.0, 2 * np.pi),
    velocity=st.floats(-1e6, 1e6),
    torque=st.integers(-1, 1),
    word=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 2), max_size=20),
)
def test_random_valid_states_are_accepted_and_run(angle, velocity, torque, word, actions):
    engine = make(1, seed=0)
    state = engine.get_state(0)
    state["angle"], state["velocity"], state["torque"], state["rng"] = angle, velocity, torque, word
    engine.set_state(state, 0)
    expected = np.array((np.cos(angle), np.sin(angle), velocity), dtype=np.float32)
    assert engine.obs["observation"][0, 0].tobytes() == expected.tobytes()
    for action in actions:
        engine.step(np.array([action]))
        angle, velocity, obs, reward = reference_step(angle, velocity, action - 1)
        assert_matches(engine, 0, angle, velocity, obs, reward)


# The state's fields of each pendulum and when a value is valid for them.
VALID = {
    "angle": lambda v: np.isfinite(v) and 0 <= v <= 2 * np.pi,
    "velocity": np.isfinite,
    "torque": lambda v: -1 <= v <= 1,
    "perturb_direction": lambda v: -1 <= v <= 1,
}
FIELDS = {
    "csuite_pendulum": ["angle", "velocity", "torque"],
    "pendulum_poke": ["angle", "velocity", "torque", "perturb_direction"],
}


@pytest.mark.parametrize("game, i", [("csuite_pendulum", 1), ("pendulum_poke", 0)])
@FUZZ
@given(
    data=st.data(),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(2**63), 2**63 - 1),
    ),
)
def test_random_invalid_states_raise_value_error_and_change_nothing(game, i, data, value):
    """Episode ``i``'s field set to ``value``: refused when invalid, changing nothing; accepted
    and run when valid."""
    field = data.draw(st.sampled_from(FIELDS[game]))
    engine = make(2, seed=0, game=game)
    engine.step(np.array([POSITIVE, NEGATIVE]))
    state = engine.get_state()
    try:
        state[field][i] = value
    except (OverflowError, ValueError):
        return
    if VALID[field](state[field][i]):
        engine.set_state(state)
        engine.step(np.array([STAY, STAY]))
        return
    assert_refused(engine, state)


# -- faces and rendering ---------------------------------------------------------------------


def test_gymnasium_vector_env_is_continuing():
    first, rewards = run_vector_env(
        "vecenv/CSuitePendulum-v0", OBSERVATION_SPACE, gymnasium.spaces.Discrete(3)
    )
    np.testing.assert_array_equal(first, [[1, 0, 0]] * 8)
    assert np.isin(rewards, (0.0, 1.0)).all()
    run_single_env("vecenv/CSuitePendulum-v0", 20)


RED, BLUE, LIGHT_GREEN = (255, 0, 0), (0, 0, 255), (0xD4, 0xFF, 0xD6)


def test_render_frames():
    """csuite's picture: the pivot at (127, 127), the tip 0.75 * 127 pixels away (down at angle
    0, up at pi) in red, the reward region shaded at the top, a blue torque arc on the right for
    +1 and on the left for -1."""
    engine = make(1, seed=0)
    frame = engine.render()
    assert frame.dtype == np.uint8 and frame.shape == (256, 256, 3)
    tip = 127 + 0.75 * 127
    assert tuple(frame[round(tip), 127]) == RED  # hanging down
    assert tuple(frame[60, 127]) == LIGHT_GREEN  # the shaded region above the pivot
    assert tuple(frame[160, 127]) == (0, 0, 0)  # the rod
    assert (frame == BLUE).all(-1).sum() == 0
    state = engine.get_state(0)
    state["angle"], state["torque"] = np.pi, 1
    engine.set_state(state, 0)
    frame = engine.render()
    assert tuple(frame[round(127 - 0.75 * 127), 127]) == RED  # upright
    blue = np.argwhere((frame == BLUE).all(-1))
    assert blue.size and (blue[:, 1] > 200).all()  # right of the pivot
    state["torque"] = -1
    engine.set_state(state, 0)
    blue = np.argwhere((engine.render() == BLUE).all(-1))
    assert blue.size and (blue[:, 1] < 56).all()
    text = engine.render(mode="ansi")
    assert "angle= 180.00deg" in text and "torque=-1" in text


def test_clipping_is_numpys_on_signed_zeros_and_crossed_bounds():
    """np.clip keeps the velocity on a tie (-0.0 stays -0.0 within [-0.0, 0.0]) and clips a
    velocity below -max_speed to -0.0 when max_speed is 0."""
    velocities = [5.0, -5.0, 0.0, -0.0, 1e-300, -1e-300]
    engine = make(len(velocities), {"max_speed": 0.0, "act_step_period": 0}, seed=0)
    put(engine, 1.0, velocities)
    engine.step(np.full(len(velocities), STAY))
    got = engine.get_state()["velocity"]
    want = [np.clip(np.float64(v), -0.0, 0.0) for v in velocities]
    assert np.signbit(want).tolist() == [False, True, False, True, False, True]
    assert got.tobytes() == np.array(want).tobytes()
