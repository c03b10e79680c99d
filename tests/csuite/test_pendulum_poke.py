"""csuite's pendulum_poke: the pendulum's dynamics plus random pokes near the top. The poke
mechanics are checked exactly (which draws happen, what a poke adds) by predicting the episode's
own stream, and statistically (rate and direction); then random input and the batched faces."""

import gymnasium
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import vecenv
from vecenv.kernels.rng import GOLDEN, seed_word

from . import helpers
from .helpers import NEGATIVE, POSITIVE, REWARD_HIGH, REWARD_LOW, STAY, advanced, assert_matches
from .helpers import PENDULUM_DEFAULTS as DEFAULTS
from .helpers import put_pendulums as put

MASK = (1 << 64) - 1


def make(num_envs=1, params=None, **kwargs):
    return helpers.make_pendulum(num_envs, params, game="pendulum_poke", **kwargs)


def _mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Stream:
    """An episode's stream predicted in plain Python: splitmix64 from its state word."""

    def __init__(self, word):
        self.word = int(word)

    def uniform(self):
        self.word = (self.word + int(GOLDEN)) & MASK
        return (_mix(self.word) >> 11) * 2.0**-53


def reference_poke_step(angle, velocity, action, stream, params=None):
    """csuite's pendulum_poke step with ``stream`` in place of its numpy generator: a uniform is
    drawn only in the reward region, a second one only for a poke. Returns the pendulum's
    reference step and the poke's direction."""
    p = dict(helpers.POKE_DEFAULTS, **(params or {}))
    torque = action - 1
    applied, direction = torque, 0
    if REWARD_LOW < angle < REWARD_HIGH and stream.uniform() < p["perturb_prob"]:
        if stream.uniform() < 0.5:
            applied, direction = torque - p["perturb_torque"], -1
        else:
            applied, direction = torque + p["perturb_torque"], 1
    dynamics = {k: v for k, v in p.items() if k in DEFAULTS}
    return helpers.reference_step(angle, velocity, applied, dynamics), direction


# -- specification and start -----------------------------------------------------------------


def test_start_hangs_down_at_rest_without_drawing():
    engine = vecenv.make("pendulum_poke", num_envs=3, seed=2)
    s = engine.get_state()
    assert (s["angle"] == 0).all() and (s["velocity"] == 0).all()
    assert (s["torque"] == 0).all() and (s["perturb_direction"] == 0).all()
    np.testing.assert_array_equal(engine.obs["observation"][:, 0], [[1, 0, 0]] * 3)
    np.testing.assert_array_equal(s["rng"], [seed_word(2, i) for i in range(3)])


# -- the poke, exactly -----------------------------------------------------------------------


def test_draws_happen_only_in_the_reward_region():
    """Outside the region (bounds excluded) no uniform is drawn and nothing is poked, even with
    perturb_prob 1; inside, one uniform decides and a second picks the direction."""
    angles = [0.0, REWARD_LOW, REWARD_HIGH, np.nextafter(REWARD_LOW, 4.0), np.pi]
    engine = make(len(angles), {"perturb_prob": 1.0}, seed=3)
    put(engine, angles, 0.0)
    words = engine.get_state()["rng"]
    engine.step(np.full(len(angles), STAY))
    s = engine.get_state()
    np.testing.assert_array_equal(s["rng"], advanced(words, np.array([0, 0, 0, 2, 2])))
    assert s["perturb_direction"].tolist()[:3] == [0, 0, 0]
    assert set(s["perturb_direction"].tolist()[3:]) <= {-1, 1}
    never = make(len(angles), {"perturb_prob": 0.0}, seed=3)
    put(never, angles, 0.0)
    never.step(np.full(len(angles), STAY))
    s = never.get_state()
    np.testing.assert_array_equal(s["rng"], advanced(words, np.array([0, 0, 0, 1, 1])))
    assert (s["perturb_direction"] == 0).all()


@pytest.mark.parametrize("action", [NEGATIVE, STAY, POSITIVE])
@pytest.mark.parametrize("perturb_torque", [10.0, 2.5, 0.0])
def test_a_poke_adds_its_torque_for_the_whole_action(action, perturb_torque):
    """Always poked at the top: the velocity and angle are the pendulum's under torque
    tau +- perturb_torque, the sign being the recorded direction (and the stream's)."""
    n = 24
    params = {"perturb_prob": 1.0, "perturb_torque": perturb_torque}
    engine = make(n, params, seed=int(perturb_torque * 10) + action)
    angles = np.linspace(np.pi - 0.5, np.pi + 0.5, n)
    velocities = np.linspace(-1.0, 1.0, n)
    put(engine, angles, velocities)
    streams = [Stream(w) for w in engine.get_state()["rng"]]
    engine.step(np.full(n, action))
    directions = engine.get_state()["perturb_direction"]
    for i in range(n):
        ref, direction = reference_poke_step(angles[i], velocities[i], action, streams[i], params)
        assert direction == directions[i] != 0
        assert_matches(engine, i, *ref)
        assert engine.get_state(i)["rng"] == streams[i].word
        assert engine.get_state(i)["torque"] == action - 1
    assert set(directions.tolist()) == {-1, 1}


def test_the_poke_is_decided_on_the_angle_before_the_step():
    """A pendulum leaving the region during an action is poked; one entering it is not, until
    its next action. A weak poke keeps the first one moving out."""
    engine = make(2, {"perturb_prob": 1.0, "perturb_torque": 0.5}, seed=0)
    put(engine, [REWARD_HIGH - 1e-3, REWARD_LOW - 0.01], [3.0, 2.0])
    words = engine.get_state()["rng"]
    engine.step(np.array([STAY, STAY]))
    s = engine.get_state()
    assert s["angle"][0] > REWARD_HIGH and s["perturb_direction"][0] != 0
    assert REWARD_LOW < s["angle"][1] < REWARD_HIGH and s["perturb_direction"][1] == 0
    np.testing.assert_array_equal(s["rng"], advanced(words, np.array([2, 0])))
    engine.step(np.array([STAY, STAY]))
    s = engine.get_state()
    # Only the last action's poke is recorded: the first pendulum is outside now, unpoked.
    assert s["perturb_direction"][0] == 0 and s["perturb_direction"][1] != 0
    np.testing.assert_array_equal(s["rng"], advanced(words, np.array([2, 2])))


@pytest.mark.parametrize(
    "params,swings_up",
    [
        ({}, True),
        ({"perturb_prob": 0.25}, True),
        (
            {"perturb_prob": 0.6, "perturb_torque": 1.5, "friction": 0.3, "act_step_period": 2},
            False,
        ),
        ({"perturb_prob": 0.1, "max_speed": 3.0}, False),
    ],
)
def test_long_run_is_bit_exact_with_the_predicted_stream(params, swings_up):
    """2000 actions of a swing-up rule with random actions mixed in, predicted step by step:
    state, observation, reward, direction and stream all agree."""
    engine = make(1, params, seed=17)
    stream = Stream(engine.get_state(0)["rng"])
    rng = np.random.default_rng(2)
    angle, velocity = 0.0, 0.0
    pokes = rewarded = 0
    for t in range(2000):
        action = helpers.pumping_actions(angle, velocity) if t % 5 else int(rng.integers(3))
        engine.step(np.array([action]))
        (angle, velocity, obs, reward), direction = reference_poke_step(
            angle, velocity, action, stream, params
        )
        assert_matches(engine, 0, angle, velocity, obs, reward)
        s = engine.get_state(0)
        assert s["perturb_direction"] == direction and s["rng"] == stream.word
        pokes += direction != 0
        rewarded += reward
    if swings_up:
        assert rewarded > 50
    if swings_up and params:
        assert pokes > 10  # the top is reached often enough to be poked


def test_without_pokes_it_is_csuites_pendulum():
    a = make(1, {"perturb_prob": 0.0}, seed=1)
    b = vecenv.make("csuite_pendulum", num_envs=1, seed=1)
    for _ in range(500):
        action = np.array(
            [helpers.pumping_actions(*[a.get_state(0)[f] for f in ("angle", "velocity")])]
        )
        a.step(action)
        b.step(action)
        for f in ("angle", "velocity", "torque"):
            assert a.get_state(0)[f] == b.get_state(0)[f]
        np.testing.assert_array_equal(a.obs["observation"], b.obs["observation"])
        assert a.rewards[0, 0] == b.rewards[0, 0]
    assert a.get_state(0)["perturb_direction"] == 0


# -- the poke, statistically -----------------------------------------------------------------


@pytest.mark.parametrize("p", [0.01, 0.3])
def test_poke_rate_and_direction(p):
    """20000 pendulums upright at rest: the fraction poked is p and the fraction of those pushed
    each way 1/2, within 4.5 standard errors."""
    n = 20000
    engine = make(n, {"perturb_prob": p}, seed=99)
    put(engine, np.pi, 0.0)
    engine.step(np.full(n, STAY))
    d = engine.get_state()["perturb_direction"]
    poked = (d != 0).sum()
    assert abs(poked / n - p) < 4.5 * np.sqrt(p * (1 - p) / n)
    positive = (d == 1).sum()
    assert abs(positive / poked - 0.5) < 4.5 * np.sqrt(0.25 / poked)
    # Upright at rest, an unpoked pendulum barely moves; a poke of 10 swings it its way by about
    # a quarter radian within the action, still inside the region.
    s = engine.get_state()
    assert (np.sign(s["velocity"][d != 0]) == d[d != 0]).all()
    assert (np.abs(s["velocity"][d == 0]) < 1e-12).all()
    assert (np.abs(s["angle"][d != 0] - np.pi) > 0.2).all()
    assert (engine.rewards[:, 0] == 1.0).all()


# -- random input ----------------------------------------------------------------------------


@helpers.FUZZ
@given(
    params=st.fixed_dictionaries(
        {},
        optional=dict(
            helpers.PENDULUM_PARAMS,
            perturb_prob=st.floats(0.0, 1.0),
            perturb_torque=st.floats(-20.0, 20.0),
        ),
    ),
    start=st.tuples(st.floats(0.0, 2 * np.pi), st.floats(-20.0, 20.0)),
    seed=st.integers(0, 2**64 - 1),
    actions=st.lists(st.integers(0, 2), max_size=40),
)
def test_random_configurations_states_and_actions_match_the_reference(params, start, seed, actions):
    engine = make(1, params, seed=seed)
    angle, velocity = start
    put(engine, angle, velocity)
    stream = Stream(engine.get_state(0)["rng"])
    for action in actions:
        _, rewards, terminated, truncated = engine.step(np.array([action]))
        (angle, velocity, obs, reward), direction = reference_poke_step(
            angle, velocity, action, stream, params
        )
        assert_matches(engine, 0, angle, velocity, obs, reward)
        assert engine.get_state(0)["perturb_direction"] == direction


def test_invalid_angle_message_is_csuites():
    engine = make(1, seed=0)
    state = engine.get_state(0)
    state["angle"] = 7.0
    with pytest.raises(
        ValueError, match=r"Invalid state: expected angle to be in range \[0, 2pi\]"
    ):
        engine.set_state(state, 0)


# -- faces and rendering ---------------------------------------------------------------------


def test_gymnasium_vector_env_is_continuing():
    def policy(obs, t):
        """Push with the swing, every third action random."""
        return np.where(obs[:, 2] >= 0, POSITIVE, NEGATIVE) if t % 3 else None

    first, rewards = helpers.run_vector_env(
        "vecenv/PendulumPoke-v0",
        helpers.OBSERVATION_SPACE,
        gymnasium.spaces.Discrete(3),
        policy=policy,
        steps=400,
        perturb_prob=0.5,
    )
    np.testing.assert_array_equal(first, [[1, 0, 0]] * 8)
    assert np.isin(rewards, (0.0, 1.0)).all()
    assert rewards.sum() > 0
    helpers.run_single_env("vecenv/PendulumPoke-v0", 20)


RED = (255, 0, 0)


def test_render_frames_show_the_last_poke():
    engine = make(1, seed=0)
    state = engine.get_state(0)
    state["angle"] = np.pi
    frames = {}
    for direction in (-1, 0, 1):
        state["perturb_direction"] = direction
        engine.set_state(state, 0)
        frames[direction] = engine.render()
        assert frames[direction].shape == (256, 256, 3) and frames[direction].dtype == np.uint8
    top = slice(20, 45)  # rows round 32, the arrows' height (the upright tip's too)
    red = {d: np.argwhere((f[top] == RED).all(-1)) for d, f in frames.items()}
    # The tip is red at the top centre in every frame; the arrows add red left or right of it.
    left = {d: (r[:, 1] < 80).sum() for d, r in red.items()}
    right = {d: (r[:, 1] > 176).sum() for d, r in red.items()}
    assert left[0] == right[0] == 0
    assert left[1] > 20 and right[1] == 0
    assert right[-1] > 20 and left[-1] == 0
    assert "poke=+1" in engine.render(mode="ansi")
