"""Sparrow mahjong, a game of three agents, through the faces and tools: Kaggle's runs, PettingZoo's
AEC and Parallel (PettingZoo's own tests: tests/test_pettingzoo.py), Gymnasium against two
opponents, self-play and tournaments with one agent a seat, the command line, pickling, frames;
and the faces two-player by nature (the search, AISysProj, the arena) refusing it in one line.
The rules are tests/envs/test_sparrow_mahjong.py's; what each agent sees, through every face,
tests/test_hidden_information.py's."""

import pickle
import random

import gymnasium
import numpy as np
import pytest

import vecenv
from tests.kaggle import test_html_replay
from vecenv import aisys, kaggle, pettingzoo, registry, selfplay, tournament
from vecenv.cli import main
from vecenv.gym.env import GameEnv
from vecenv.kernels.turns import ACTIVE, DONE

GAME = "sparrow_mahjong"
open_page = (
    test_html_replay.open_page
)  # the replay page tests' fixture (``browser``: tests/conftest)


def first_legal(obs, legal):
    """A batched Python policy: the lowest tile type the seat may discard."""
    return np.argmax(legal, axis=1).astype(np.int64)


def test_a_kaggle_run_of_three_random_agents_ends_and_its_text_shows_the_table():
    random.seed(1)
    env = kaggle.make(GAME)
    env.run(["random", "random", "random"])
    assert [s.status for s in env.state] == ["DONE"] * 3
    rewards = [s.reward for s in env.state]
    assert abs(sum(rewards)) < 1e-6  # points pass between the seats
    text = env.render(mode="ansi")
    assert "dora" in text and "(dealer)" in text
    hands = [sum(s.observation.hand) for s in env.state]
    assert sorted(hands) in ([5, 5, 5], [5, 5, 6])


def test_the_replay_page_draws_the_three_seats_and_the_outcome(open_page):
    from vecenv.kaggle.html import game_js, replay_page

    random.seed(2)
    env = kaggle.make(GAME)
    env.run(["random", "random", "random"])
    data = env.toJSON()
    last = len(data["steps"]) - 1
    opened = open_page(replay_page(game_js(GAME), {"environment": data, "step": last}))
    state = opened.show(last)
    assert state["status"].count("Player") == 3  # each agent's points
    assert len(state["layout"]["rows"]) == 3
    img, scale = opened.canvas_pixels()
    w, h = state["layout"]["tile"]
    for x, y in state["layout"]["rows"]:  # the first tile of each hand: its face, in a corner
        assert test_html_replay._pixel(img, scale, x + 2, y - h / 2 + 2) == (0xFA, 0xFA, 0xF0)


def test_pettingzoo_plays_three_agents_to_the_end():
    env = pettingzoo.env(GAME)
    env.reset(seed=3)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    rng = random.Random(0)
    movers = set()
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        movers.add(agent)
        env.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    assert len(movers) == 3 and not env.agents
    parallel = pettingzoo.parallel_env(GAME)
    observations, _ = parallel.reset(seed=3)
    assert set(observations) == set(parallel.possible_agents)


@pytest.mark.parametrize("seat", [0, 2])
def test_gymnasium_plays_the_learner_against_two_opponents(seat):
    env = GameEnv(game=GAME, seat=seat, opponent="random")
    obs, _ = env.reset(seed=seat)
    assert obs["hand"].shape == (11,) and obs["mark"] == seat + 1
    total, done, steps = 0.0, False, 0
    while not done:
        assert obs["legal"].any() and obs["turn"] == seat + 1  # the learner's turn each step
        obs, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(obs["legal"])[0]))
        total += reward
        done = terminated or truncated
        steps += 1
    assert 1 <= steps <= 10
    with pytest.raises(ValueError, match=r"seat must be an integer in \[0, 2\]"):
        GameEnv(game=GAME, seat=3)
    vector = gymnasium.make_vec("vecenv/SparrowMahjong-v0", num_envs=4)
    first, _ = vector.reset(seed=0)
    assert first["hand"].shape == (4, 11)


def test_a_game_the_opponents_end_before_the_learners_first_move_is_dealt_again():
    """A game of three: the opponents may end a game before the learner moves (one wins on the
    other's discard); the learner's Env deals such a game again, so that every episode starts
    with the learner to move."""
    from vecenv.opponent import OpponentEngine
    from vecenv.testing import legal_actions

    plain = vecenv.make(GAME, num_envs=512, seed=1, autoreset="disabled")
    rng = np.random.default_rng(0)
    for _ in range(2):  # agent 2's first turn comes after at most two discards
        waiting = (plain.states["status"][:, 2] != ACTIVE) & (plain.states["done"] == 0)
        plain.step_only(legal_actions(plain, rng), waiting)
    assert (plain.states["done"] != 0).sum() >= 2  # such games come up
    learner = OpponentEngine(GAME, num_envs=512, seed=1, seat=2)
    assert (learner.inner.states["status"][:, 2] == ACTIVE).all()
    assert (learner.rewards == 0).all() and not learner.terminated.any()


def test_self_play_seats_one_agent_a_seat_and_rotates_them():
    result = selfplay.play(GAME, ("random", first_legal, "random"), 30, seed=4, keep_actions=True)
    assert result.rewards.shape == result.statuses.shape == (30, 3)
    np.testing.assert_array_equal(result.order[:3], [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    assert (result.statuses == DONE).all()
    assert str(result.summary).startswith("random vs first_legal vs random: 30 matches")
    s = result.summary
    assert s.wins + s.draws + s.losses == 30
    env = result.replay(7)
    assert env.done
    for i, seat in enumerate(result.order[7]):
        assert env.state[seat].reward == result.rewards[7, i]
    with pytest.raises(ValueError, match="agents must be 3 agents for sparrow_mahjong"):
        selfplay.play(GAME, ("random", "random"), 2)
    again = selfplay.play(GAME, ("random", first_legal, "random"), 30, seed=4)
    np.testing.assert_array_equal(again.rewards, result.rewards)


def test_a_tournament_seats_each_agent_against_copies_of_the_other():
    pytest.importorskip("openskill")
    result = tournament.round_robin(
        GAME, ["random", "tests.envs.test_sparrow_mahjong_faces:first_legal"], 20
    )
    w, d, lo = result.table[0, 1]
    assert w + d + lo == 20 and tuple(result.table[1, 0]) == (lo, d, w)
    assert len(result.ratings) == 2


def test_the_command_line_plays_lists_and_benches_it(tmp_path, capsys):
    page = tmp_path / "match.json"
    argv = ["play", GAME, "--agents", "random", "random", "random", "--matches", "8"]
    assert main([*argv, "--replay", str(page)]) == 0
    out = capsys.readouterr().out
    assert "random vs random vs random: 8 matches" in out and page.read_text().startswith("{")
    assert main(["play", GAME, "--agents", "random", "random", "--matches", "2"]) != 0
    assert "sparrow_mahjong has 3 seats: --agents takes 3 agents, got 2" in capsys.readouterr().err
    assert main(["list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(GAME))
    assert " 3 " in f" {row} " and "kaggle" in row and "aisys" not in row
    argv = ["bench", "--env", GAME, "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
    assert main([*argv, "--no-gym"]) == 0


def test_the_faces_two_player_by_nature_refuse_it_in_one_line(capsys):
    with pytest.raises(ValueError, match="sparrow_mahjong has hidden information"):
        selfplay.play(GAME, ("mcts", "random", "random"), 2)
    with pytest.raises(ValueError, match="sparrow_mahjong has 3 agents: an AISysProj environment"):
        aisys.environment_class(GAME)
    assert main(["play", GAME, "--agents", "mcts", "random", "random", "--matches", "2"]) != 0
    err = capsys.readouterr().err.strip()
    assert "hidden information" in err and len(err.splitlines()) == 1


def test_the_arena_refuses_a_game_of_three_agents(tmp_path):
    from vecenv.arena import Arena

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        with pytest.raises(ValueError, match="sparrow_mahjong has 3 agents"):
            arena.add_environment(GAME)
    finally:
        arena.close()


def test_a_pickled_engine_and_opponent_engine_play_on_alike():
    e = vecenv.make(GAME, num_envs=8, seed=2)
    rng = np.random.default_rng(0)
    from vecenv import testing

    for _ in range(3):
        e.step(testing.legal_actions(e, rng))
    copy = pickle.loads(pickle.dumps(e))
    for _ in range(6):
        a = testing.legal_actions(e, rng)
        e.step(a)
        copy.step(a)
        np.testing.assert_array_equal(copy.get_state(), e.get_state())
    env = GameEnv(game=GAME, seat=1)
    env.reset(seed=5)
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(3):
        legal = np.flatnonzero(env._observation()["legal"])
        move = int(legal[0]) if legal.size else 0
        out, again = env.step(move), twin.step(move)
        assert out[1] == again[1] and out[2] == again[2]
        if out[2]:
            break


def test_frames_show_every_hand_and_the_seat_to_move():
    e = vecenv.make(GAME, num_envs=1, seed=3)
    text = e.render(0, mode="ansi")
    lines = text.splitlines()
    assert lines[0].startswith("dora ") and len(lines) == 4
    assert "<- to discard" in lines[1] and "(dealer)" in lines[1]
    img = e.render(0, mode="rgb_array")
    assert img.dtype == np.uint8 and img.ndim == 3 and tuple(img[1, 1]) == (0x1B, 0x5E, 0x3A)
    assert (img == (0xFA, 0xFA, 0xF0)).all(axis=2).sum() > 1000  # 16 tiles' faces
    assert e.states["status"][0, e.states["seats"][0, 0]] == ACTIVE


def test_the_spec_takes_one_to_max_agents():
    from vecenv.protocol import MAX_AGENTS
    from vecenv.spec import GameSpec

    raw = dict(registry.get_spec(GAME).raw)
    assert GameSpec({**raw, "agents": [MAX_AGENTS]}).num_agents == MAX_AGENTS
    for bad in ([MAX_AGENTS + 1], [0], [], 3, ["3"], [True]):
        with pytest.raises(
            ValueError, match=f"agents must be a list of counts from 1 to {MAX_AGENTS}"
        ):
            GameSpec({**raw, "agents": bad})


def test_the_turns_of_three_agents():
    """``kernels/turns`` on three statuses: the one ACTIVE agent among INACTIVE ones moves; any
    other mix moves nobody and ends the first ACTIVE and the first INACTIVE agent, as Kaggle's
    turn-based interpreters do with two."""
    from vecenv.kernels import turns

    A, I, D, V = turns.ACTIVE, turns.INACTIVE, turns.DONE, turns.INVALID  # noqa: N806
    record = np.zeros(1, dtype=[("status", np.int8, (3,))])

    def run(function, status):
        record["status"][0] = status
        return function(record[0]), record["status"][0].tolist()

    assert run(turns.to_move, [I, I, A]) == (3, [I, I, A])
    assert run(turns.mover, [I, A, I]) == (1, [I, A, I])
    assert run(turns.to_move, [A, A, I])[0] == 0 and run(turns.to_move, [I, A, D])[0] == 0
    assert run(turns.mover, [A, I, A]) == (-1, [D, D, A])
    assert run(turns.mover, [I, I, I]) == (-1, [D, I, I])
    assert run(turns.mover, [D, D, D]) == (-1, [D, D, D])
    record["status"][0] = [I, A, I]
    turns.refuse(record[0], 1)
    assert record["status"][0].tolist() == [D, V, D]
