"""Kuhn poker and Leduc hold'em through the faces a two-agent game meets: Kaggle's (its runs,
text and the replay page in Chromium), PettingZoo's AEC beside it, AISysProj and the arena, the
command line, the Gymnasium Env against an opponent, and their frames. The rules themselves are
tests/envs/test_kuhn_poker.py's and test_leduc_holdem.py's; what each agent sees, through every
face, tests/test_hidden_information.py's."""

import contextlib
import io
import json
import random

import gymnasium
import numpy as np
import pytest

import vecenv
from tests.aisys.test_face import make as make_aisys
from tests.aisys.test_face import play as play_aisys
from tests.aisys.test_face import run_data
from tests.kaggle import test_html_replay as replay
from vecenv import aisys, kaggle, pettingzoo, registry
from vecenv.aisys.catalog import class_name
from vecenv.cli import main
from vecenv.kaggle.html import game_js, replay_page

open_page = replay.open_page  # the replay page tests' fixture (``browser`` is tests/conftest's)

GAMES = ["kuhn_poker", "leduc_holdem"]
RANKS = "JQK"


@pytest.mark.parametrize("game", GAMES)
def test_a_kaggle_run_ends_zero_sum_and_its_text_shows_the_table(game):
    random.seed(1)
    env = kaggle.make(game)
    env.run(["random", "random"])
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert env.state[0].reward == -env.state[1].reward
    text = env.render(mode="ansi")
    for k in range(2):
        assert f"agent {k}: {RANKS[env.state[k].observation.card]}" in text


@pytest.mark.parametrize("game", GAMES)
def test_pettingzoo_aec_plays_as_the_kaggle_face(game):
    """The AEC env and the Kaggle face on one deal (the engine's record given to Kaggle's
    ``start_record``): each agent's card and the bets agree at every ply, and the rewards."""
    for seed in range(4):
        env = pettingzoo.env(game)
        env.reset(seed=seed)
        theirs = kaggle.make(game)
        theirs.start_record(env.engine.get_state(0))
        rng = random.Random(seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            k = env.possible_agents.index(agent)
            mine = observation["observation"]
            assert mine["card"] == theirs.state[k].observation.card
            assert mine["chips"].tolist() == theirs.state[0].observation.chips
            move = rng.choice(np.flatnonzero(observation["action_mask"]).tolist())
            actions = [None, None]
            actions[k] = move
            theirs.step(actions)
            env.step(move)
            for a, r in env.rewards.items():
                totals[a] += r
        assert theirs.done and not env.agents
        assert list(totals.values()) == [s.reward for s in theirs.state]


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("game", GAMES)
def test_aisysproj_runs_play_on_alike_from_their_state(game, seat):
    """A run's outcome is its Kaggle reward, the request shows the agent its own card only, and
    the run's state played again (the cache emptied) deals the same cards: the same outcome."""
    config = {"opponent": "random", "seat": seat}
    env = make_aisys(aisys.environment_class(game), config)
    rng = random.Random(seat)

    def pick(content):
        assert set(content["observation"]) >= {"card", "chips", "turn"}
        assert content["observation"]["mark"] == seat + 1
        return rng.choice(content["legal"])

    for seed in range(3):
        final, outcome, _, results = play_aisys(env, env.new_run(seed=seed), pick)
        assert results[-1].outcome == outcome in registry.get_spec(game).reward["enum"]
        fresh = make_aisys(aisys.environment_class(game), config)  # nothing cached
        again = fresh._replay(json.loads(json.dumps(final)))
        assert again.done and again.reward() == outcome
        assert env.view_run(run_data(final)).lstrip().lower().startswith("<!doctype html")


@pytest.mark.parametrize("game", GAMES)
def test_the_arena_adds_and_plays_the_game(tmp_path, game):
    from tests.arena.helpers import play_runs
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        env = arena.add_environment(game)
        assert env["env_class"].endswith(":" + class_name(game))
        config = arena.add_agent(game, "alice")
        finished, _ = play_runs(arena, game, config, 3, random_policy(0))
        assert len(finished) >= 3
    finally:
        arena.close()


@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_plays_the_learner_against_the_opponent(game):
    spec = vecenv.make(game, num_envs=1).spec
    env = gymnasium.make(f"vecenv/{spec.gym['id']}")
    obs, _ = env.reset(seed=0)
    assert set(obs) >= {"card", "chips", "features"} and obs["card"].shape == ()
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(obs["legal"])
        obs, reward, terminated, truncated, _ = env.step(int(legal[0]))
        total += reward
        done = terminated or truncated
    assert total != 0 or game == "leduc_holdem"


@pytest.mark.parametrize("game", GAMES)
def test_vecenv_play_writes_a_replay_and_list_names_the_faces(tmp_path, game, capsys):
    page = tmp_path / f"{game}.html"
    argv = ["play", game, "--agents", "random", "random", "--matches", "16", "--replay", str(page)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "random vs random: 16 matches" in out and "vecenvReplay" in page.read_text()
    assert main(["list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(game))
    assert "kaggle" in row and "aisys" in row
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        argv = ["bench", "--env", game, "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
        assert main([*argv, "--no-gym"]) == 0
    assert len([line for line in out.getvalue().splitlines() if " 4 " in line]) >= 1


@pytest.mark.parametrize("game", GAMES)
def test_mcts_is_refused_on_the_command_line(game, capsys):
    assert main(["play", game, "--agents", "mcts", "random", "--matches", "2"]) != 0
    assert "hidden information" in capsys.readouterr().err


# ---- frames -----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_frames_show_both_cards(game):
    e = vecenv.make(game, num_envs=1, seed=3)
    text = e.render(0, mode="ansi")
    cards = e.states["cards"][0]
    assert f"agent 0: {RANKS[cards[0]]}" in text and f"agent 1: {RANKS[cards[1]]}" in text
    assert "<- to act" in text.splitlines()[-2]  # agent 0 opens
    img = e.render(0, mode="rgb_array")
    assert img.dtype == np.uint8 and img.ndim == 3
    felt = tuple(img[2, 2])
    assert felt == (0x1B, 0x5E, 0x3A) and (img == (0xFA, 0xFA, 0xF5)).all(axis=2).sum() > 500


@pytest.mark.parametrize("game", GAMES)
def test_replay_page_draws_the_cards_and_the_winner(open_page, game):
    random.seed(2)
    env = kaggle.make(game)
    env.run(["random", "random"])
    data = env.toJSON()
    last = len(data["steps"]) - 1
    opened = open_page(replay_page(game_js(game), {"environment": data, "step": last}))
    state = opened.show(last)
    assert "wins" in state["status"] or "Draw" in state["status"]
    assert len(state["layout"]["cells"]) == 2
    img, scale = opened.canvas_pixels()
    w, h = state["layout"]["card"]
    for x, y in state["layout"]["cells"]:  # a card's face, in its corner (off the rank)
        assert replay._pixel(img, scale, x - w / 2 + 4, y - h / 2 + 4) == (0xFA, 0xFA, 0xF5)
