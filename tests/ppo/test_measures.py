"""What the trainer measures and what it feeds the network, for the games beyond the classic
ones: segments (continuing games never end an episode), one-hot state indices, legal-move
masks from the observation, and the annealed entropy bonus."""

import csv
import json
import math

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from tests.test_cli import run as run_cli  # noqa: E402
from vecenv import ppo  # noqa: E402
from vecenv.ppo.network import flatten, legal_field, one_hot_space  # noqa: E402
from vecenv.ppo.trainer import PPOConfig, Run, Tally, Trainer  # noqa: E402


def tally(segment, window, n):
    run = Run(config=PPOConfig(num_envs=n, segment=segment, window=window))
    return run, Tally(run, n)


@settings(max_examples=60, deadline=None)
@given(
    segment=st.integers(1, 6),
    window=st.integers(1, 5),
    n=st.integers(1, 4),
    steps=st.integers(0, 30),
    seed=st.integers(0, 2**16),
)
def test_segments_are_runs_of_valid_steps_scored_per_step(segment, window, n, steps, seed):
    """Each env's valid steps, cut into runs of ``segment`` whatever its episodes do, each
    scored by its mean reward; the running mean is of the last ``window`` of them."""
    rng = np.random.default_rng(seed)
    run, t = tally(segment, window, n)
    history = [[] for _ in range(n)]  # each env's valid rewards
    expected = []
    for _ in range(steps):
        valid = rng.random(n) < 0.8
        reward = np.where(valid, rng.normal(size=n), 0.0)
        ended = valid & (rng.random(n) < 0.2)
        run.steps += int(valid.sum())
        t.step(reward, valid, ended)
        for i in range(n):  # env order: segments that end on one step are folded in that order
            if valid[i]:
                history[i].append(reward[i])
                if len(history[i]) % segment == 0:
                    expected.append(np.mean(history[i][-segment:]))
    assert [rate for _, rate in run.segments] == pytest.approx(expected)
    assert len(t.recent) == min(len(expected), window) and t.full == (len(expected) >= window)
    if expected:
        assert t.mean == pytest.approx(np.mean(expected[-window:]))
    else:
        assert math.isnan(t.mean)


def test_without_a_segment_the_mean_is_of_episode_returns():
    run, t = tally(0, 2, 2)
    t.step(np.array([1.0, 2.0]), np.array([True, True]), np.array([False, True]))
    t.step(np.array([3.0, 0.0]), np.array([True, False]), np.array([True, False]))
    assert [r for _, r, _ in run.episodes] == [2.0, 4.0] and run.segments == []
    assert t.full and t.mean == 3.0


@pytest.fixture(scope="module")
def catch_run(tmp_path_factory):
    """Catch (continuing) for 100 steps of each of 4 envs, segments of 50: 8 segments."""
    folder = tmp_path_factory.mktemp("catch")
    config = PPOConfig(num_envs=4, num_steps=25, total_steps=400, segment=50, window=4)
    run, _ = ppo.train("catch", config, str(folder), target=-1.0)
    return run, folder


def test_a_continuing_game_is_measured_in_segments(catch_run):
    run, _ = catch_run
    assert run.episodes == [] and len(run.segments) == 8
    assert [steps for steps, _ in run.segments] == [200] * 4 + [400] * 4
    assert all(-1.0 <= rate <= 1.0 for _, rate in run.segments)
    assert run.mean == pytest.approx(np.mean([rate for _, rate in run.segments[-4:]]))
    # The mean counts once the window is full: the first 4 segments end at 200 steps.
    assert [row[0] for row in run.curve] == [100, 200, 300, 400]
    assert run.reached[0] == 200 and run.measured == 4


def test_run_files_name_the_metric(catch_run):
    run, folder = catch_run
    saved = json.loads((folder / "run.json").read_text())
    assert saved["metric"] == "mean reward per step of the last 4 segments of 50 steps"
    assert saved["mean_reward_per_step"] == pytest.approx(run.mean)
    assert "mean_return" not in saved and saved["segments"] == 8 and saved["episodes"] == 0
    with open(folder / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["steps", "seconds", "mean_reward_per_step"]
    assert float(rows[-1]["mean_reward_per_step"]) == pytest.approx(run.mean, abs=1e-4)


def test_the_command_line_reports_reward_per_step(capsys, tmp_path):
    argv = ["--num-envs", "4", "--num-steps", "25", "--total-steps", "400", "--segment", "50"]
    code, out, err = run_cli(
        capsys, "train", "ppo", "--env", "catch", *argv, "--run-dir", str(tmp_path)
    )
    assert code == 0, err
    assert "measured by the mean reward per step of the last 100 segments of 50 steps" in out
    progress = [line for line in out.splitlines() if "steps/s" in line]
    assert progress and all("mean reward per step" in line for line in progress[:-1])
    assert "over the last 8 segments of 50 steps" in progress[-1]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("segment", -1, "segment must be a non-negative integer"),
        ("segment", 2.5, "segment must be a non-negative integer"),
        ("segment", True, "segment must be a non-negative integer"),
        ("one_hot_obs", "yes", "one_hot_obs must be true or false"),
        ("anneal_ent", 1, "anneal_ent must be true or false"),
    ],
)
def test_bad_settings_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        PPOConfig(**{field: value})


def test_the_metric_is_named_by_the_config():
    assert PPOConfig().metric == "mean_return"
    assert PPOConfig().metric_label == "mean return of the last 100 episodes"
    config = PPOConfig(segment=1000, window=20)
    assert config.metric == "mean_reward_per_step"
    assert config.metric_label == "mean reward per step of the last 20 segments of 1,000 steps"


# -- one-hot state indices ---------------------------------------------------------------------


def test_bounded_integers_become_categories():
    index = spaces.Box(3, 9, (), np.int64)
    assert one_hot_space(index) == spaces.Discrete(7, start=3)
    assert one_hot_space(spaces.Box(0, 4, (1,), np.int32)) == spaces.Discrete(5)
    board = spaces.Box(0, 2, (6, 7), np.int8)
    assert one_hot_space(board) == spaces.MultiDiscrete(np.full((6, 7), 3))
    mixed = spaces.Dict({"i": index, "x": spaces.Box(-1, 1, (2,), np.float32)})
    assert one_hot_space(mixed) == spaces.Dict({"i": spaces.Discrete(7, start=3), "x": mixed["x"]})
    for kept in (
        spaces.Box(0.0, 4.0, (), np.float32),  # not integers
        spaces.Box(0, 1, (4,), np.bool_),  # legal moves: already one bit each
        spaces.Discrete(3),
    ):
        assert one_hot_space(kept) == kept
    with pytest.raises(ValueError, match="131,073 features"):
        one_hot_space(spaces.Box(0, 131072, (), np.int64))  # 2048's tiles: turn it off


@settings(max_examples=40, deadline=None)
@given(
    shape=st.sampled_from([(1,), (3,), (2, 3)]),
    low=st.integers(-3, 3),
    span=st.integers(0, 4),
    rows=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_a_board_is_one_hot_per_cell_and_its_space_round_trips(shape, low, span, rows, seed):
    from vecenv.ppo.network import describe, space_from

    space = one_hot_space(spaces.Box(low, low + span, shape, np.int64))
    assert space_from(describe(space)) == space
    obs = np.random.default_rng(seed).integers(low, low + span + 1, (rows, *shape))
    x = flatten(space, obs, rows)
    cells = int(np.prod(shape))
    assert x.shape == (rows, cells * (span + 1)) and (x.sum(axis=1) == cells).all()
    if cells > 1:  # cell k's categories sit together, in the cells' row-major order
        np.testing.assert_array_equal(x.reshape(rows, cells, span + 1).argmax(2) + low,
                                      obs.reshape(rows, cells))  # fmt: skip
    with pytest.raises(ValueError, match="outside"):
        flatten(space, obs + span + 1, rows)


def test_an_index_outside_its_space_is_refused():
    space = spaces.Discrete(5, start=2)
    np.testing.assert_array_equal(flatten(space, np.array([2, 6]), 2)[:, [0, 4]], np.eye(2))
    for bad in ([1, 2], [2, 7]):
        with pytest.raises(ValueError, match="outside"):
            flatten(space, np.array(bad), 2)


def test_taxi_trains_on_one_hot_indices_and_its_policy_plays_them(tmp_path):
    config = PPOConfig(num_envs=4, num_steps=8, total_steps=64, one_hot_obs=True, segment=16)
    run, trainer = ppo.train("taxi", config, str(tmp_path))
    assert trainer.policy.observation_space == spaces.Discrete(500)
    assert trainer.policy.critic[0].in_features == 500 and len(run.segments) == 4
    loaded = ppo.load(str(tmp_path / "policy.pt"))
    obs = np.array([0, 17, 499])
    x = torch.from_numpy(np.eye(500, dtype=np.float32)[obs])
    np.testing.assert_array_equal(loaded.act(obs, 3), trainer.policy.best(x).numpy())
    with pytest.raises(ValueError, match="outside"):
        loaded.act(np.array([500]), 1)


# -- legal-move masks --------------------------------------------------------------------------


class LegalMovesOnly(gymnasium.vector.VectorWrapper):
    """Counts the actions played outside the legal moves the last observation offered (the
    step after a game's end only resets it: its action does not count)."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.legal, self.resetting = obs["legal"].copy(), np.zeros(self.num_envs, bool)
        self.moves = self.illegal = 0
        return obs, info

    def step(self, actions):
        playing = ~self.resetting
        legal = self.legal[np.arange(self.num_envs), actions]
        self.moves += int(playing.sum())
        self.illegal += int((playing & ~legal).sum())
        obs, reward, terminated, truncated, info = self.env.step(actions)
        self.legal, self.resetting = obs["legal"].copy(), terminated | truncated
        return obs, reward, terminated, truncated, info


def test_legal_fields_are_found_only_where_they_fit_the_actions():
    legal = spaces.Box(0, 1, (4,), np.bool_)
    board = spaces.Box(0, 9, (16,), np.int64)
    assert legal_field(spaces.Dict({"board": board, "legal": legal}), spaces.Discrete(4))
    assert not legal_field(spaces.Dict({"board": board, "legal": legal}), spaces.Discrete(5))
    assert not legal_field(spaces.Dict({"board": board}), spaces.Discrete(4))
    assert not legal_field(board, spaces.Discrete(4))
    ints = spaces.Box(0, 1, (4,), np.int64)
    assert not legal_field(spaces.Dict({"legal": ints}), spaces.Discrete(4))


@pytest.mark.parametrize("compiled", [True, False])
def test_2048_plays_only_legal_moves(compiled):
    """2048's observations carry its legal moves: the trainer draws under them (a policy
    without the mask plays moves that change nothing, and the untrained one would)."""
    env = LegalMovesOnly(ppo.vector_env("game_2048", 8))
    config = PPOConfig(num_envs=8, num_steps=64, total_steps=2048, compiled=compiled)
    trainer = Trainer(env, config)
    assert trainer.masked
    run = trainer.run()
    env.close()
    assert env.moves == run.steps and env.illegal == 0
    assert run.episodes  # games ended (with no legal move left) and were reset


# -- the annealed entropy bonus ----------------------------------------------------------------


def test_an_annealed_entropy_bonus_falls_with_the_learning_rate():
    config = PPOConfig(
        num_envs=2, num_steps=4, total_steps=32, ent_coef=0.4, anneal_ent=True, seed=3
    )
    env = ppo.vector_env("cartpole", 2)
    trainer = Trainer(env, config)
    seen, original = [], trainer.compiled_update.update

    def spy(*args, **kwargs):
        seen.append(kwargs["ent_coef"])
        return original(*args, **kwargs)

    trainer.compiled_update.update = spy
    trainer.run()
    env.close()
    assert seen == pytest.approx([0.4 * (1 - k / 4) for k in range(4)])


# -- the exploration bonus ---------------------------------------------------------------------


def test_the_bonus_falls_as_one_over_the_square_root_of_visits():
    from vecenv.ppo.explore import CountBonus

    bonus = CountBonus(size=3, bits=8, scale=0.5, seed=1)
    x = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [-1.0, 0.2, 3.0]])
    valid = np.array([True, True, True])
    first = bonus(x, valid)
    # The two equal rows share a code: counted twice in this batch already.
    assert first == pytest.approx([0.5 / math.sqrt(2)] * 2 + [0.5])
    second = bonus(x[2:], valid[2:])
    assert second == pytest.approx([0.5 / math.sqrt(2)])
    assert bonus(x, np.array([False, False, False])).tolist() == [0.0, 0.0, 0.0]
    assert bonus.counts.sum() == 4  # rows that are not valid are not counted


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), rows=st.integers(1, 50), bits=st.integers(1, 20))
def test_codes_are_the_seeds_and_near_rows_share_them(seed, rows, bits):
    from vecenv.ppo.explore import CountBonus

    x = np.random.default_rng(seed).normal(size=(rows, 5))
    a, b = CountBonus(5, bits, 1.0, seed), CountBonus(5, bits, 1.0, seed)
    codes = a.codes(x)
    np.testing.assert_array_equal(codes, b.codes(x))
    assert codes.min() >= 0 and codes.max() < 2**bits
    np.testing.assert_array_equal(a.codes(2.5 * x), codes)  # signs of projections: scale-free


@pytest.mark.parametrize("bits", [0, 21, 2.0, True])
def test_bad_hash_widths_are_refused(bits):
    with pytest.raises(ValueError, match="explore_bits must be an integer in"):
        PPOConfig(explore_bits=bits)


def test_the_bonus_is_learned_from_but_never_reported():
    """The first rollout is the same with and without the bonus (the same untrained policy),
    so are its episodes' returns: the game's own. The update learns from the bonus, so the
    networks part after it."""

    def trained(bonus):
        config = PPOConfig(num_envs=4, num_steps=32, total_steps=128, explore_bonus=bonus)
        run, trainer = ppo.train("cartpole", config)
        weights = torch.cat([p.detach().flatten() for p in trainer.policy.parameters()])
        return run, weights

    (plain, w_plain), (explored, w_explored) = trained(0.0), trained(1.0)
    assert plain.episodes and explored.episodes == plain.episodes
    assert all(r == float(length) for _, r, length in explored.episodes)  # +1 a step
    assert not torch.equal(w_plain, w_explored)
