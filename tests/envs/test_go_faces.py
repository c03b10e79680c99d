"""Go through the faces a two-agent game meets: Kaggle's (its runs, text and the replay page in
Chromium), PettingZoo's AEC beside it, AISysProj and the arena, the command line, and its frames.
The rules themselves are tests/envs/test_go.py's."""

import contextlib
import io
import random

import numpy as np
import pytest

import vecenv
from tests.aisys.test_face import engine_outcome, kaggle_replay
from tests.aisys.test_face import make as make_aisys
from tests.aisys.test_face import play as play_aisys
from tests.envs.aec_beside_kaggle import play_aec_beside_kaggle
from tests.kaggle import test_html_replay as replay
from vecenv import aisys, kaggle
from vecenv.cli import main
from vecenv.envs.go import render
from vecenv.envs.go.rules import bordered
from vecenv.kaggle.html import game_js, replay_page

open_page = replay.open_page  # the replay page tests' fixture (``browser`` is tests/conftest's)

WOOD = (0xDC, 0xB3, 0x5C)
STONES = {1: (0x1A, 0x1A, 0x1A), 2: (0xF5, 0xF5, 0xF5)}


def kaggle_episode(seed=0, **configuration):
    random.seed(seed)
    env = kaggle.make("go", configuration=configuration)
    env.run(["random", "random"])
    return env


def replayed(env, size=9):
    """The Kaggle face's episode played again in the engine: its board after every step."""
    engine = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled", size=size)
    boards = [engine.obs["board"][0].copy()]
    for step in env.steps[1:]:
        engine.step(np.array([[agent.action for agent in step]], dtype=np.int64))
        boards.append(engine.obs["board"][0].copy())
    return engine, boards


@pytest.mark.parametrize("size", [9, 5])  # boards up to 9x9 share one compiled engine
def test_a_kaggle_run_is_the_engines_game(size):
    env = kaggle_episode(seed=size, size=size)
    assert [s.status for s in env.state] == ["DONE", "DONE"]
    assert sorted(s.reward for s in env.state) == [-1, 1]
    engine, boards = replayed(env, size)
    assert engine.terminated[0]
    for step, board in zip(env.steps, boards, strict=True):
        assert step[0].observation.board == board.tolist()
    np.testing.assert_array_equal(engine.states["reward"][0], [s.reward for s in env.state])
    text = env.render(mode="ansi")
    assert text.splitlines()[1].startswith(f"{size:2d} ") and "X" in text and "O" in text


def test_pettingzoo_aec_plays_as_the_kaggle_face():
    for seed in range(2):
        assert play_aec_beside_kaggle("go", seed) > 0


@pytest.mark.parametrize("seat", [0, 1])
def test_aisysproj_runs_match_the_engine_and_kaggle(seat):
    config = {"opponent": "random", "seat": seat}
    env = make_aisys(aisys.Go, config)
    state = env.new_run(seed=seat)
    rng = random.Random(seat)
    final, outcome, moves, results = play_aisys(env, state, lambda c: rng.choice(c["legal"]))
    total, ended = engine_outcome("go", config, seat, seat, moves)
    assert ended and outcome == total in (-1.0, 1.0)
    replay_env = kaggle_replay("go", None, final["steps"])
    assert replay_env.done and replay_env.state[seat].reward == outcome
    assert all(r.outcome is None for r in results[:-1])


def test_the_arena_adds_and_plays_go(tmp_path):
    from tests.arena.helpers import play_runs
    from vecenv.arena import Arena
    from vecenv.arena.client import random_policy

    arena = Arena(str(tmp_path / "arena.sqlite"))
    try:
        env = arena.add_environment("go")
        assert env["env_class"].endswith(":Go")
        config = arena.add_agent("go", "alice")
        finished, _ = play_runs(arena, "go", config, 2, random_policy(0))
        assert len(finished) >= 2 and set(finished.values()) <= {-1, 1}
    finally:
        arena.close()


def test_vecenv_play_plays_and_writes_a_replay(tmp_path):
    page = tmp_path / "go.html"
    for size in (9, 7):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            argv = ["play", "go", "--agents", "random", "random", "--matches", "8"]
            assert main([*argv, "--config", f"size={size}", "--replay", str(page)]) == 0
        assert "random vs random: 8 matches" in out.getvalue()
        assert "vecenvReplay" in page.read_text()


def test_vecenv_list_names_the_game_and_its_faces(capsys):
    assert main(["list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("go "))
    assert "Go-v0" in row and "kaggle" in row and "aisys" in row and "Discrete(82)" in row


def test_vecenv_bench_times_go(capsys):
    argv = ["bench", "--env", "go", "--num-envs", "1,4", "--steps", "3", "--repeats", "1"]
    assert main([*argv, "--no-gym"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [row[:2] for row in rows if row and row[0] == "Go-v0"] == [
        ["Go-v0", "1"],
        ["Go-v0", "4"],
    ]


# ---- frames -----------------------------------------------------------------------------------


def a_position():
    e = vecenv.make("go", num_envs=1, seed=0, autoreset="disabled")
    for move in (0, 80, 40, 41):
        actions = np.zeros((1, 2), dtype=np.int64)
        actions[0, e.obs["turn"][0] - 1] = move
        e.step(actions)
    return e


def test_text_letters_columns_and_numbers_rows_from_the_bottom():
    e = a_position()
    text = e.render(0, mode="ansi")
    lines = text.splitlines()
    assert lines[0] == lines[-1] == "   A B C D E F G H J"
    assert lines[1] == " 9 X . . . . . . . . 9"  # point 0: the top-left, A9
    assert lines[5] == " 5 . . . . X O . . . 5"  # 40 and 41: E5 and F5
    assert lines[9] == " 1 . . . . . . . . O 1"  # point 80: J1
    points = np.zeros(361, dtype=np.int8)
    points[[0, 360]] = [1, 2]
    state = {"board": bordered(points, 19)[0]}  # a record's board: the renderers read no more
    text = render.ansi(state, {"size": 19}).splitlines()
    assert text[0].endswith("R S T") and text[1].startswith("19 X .") and text[19].endswith("O 1")


def test_picture_draws_the_stones_on_the_wooden_board():
    e = a_position()
    img = e.render(0, mode="rgb_array")
    cell = render.CELL
    assert img.shape == (9 * cell, 9 * cell, 3) and img.dtype == np.uint8

    def point(p):
        r, c = divmod(p, 9)
        return tuple(img[r * cell + cell // 2 + 3, c * cell + cell // 2 + 3])

    assert point(0) == point(40) == STONES[1]
    assert point(80) == point(41) == STONES[2]
    assert point(1) == WOOD


def test_replay_page_draws_the_final_board(open_page):
    env = kaggle_episode(seed=1)
    steps = env.toJSON()["steps"]
    window = {"environment": env.toJSON(), "step": len(steps) - 1, "controls": True}
    opened = open_page(replay_page(game_js("go"), window))
    last = len(steps) - 1
    state = opened.show(last)
    assert ("wins" in state["status"]) and opened.requests == []
    board = steps[last][0]["observation"]["board"]
    cells = state["layout"]["cells"]
    assert len(cells) == 81
    (x0, y0), (x1, _) = cells[:2]
    off = (x1 - x0) * 0.25  # inside a stone, off the grid lines and the last stone's dot
    img, scale = opened.canvas_pixels()
    for (x, y), value in zip(cells, board, strict=True):
        got = replay._pixel(img, scale, x + off, y + off)
        assert got == (STONES[value] if value else WOOD), (x, y, value)
