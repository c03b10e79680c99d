"""The batched multi-agent VectorEnv: against PettingZoo's Parallel face match for match, the
three autoreset modes against one another, determinism, buffers, bad input and self-play."""

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vecenv.engine import PARALLEL_MIN_ENVS
from vecenv.gym.multiagent import MultiAgentVectorEnv, flat
from vecenv.kernels.turns import INVALID

pettingzoo = pytest.importorskip("vecenv.pettingzoo", reason="PettingZoo is a test extra")

SLOW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pick(rng, mask, start):
    """One match's actions: a random legal move for each agent to move, ``start`` for the others
    (drawing only for agents to move, so the draws follow the match, not the batch)."""
    actions = np.full(mask.shape[0], start, dtype=np.int64)
    for k in np.flatnonzero(mask.any(axis=1)):
        actions[k] = start + rng.choice(np.flatnonzero(mask[k]))
    return actions


def legal_moves(env, rng):
    """Random legal moves for every agent to move in every match, vectorised."""
    mask = env.action_mask
    scores = rng.random(mask.shape) * mask
    return (scores.argmax(axis=-1) + env.single_action_space.start).astype(np.int64)


def match_obs(obs, i):
    return {k: v[i].copy() for k, v in obs.items()}


def assert_obs_equal(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


# -- against PettingZoo's Parallel face ---------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "config", "limit"),
    [
        ("connectx", {}, None),
        ("tictactoe", {}, 6),  # some matches end by the time limit
        ("rps", {"episodeSteps": 9}, None),
        ("othello", {}, None),
    ],
)
def test_every_match_plays_as_pettingzoos_parallel_face(game, config, limit):
    """Match i of seeds [s_0, ...] is a Parallel env seeded s_i, through several matches each:
    observations, masks, rewards and flags agree at every step."""
    n, seeds = 3, [21, 22, 23]
    env = MultiAgentVectorEnv(game, num_envs=n, max_episode_steps=limit, **config)
    refs = [pettingzoo.parallel_env(game, max_cycles=limit, **config) for _ in range(n)]
    agents = env.possible_agents
    obs, infos = env.reset(seed=seeds)
    want = [ref.reset(seed=s)[0] for ref, s in zip(refs, seeds, strict=True)]
    rng = np.random.default_rng(0)
    ended = np.zeros(n, dtype=bool)
    matches = 0
    for _ in range(90):
        for i in range(n):
            for k, agent in enumerate(agents):
                for name, value in want[i][agent]["observation"].items():
                    np.testing.assert_array_equal(obs[name][i, k], value)
                mask = want[i][agent]["action_mask"].astype(bool)
                np.testing.assert_array_equal(infos["action_mask"][i, k], mask)
                assert infos["to_play"][i, k] == mask.any()
        actions = legal_moves(env, rng)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        for i, ref in enumerate(refs):
            if ended[i]:  # next-step autoreset: this step starts the next match
                want[i] = ref.reset()[0]
                assert not rewards[i].any() and not (terminated[i] | truncated[i]).any()
                continue
            want[i], r, term, trunc, _ = ref.step(
                {a: int(actions[i, k]) for k, a in enumerate(agents)}
            )
            for k, agent in enumerate(agents):
                assert rewards[i, k] == r[agent]
                assert terminated[i, k] == term[agent]
                assert (truncated[i, k] and not terminated[i, k]) == trunc[agent]
        ended = terminated[:, 0] | truncated[:, 0]
        matches += int(ended.sum())
    assert matches >= n


# -- autoreset modes ----------------------------------------------------------------------------


def trajectories(mode, steps, n=4, game="tictactoe", limit=7):
    """Per match, what every step returned, under per-match action streams that skip the steps
    next-step autoreset ignores, so that every mode plays the same moves in each match."""
    env = MultiAgentVectorEnv(game, num_envs=n, autoreset_mode=mode, max_episode_steps=limit)
    start = env.single_action_space.start
    rngs = [np.random.default_rng(i) for i in range(n)]
    obs, infos = env.reset(seed=3)
    first = [(match_obs(obs, i), infos["action_mask"][i].copy()) for i in range(n)]
    records = [[] for _ in range(n)]
    ignored = np.zeros(n, dtype=bool)
    for _ in range(steps):
        actions = np.full((n, env.num_agents), start, dtype=np.int64)
        for i in np.flatnonzero(~ignored):
            actions[i] = pick(rngs[i], env.action_mask[i], start)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        for i in range(n):
            record = {
                "obs": match_obs(obs, i),
                "mask": infos["action_mask"][i].copy(),
                "to_play": infos["to_play"][i].copy(),
                "reward": rewards[i].copy(),
                "terminated": bool(terminated[i, 0]),
                "truncated": bool(truncated[i, 0]),
            }
            assert (terminated[i] == terminated[i, 0]).all()
            if "final_obs" in infos and infos["_final_obs"][i]:
                final = infos["final_info"]
                assert final["_action_mask"][i] and final["_to_play"][i]
                record["final"] = (
                    infos["final_obs"][i],
                    final["action_mask"][i],
                    final["to_play"][i],
                )
            records[i].append(record)
        if mode == "next_step":
            ignored = terminated[:, 0] | truncated[:, 0]
    return first, records


def merged_next_step(records):
    """A next-step trajectory as same-step autoreset returns it: the ignored step's new match
    replaces the ended match's observation, which moves into ``final``."""
    out, k = [], 0
    while k < len(records) - 1:
        record = dict(records[k])
        if record["terminated"] or record["truncated"]:
            new = records[k + 1]
            assert not new["reward"].any() and not new["terminated"] and not new["truncated"]
            record["final"] = (record["obs"], record["mask"], record["to_play"])
            record.update(obs=new["obs"], mask=new["mask"], to_play=new["to_play"])
            k += 1
        out.append(record)
        k += 1
    return out


def test_same_step_is_next_step_without_the_reset_step():
    first_same, same = trajectories("same_step", 40)
    first_next, nxt = trajectories("next_step", 80)
    ends = {"terminated": 0, "truncated": 0, "mover at truncation": 0}
    for i in range(len(same)):
        assert_obs_equal(first_same[i][0], first_next[i][0])
        expected = merged_next_step(nxt[i])[: len(same[i])]
        assert len(expected) == len(same[i])
        for got, want in zip(same[i], expected, strict=True):
            assert got.keys() == want.keys()
            assert_obs_equal(got["obs"], want["obs"])
            for key in ("mask", "to_play", "reward", "terminated", "truncated"):
                np.testing.assert_array_equal(got[key], want[key], err_msg=key)
            if "final" in got:
                assert_obs_equal(got["final"][0], want["final"][0])
                np.testing.assert_array_equal(got["final"][1], want["final"][1])
                np.testing.assert_array_equal(got["final"][2], want["final"][2])
                ends["terminated"] += got["terminated"]
                ends["truncated"] += got["truncated"] and not got["terminated"]
                ends["mover at truncation"] += bool(got["final"][2].any())
    # Both kinds of end happen, and a match cut by the time limit keeps its mover's mask.
    assert min(ends.values()) > 0, ends


def test_next_step_ignores_the_actions_of_the_reset_step_and_returns_a_new_match():
    env = MultiAgentVectorEnv("connectx", num_envs=8, copy=True)
    twin = MultiAgentVectorEnv("connectx", num_envs=8, copy=True)
    fresh = MultiAgentVectorEnv("connectx", num_envs=8, copy=True)
    start_obs, start_infos = fresh.reset(seed=4)
    env.reset(seed=4)
    twin.reset(seed=4)
    rng = np.random.default_rng(6)
    for _ in range(200):
        actions = legal_moves(env, rng)
        out = env.step(actions)
        twin.step(actions)
        ended = out[2][:, 0] | out[3][:, 0]
        if ended.any():
            break
    assert ended.any()
    assert not env.to_play[out[2][:, 0]].any() and not env.action_mask[out[2][:, 0]].any()
    actions = legal_moves(env, rng)
    other = actions.copy()
    other[ended] = (other[ended] + 3) % 7  # whatever the ended matches are given
    obs, rewards, terminated, truncated, infos = env.step(actions)
    twin_out = twin.step(other)
    assert_obs_equal(obs, twin_out[0])
    for got, want in zip((rewards, terminated, truncated), twin_out[1:4], strict=True):
        np.testing.assert_array_equal(got, want)
    assert not rewards[ended].any() and not (terminated | truncated)[ended].any()
    for k in obs:
        np.testing.assert_array_equal(obs[k][ended], start_obs[k][ended])
    np.testing.assert_array_equal(infos["action_mask"][ended], start_infos["action_mask"][ended])
    np.testing.assert_array_equal(infos["to_play"][ended], start_infos["to_play"][ended])


def test_disabled_keeps_ended_matches_ended_until_a_masked_reset():
    first, nxt = trajectories("next_step", 30, limit=None)
    env = MultiAgentVectorEnv("tictactoe", num_envs=4, autoreset_mode="disabled")
    assert env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    env.reset(seed=3)
    rng = np.random.default_rng(2)
    for _ in range(20):
        out = env.step(legal_moves(env, rng))
        done = out[2][:, 0]
        if done.any():
            break
    assert done.any()
    state = env.get_state()[done]
    frozen = (match_obs(out[0], int(np.flatnonzero(done)[0])), out[2].copy())
    for _ in range(3):
        obs, rewards, terminated, truncated, infos = env.step(legal_moves(env, rng))
        np.testing.assert_array_equal(env.get_state()[done], state)
        assert_obs_equal(match_obs(obs, int(np.flatnonzero(done)[0])), frozen[0])
        assert terminated[done].all() and not rewards[done].any()
        assert not infos["to_play"][done].any() and not infos["action_mask"][done].any()
    obs, infos = env.reset(options={"reset_mask": done})
    for i in np.flatnonzero(done):
        assert_obs_equal(match_obs(obs, i), first[i][0])  # a new match (tictactoe starts alike)
        np.testing.assert_array_equal(infos["action_mask"][i], first[i][1])
    assert not env.step(legal_moves(env, rng))[2][done].any()


def test_same_step_restarts_a_restored_finished_match():
    env = MultiAgentVectorEnv("tictactoe", num_envs=2, autoreset_mode="disabled")
    env.reset(seed=0)
    for move in (0, 3, 1, 4, 2):  # player_0 wins the top row
        env.step(np.full((2, 2), move))
    finished = env.get_state()
    assert (finished["done"] != 0).all()
    same = MultiAgentVectorEnv("tictactoe", num_envs=2, autoreset_mode="same_step", copy=False)
    same.set_state(finished)
    assert not same.engine.states["done"].any()
    assert same.to_play.tolist() == [[True, False]] * 2
    assert not same.step(np.zeros((2, 2), dtype=np.int64))[2].any()


# -- determinism --------------------------------------------------------------------------------


@SLOW
@given(seed=st.integers(0, 2**63), small=st.sampled_from([1, 5]))
def test_match_i_depends_on_neither_batch_size_nor_threads(seed, small):
    big = PARALLEL_MIN_ENVS + 37

    def run(n, threads):
        env = MultiAgentVectorEnv(
            "connectx", num_envs=n, seed=seed, num_threads=threads, parallel=threads > 1
        )
        env.reset()
        rng = np.random.default_rng(seed % 997)
        trace = []
        for _ in range(40):  # any in-range moves: refused ones (full columns) end matches too
            out = env.step(rng.integers(0, 7, size=(big, 2))[:n])
            trace.append(
                [match_obs(out[0], i) for i in range(small)]
                + [x[:small] for x in out[1:4]]
                + [out[4]["action_mask"][:small], env.get_state()[:small]]
            )
        return env, trace

    env, threaded = run(big, 2)
    assert env.engine.uses_threads
    for n, threads in ((big, 1), (small, 1)):
        for k, (a, b) in enumerate(zip(run(n, threads)[1], threaded, strict=True)):
            for x, y in zip(a, b, strict=True):
                if isinstance(x, dict):
                    assert_obs_equal(x, y)
                else:
                    np.testing.assert_array_equal(x, y, err_msg=f"N={n}, step {k}")


# -- buffers ------------------------------------------------------------------------------------


def test_copy_false_returns_the_same_read_only_buffers():
    env = MultiAgentVectorEnv("connectx", num_envs=3, copy=False, autoreset_mode="same_step")
    first = env.reset(seed=0)
    rng = np.random.default_rng(0)
    outs = [env.step(legal_moves(env, rng)) for _ in range(2)]
    for out in outs:
        for k in out[0]:
            assert out[0][k] is first[0][k]
        for x, y in zip(out[1:4], outs[0][1:4], strict=True):
            assert x is y
        assert out[4]["action_mask"] is env.action_mask is first[1]["action_mask"]
        assert out[4]["to_play"] is env.to_play
    with pytest.raises(ValueError, match="read-only"):
        first[0]["board"][0, 0, 0] = 1
    with pytest.raises(ValueError, match="read-only"):
        env.action_mask[0, 0, 0] = False


def test_copy_true_never_aliases():
    env = MultiAgentVectorEnv("connectx", num_envs=3, copy=True)
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=0)
    kept = [obs, infos]
    for _ in range(3):
        kept.extend(env.step(legal_moves(env, rng)))
    internal = [env.action_mask, env.to_play, env.engine.rewards, env.engine.obs["board"]]
    arrays = [a for x in kept for a in (x.values() if isinstance(x, dict) else [x])]
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    for k, a in enumerate(arrays):
        assert a.flags.writeable
        for b in arrays[k + 1 :] + internal:
            assert not np.shares_memory(a, b)


def test_flat_is_a_view_with_match_major_rows():
    for copy in (False, True):
        env = MultiAgentVectorEnv("connectx", num_envs=4, copy=copy)
        obs, infos = env.reset(seed=0)
        rows = flat(obs)
        assert rows["board"].shape == (8, 42) and rows["mark"].shape == (8,)
        assert np.shares_memory(rows["board"], obs["board"])
        np.testing.assert_array_equal(rows["mark"], [1, 2] * 4)
        mask = env.flat(infos["action_mask"])
        assert mask.shape == (8, 7) and np.shares_memory(mask, infos["action_mask"])
        np.testing.assert_array_equal(mask[1::2], False)


def test_state_round_trip_replays_the_matches_and_their_masks():
    env = MultiAgentVectorEnv("othello", num_envs=3, copy=True)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(5):
        env.step(legal_moves(env, rng))
    state, mask, to_play = env.get_state(), env.action_mask.copy(), env.to_play.copy()
    played = []
    for _ in range(4):
        actions = legal_moves(env, rng)
        played.append((actions, env.step(actions)))
    env.set_state(state)
    np.testing.assert_array_equal(env.action_mask, mask)
    np.testing.assert_array_equal(env.to_play, to_play)
    for actions, want in played:
        got = env.step(actions)
        assert_obs_equal(got[0], want[0])
        for x, y in zip(got[1:4], want[1:4], strict=True):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(got[4]["action_mask"], want[4]["action_mask"])
    with pytest.raises(ValueError):
        env.set_state(state[:2])


# -- bad input ----------------------------------------------------------------------------------


@SLOW
@given(
    bad=st.sampled_from(["shape", "dtype", "nan", "high", "low", "idle"]),
    row=st.integers(0, 4),
)
def test_bad_actions_raise_before_any_match_moves(bad, row):
    """Nothing changes: the state, the masks, and what the next good step returns (against a
    twin that never saw the bad actions)."""
    env, twin = (MultiAgentVectorEnv("connectx", num_envs=5, copy=True) for _ in range(2))
    env.reset(seed=2)
    twin.reset(seed=2)
    rng = np.random.default_rng(3)
    for _ in range(12):  # some matches may be pending their next-step reset
        actions = legal_moves(env, rng)
        env.step(actions)
        twin.step(actions)
    state, mask = env.get_state(), env.action_mask.copy()
    actions = legal_moves(env, rng)
    if bad == "shape":
        actions = actions[:, :1]
    elif bad == "dtype":
        actions = actions.astype(np.float64)
    elif bad == "nan":
        actions = actions.astype(np.float64)
        actions[row, 0] = np.nan
    elif bad == "high":
        actions[row, 0] = 7
    elif bad == "low":
        actions[row, 1] = -1
    else:  # an out-of-range action of an agent not to move is refused as well
        actions[row, np.argmin(env.to_play[row])] = 99
    with pytest.raises(ValueError, match="shape|integers|out of range"):
        env.step(actions)
    np.testing.assert_array_equal(env.get_state(), state)
    np.testing.assert_array_equal(env.action_mask, mask)
    good = legal_moves(env, rng)
    got, want = env.step(good), twin.step(good)
    assert_obs_equal(got[0], want[0])
    for x, y in zip(got[1:4], want[1:4], strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(got[4]["action_mask"], want[4]["action_mask"])


def test_one_agent_games_and_bad_options_are_refused():
    with pytest.raises(ValueError, match="one-agent"):
        MultiAgentVectorEnv("cartpole")
    with pytest.raises(ValueError, match="render_mode"):
        MultiAgentVectorEnv("connectx", render_mode="human")
    with pytest.raises(ValueError, match="autoreset"):
        MultiAgentVectorEnv("connectx", autoreset_mode="sometimes")
    env = MultiAgentVectorEnv("connectx", num_envs=2)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(options={"reset_mask": np.ones(3, dtype=bool)})


# -- spaces, render, self-play ------------------------------------------------------------------


@pytest.mark.parametrize("game", ["connectx", "tictactoe", "rps", "othello"])
def test_spaces_describe_what_reset_and_step_return(game):
    n = 5
    env = MultiAgentVectorEnv(game, num_envs=n)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.possible_agents == ["player_0", "player_1"] and env.num_agents == 2
    obs, infos = env.reset(seed=0)
    assert "legal" not in env.single_observation_space.spaces
    assert env.observation_space.contains(obs)
    for name, space in env.single_observation_space.spaces.items():
        assert env.observation_space[name].shape == (n, 2) + space.shape
        assert obs[name].dtype == space.dtype
    moves = env.single_action_space.n
    assert env.action_space.shape == (n, 2)
    assert infos["action_mask"].shape == (n, 2, moves) and infos["to_play"].shape == (n, 2)
    env.action_space.seed(0)
    out = env.step(env.action_space.sample())
    assert out[1].shape == (n, 2) and out[1].dtype == np.float64
    assert out[2].dtype == out[3].dtype == np.bool_ and out[2].shape == out[3].shape == (n, 2)
    assert env.observation_space.contains(out[0])


def test_render_gives_one_frame_per_match():
    env = MultiAgentVectorEnv("connectx", num_envs=3, render_mode="ansi")
    env.reset(seed=0)
    frames = env.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    assert all(isinstance(f, str) for f in frames)
    env.close()
    assert env.closed


def test_random_legal_self_play_never_goes_invalid_and_connectx_is_zero_sum():
    n = 512
    env = MultiAgentVectorEnv("connectx", num_envs=n, copy=False)
    env.reset(seed=5)
    rng = np.random.default_rng(2)
    ended = decisions = 0
    for _ in range(150):
        running = env.engine.states["done"] == 0
        # One agent to move in every running connectx match, with a legal move.
        assert (env.to_play.sum(axis=1) == running).all()
        assert (env.action_mask.any(axis=2) == env.to_play).all()
        actions = legal_moves(env, rng)
        decisions += int(env.to_play.sum())
        _, rewards, terminated, truncated, _ = env.step(actions)
        assert not (env.engine.states["status"] == INVALID).any()
        assert (rewards.sum(axis=1) == 0).all()
        assert set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}
        ended += int(terminated[:, 0].sum())
        assert not truncated.any()
    assert ended > n and decisions > 100 * n
