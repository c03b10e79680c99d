"""Backgammon through the faces a two-agent game meets: Kaggle's (its runs, text and the replay
page in Chromium), PettingZoo's AEC beside it, AISysProj and the arena, the command line, the
search agent through its chance nodes, and its frames. The rules themselves are
tests/envs/test_backgammon.py's."""

import random

import numpy as np
import pytest

import vecenv
from tests.aisys.test_face import make as make_aisys
from tests.aisys.test_face import play as play_aisys
from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from tests.kaggle import test_html_replay as replay
from vecenv import aisys, kaggle, search, selfplay
from vecenv.cli import main
from vecenv.kaggle.html import game_js, replay_page

open_page = replay.open_page  # the replay page tests' fixture (``browser`` is tests/conftest's)


def kaggle_episode(seed=0, **configuration):
    random.seed(seed)
    env = kaggle.make("backgammon", configuration=configuration)
    env.run(["random", "random"])
    return env


def test_a_kaggle_run_is_the_engines_game():
    env = kaggle_episode(seed=3)
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert abs(env.state[0].reward) in (1, 2, 3) and env.state[0].reward == -env.state[1].reward
    text = env.render(mode="ansi")
    assert text.splitlines()[0].split()[:3] == ["12", "13", "14"]


def test_the_kaggle_face_goes_on_from_an_engine_record_rolling_alike():
    """Started from an engine's record (``start_record``: its random stream too), the Kaggle
    face rolls the engine's dice: the same boards, dice, statuses and rewards to the end."""
    engine = vecenv.make("backgammon", num_envs=1, seed=4, autoreset="disabled")
    env = kaggle.make("backgammon")
    env.start_record(engine.get_state(0))
    rng = np.random.default_rng(4)
    while not engine.terminated[0]:
        mover = int(engine.obs["turn"][0]) - 1
        actions = [None, None]
        actions[mover] = int(rng.choice(np.flatnonzero(engine.obs["legal"][0])))
        env.step(actions)
        engine.step(np.array([[a or 0 for a in actions]], dtype=np.int64))
        assert env.state[0].observation.board == engine.obs["board"][0].tolist()
        assert env.state[0].observation.dice == engine.obs["dice"][0].tolist()
    assert env.done
    assert [s.reward for s in env.state] == engine.states["reward"][0].tolist()


def replayed(seed, steps):
    """A Kaggle run of AISysProj's steps, from the episode its seed starts."""
    env = kaggle.make("backgammon")
    env.start_record(vecenv.make("backgammon", num_envs=1, seed=seed).get_state(0))
    for step in steps:
        env.step([0 if a is None else a for a in step])
    return env


def test_pettingzoo_aec_plays_as_the_kaggle_face():
    for seed in range(2):
        assert play_aec_beside_kaggle("backgammon", seed) > 0


@pytest.mark.parametrize("seat", [0, 1])
def test_aisysproj_runs_match_the_engine_and_kaggle(seat):
    """A run's steps (both seats' moves) replayed on an engine of the run's seed, and on the
    Kaggle face from that engine's record, end with the run's outcome."""
    config = {"opponent": "random", "seat": seat}
    env = make_aisys(aisys.Backgammon, config)
    state = env.new_run(seed=seat)
    rng = random.Random(seat)
    final, outcome, _, _ = play_aisys(env, state, lambda c: rng.choice(c["legal"]))
    assert abs(outcome) in (1.0, 2.0, 3.0)
    engine = vecenv.make("backgammon", num_envs=1, seed=seat, autoreset="disabled")
    total = 0.0
    for step in final["steps"]:
        engine.step(np.array([[0 if a is None else a for a in step]], dtype=np.int64))
        total += float(engine.rewards[0, seat])
    assert engine.terminated[0] and total == outcome
    assert replayed(seat, final["steps"]).state[seat].reward == outcome


def test_the_arena_adds_and_plays_backgammon(tmp_path):
    from tests.arena.helpers import play_runs
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        assert arena.add_environment("backgammon")["env_class"].endswith(":Backgammon")
        config = arena.add_agent("backgammon", "alice")
        finished, _ = play_runs(arena, "backgammon", config, 2, random_policy(0))
        assert len(finished) >= 2 and set(finished.values()) <= {-3, -2, -1, 1, 2, 3}
    finally:
        arena.close()


def test_vecenv_play_list_and_bench(tmp_path, capsys):
    page = tmp_path / "backgammon.html"
    argv = ["play", "backgammon", "--agents", "random", "random", "--matches", "8"]
    assert main([*argv, "--replay", str(page)]) == 0
    assert "random vs random: 8 matches" in capsys.readouterr().out
    assert "vecenvReplay" in page.read_text()
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    row = next(line for line in out if line.startswith("backgammon "))
    assert "Backgammon-v0" in row and "kaggle" in row and "Discrete(156)" in row
    argv = ["bench", "--env", "backgammon", "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
    assert main([*argv, "--no-gym"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[:2] for row in rows if row and row[0] == "Backgammon-v0"] == [
        ["Backgammon-v0", "1"],
        ["Backgammon-v0", "4"],
    ]


def test_mcts_searches_through_chance_nodes_and_beats_random_play():
    """The search agent steps its records with its own stream (a chance node under each move
    that rolls): it wins most games against random moves (benchmarks/search_backgammon.py
    measures the rate)."""
    assert search.MCTS("backgammon", 10).num_actions == 156
    result = selfplay.play("backgammon", ("mcts:40", "random"), 8, seed=1)
    assert result.summary.wins >= 6, result.summary


# ---- frames -----------------------------------------------------------------------------------


def test_text_shows_the_points_bars_trays_and_dice():
    e = vecenv.make("backgammon", num_envs=1, seed=0, autoreset="disabled")
    lines = e.render(0, mode="ansi").splitlines()
    assert lines[1].split() == ["5O", ".", ".", ".", "3X", ".", "|", "5X", ".", ".", ".", ".", "2O"]
    assert lines[2].split() == ["5X", ".", ".", ".", "3O", ".", "|", "5O", ".", ".", ".", ".", "2X"]
    assert lines[4] == "bar X 0 O 0   off X 0 O 0"
    dice = e.obs["dice"][0]
    assert lines[5].startswith(f"dice {dice[0]} {dice[1]}, to play") and "X to move" in lines[5]
    img = e.render(0, mode="rgb_array")
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8


def test_replay_page_draws_the_final_board(open_page):
    env = kaggle_episode(seed=1)
    steps = env.toJSON()["steps"]
    last = len(steps) - 1
    page = replay_page(game_js("backgammon"), {"environment": env.toJSON(), "step": last})
    opened = open_page(page)
    state = opened.show(last)
    assert "wins" in state["status"] and opened.requests == []
    assert len(state["layout"]["cells"]) == 24
