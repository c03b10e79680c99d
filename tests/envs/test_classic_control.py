"""What every classic-control game shares with gymnasium's: spaces, registration, initial states,
frames and the refusal of bad actions."""

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import vecenv
from vecenv import registry

from .side_by_side import ACROBOT, GAMES, MOUNTAINCAR, MOUNTAINCAR_CONTINUOUS, PENDULUM


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_spaces_and_registration_match_gymnasium(game):
    spec = registry.get_spec(game.name)
    assert registry.get_spec(game.gym_id) is spec
    env = gymnasium.make(game.gym_id)
    (field,) = spec.observation
    ours = spaces.Box(low=field.low, high=field.high, shape=field.shape, dtype=field.dtype)
    assert ours == env.observation_space
    np.testing.assert_array_equal(field.low, env.observation_space.low)
    np.testing.assert_array_equal(field.high, env.observation_space.high)
    action = spec.action
    if action.discrete:
        n = int(action.high[0] - action.low[0]) + 1
        assert spaces.Discrete(n, start=int(action.low[0])) == env.action_space
    else:
        low = action.low.reshape(action.shape).astype(action.dtype)
        high = action.high.reshape(action.shape).astype(action.dtype)
        box = spaces.Box(low=low, high=high, shape=action.shape, dtype=action.dtype)
        assert box == env.action_space
        np.testing.assert_array_equal(box.low, env.action_space.low)
        np.testing.assert_array_equal(box.high, env.action_space.high)
    gym_spec = gymnasium.spec(game.gym_id)
    assert spec.gym["id"] == game.gym_id
    assert spec.gym["max_episode_steps"] == gym_spec.max_episode_steps
    # Pendulum-v1 has no reward threshold; where gymnasium has one, ours is present and equal.
    assert spec.gym.get("reward_threshold") == gym_spec.reward_threshold
    assert spec.configuration["episodeSteps"].default == gym_spec.max_episode_steps
    for name in game.parameters:
        assert spec.configuration[name].default == getattr(env.unwrapped, name)
    assert spec.render["fps"] == env.metadata["render_fps"]


# Per game: the fields drawn uniformly from [low, high), as (low, high, some draw below, some draw
# above), and the fields that always start at one value.
INITIAL = {
    MOUNTAINCAR: ({"position": (-0.6, -0.4, -0.595, -0.405)}, {"velocity": 0.0}),
    MOUNTAINCAR_CONTINUOUS: ({"position": (-0.6, -0.4, -0.595, -0.405)}, {"velocity": 0.0}),
    PENDULUM: (
        {"theta": (-np.pi, np.pi, -3.1, 3.1), "theta_dot": (-1.0, 1.0, -0.99, 0.99)},
        {"last_u": 0.0},
    ),
}


@pytest.mark.parametrize("game", INITIAL, ids=str)
def test_initial_states_within_gymnasium_ranges_and_varied(game):
    drawn, fixed = INITIAL[game]
    draws = {name: [] for name in drawn}
    for seed in range(20):
        engine = vecenv.make(game.name, num_envs=64, seed=seed)
        for _ in range(3):
            s = engine.get_state()
            for name, (low, high, _, _) in drawn.items():
                assert ((s[name] >= low) & (s[name] < high)).all()
                draws[name].append(s[name].copy())
            for name, value in fixed.items():
                assert (s[name] == value).all()
            assert (s["step"] == 0).all()
            engine.reset()
    for name, (_, _, least, most) in drawn.items():
        values = np.array(draws[name])
        # Every reset of every episode draws afresh, and the draws cover the range.
        assert len(np.unique(values)) == values.size
        assert values.min() < least and values.max() > most


# Per game: a state to draw (fields set in a fresh one) and what its text shows.
POSES = {
    MOUNTAINCAR: ({"position": 0.3}, "position=+0.3000"),
    MOUNTAINCAR_CONTINUOUS: ({"position": -1.0}, "position=-1.0000"),
    PENDULUM: ({"theta": 2.5}, "theta=+143.24deg"),
    ACROBOT: ({"theta1": 2.0, "theta2": -1.0}, "theta1=+2.000 theta2=-1.000"),
}


@pytest.mark.parametrize("game", POSES, ids=str)
def test_render_frames_follow_the_state(game):
    pose, text = POSES[game]
    spec = registry.get_spec(game.name)
    engine = vecenv.make(game.name, num_envs=2, seed=0)
    frame = engine.render()
    assert frame.dtype == np.uint8
    assert frame.shape == (spec.render["height"], spec.render["width"], 3)
    np.testing.assert_array_equal(engine.render(0), frame)
    before = engine.render(1)
    state = engine.get_state(1)
    for name, value in pose.items():
        state[name] = value
    engine.set_state(state, 1)
    moved = engine.render(1)
    assert moved.shape == frame.shape
    assert (moved != before).any() and (moved != frame).any()
    ansi = engine.render(1, mode="ansi")
    assert isinstance(ansi, str) and text in ansi


def bad_actions():
    """(game, action for env 2 of 4, the error it raises)."""
    for game in (MOUNTAINCAR, ACROBOT):
        for bad in (3, -1):
            yield pytest.param(game, bad, "env 2", id=f"{game}-{bad}")
        for bad in (1.5, np.nan):
            yield pytest.param(game, bad, "integers", id=f"{game}-{bad}")
    for game in (MOUNTAINCAR_CONTINUOUS, PENDULUM):
        for bad in (np.nan, np.inf, -np.inf):
            yield pytest.param(game, bad, "env 2", id=f"{game}-{bad}")


@pytest.mark.parametrize(("game", "bad", "match"), list(bad_actions()))
def test_bad_actions_are_rejected_before_any_episode_moves(game, bad, match):
    engine = vecenv.make(game.name, num_envs=4, seed=1)
    engine.step(game.batch(np.array([0, 1, 1, 0])))
    before = engine.get_state()
    obs = engine.obs["obs"].copy()
    with pytest.raises(ValueError, match=match):
        engine.step(game.batch(np.array([1, 0, bad, 1])))
    np.testing.assert_array_equal(engine.get_state(), before)
    np.testing.assert_array_equal(engine.obs["obs"], obs)


@pytest.mark.parametrize(
    ("game", "actions"),
    [
        pytest.param(
            MOUNTAINCAR_CONTINUOUS, [0.3, -0.7, 0.1, 2.2, -0.9], id="mountaincar_continuous"
        ),
        pytest.param(PENDULUM, [0.3, -1.7, 0.1, 2.2, -0.9], id="pendulum"),
    ],
)
def test_float64_actions_act_as_their_float32_rounding(game, actions):
    runs = []
    for dtype in (np.float64, np.float32):
        engine = vecenv.make(game.name, num_envs=1, seed=2, autoreset="disabled")
        for a in actions:
            engine.step(np.array([[a]], dtype=dtype))
        runs.append((engine.get_state(), engine.rewards.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
