"""Hex through the faces a two-agent game meets: Kaggle's (its runs, text and the replay page in
Chromium), PettingZoo's AEC beside it, AISysProj and the arena, the command line, the search agent
and its frames. The rules themselves are tests/envs/test_hex.py's."""

import random

import numpy as np
import pytest

import vecenv
from tests.aisys.test_face import engine_outcome, kaggle_replay
from tests.aisys.test_face import make as make_aisys
from tests.aisys.test_face import play as play_aisys
from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from tests.kaggle import test_html_replay as replay
from vecenv import aisys, kaggle, search, selfplay
from vecenv.cli import main
from vecenv.kaggle.html import game_js, replay_page

open_page = replay.open_page  # the replay page tests' fixture (``browser`` is tests/conftest's)

STONES = {1: (0x1A, 0x1A, 0x1A), 2: (0xF5, 0xF5, 0xF5)}
CELL = (0xD9, 0xC4, 0x9A)


def kaggle_episode(seed=0, **configuration):
    random.seed(seed)
    env = kaggle.make("hex", configuration=configuration)
    env.run(["random", "random"])
    return env


def test_a_kaggle_run_is_the_engines_game():
    env = kaggle_episode(seed=3)
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert sorted(s.reward for s in env.state) == [-1, 1]
    engine = vecenv.make("hex", num_envs=1, seed=0, autoreset="disabled")
    for step in env.steps[1:]:
        engine.step(np.array([[agent.action for agent in step]], dtype=np.int64))
        assert engine.obs["board"][0].tolist() == step[0].observation.board
    assert engine.terminated[0]
    text = env.render(mode="ansi")
    assert text.splitlines()[0].startswith("   a b c") and "X" in text and "O" in text


def test_pettingzoo_aec_plays_as_the_kaggle_face():
    for seed in range(2):
        assert play_aec_beside_kaggle("hex", seed) > 0


@pytest.mark.parametrize("seat", [0, 1])
def test_aisysproj_runs_match_the_engine_and_kaggle(seat):
    config = {"opponent": "random", "seat": seat}
    env = make_aisys(aisys.Hex, config)
    state = env.new_run(seed=seat)
    rng = random.Random(seat)
    final, outcome, moves, _ = play_aisys(env, state, lambda c: rng.choice(c["legal"]))
    total, ended = engine_outcome("hex", config, seat, seat, moves)
    assert ended and outcome == total in (-1.0, 1.0)
    assert kaggle_replay("hex", None, final["steps"]).state[seat].reward == outcome


def test_the_arena_adds_and_plays_hex(tmp_path):
    from tests.arena.helpers import play_runs
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        assert arena.add_environment("hex")["env_class"].endswith(":Hex")
        config = arena.add_agent("hex", "alice")
        finished, _ = play_runs(arena, "hex", config, 2, random_policy(0))
        assert len(finished) >= 2 and set(finished.values()) <= {-1, 1}
    finally:
        arena.close()


def test_vecenv_play_list_and_bench(tmp_path, capsys):
    page = tmp_path / "hex.html"
    argv = ["play", "hex", "--agents", "random", "random", "--matches", "8", "--replay", str(page)]
    assert main(argv) == 0
    assert "random vs random: 8 matches" in capsys.readouterr().out
    assert "vecenvReplay" in page.read_text()
    assert main(["list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("hex "))
    assert "Hex-v0" in row and "kaggle" in row and "Discrete(122)" in row
    argv = ["bench", "--env", "hex", "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
    assert main([*argv, "--no-gym"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[:2] for row in rows if row and row[0] == "Hex-v0"] == [
        ["Hex-v0", "1"],
        ["Hex-v0", "4"],
    ]


def test_mcts_beats_random_play():
    """The search agent (perfect information) wins most games against random moves."""
    result = selfplay.play("hex", ("mcts:60", "random"), 6, seed=1, size=5)
    assert result.summary.wins >= 5, result.summary
    assert search.MCTS("hex", 10).num_actions == 122


# ---- frames -----------------------------------------------------------------------------------


def test_text_shifts_each_row_and_letters_the_columns():
    e = vecenv.make("hex", num_envs=1, seed=0, autoreset="disabled", size=3)
    e.step(np.array([[0, 0]]))
    e.step(np.array([[0, 8]]))
    assert e.render(0, mode="ansi").splitlines() == [
        "   a b c",
        " 1 X . .",
        "  2 . . .",
        "   3 . . O",
    ]


def test_replay_page_draws_the_final_board(open_page):
    env = kaggle_episode(seed=1)
    steps = env.toJSON()["steps"]
    last = len(steps) - 1
    opened = open_page(replay_page(game_js("hex"), {"environment": env.toJSON(), "step": last}))
    state = opened.show(last)
    assert "wins" in state["status"] and opened.requests == []
    board = steps[last][0]["observation"]["board"]
    cells = state["layout"]["cells"]
    assert len(cells) == 121
    img, scale = opened.canvas_pixels()
    for (x, y), value in zip(cells, board, strict=True):
        got = replay._pixel(img, scale, x + 1, y + 1)
        assert got == (STONES[value] if value else CELL), (x, y, value)
