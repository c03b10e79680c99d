"""The command line, run in-process through ``main(argv)`` and once as the installed script."""

import contextlib
import io
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from vecenv import registry
from vecenv.cli import main
from vecenv.cli.common import Progress
from vecenv.cli.listing import faces
from vecenv.cli.train import random_agent
from vecenv.render.frames import TerminalView, png_bytes, to_ansi

EPISODE = re.compile(r"^episode (\d+): return (-?[\d.]+), length (\d+)$")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def episodes(out):
    found = [EPISODE.match(line) for line in out.splitlines()]
    return [(float(m[2]), int(m[3])) for m in found if m]


def train(capsys, *extra, env="CartPole-v1", count=3, seed=7):
    argv = ["train", "random", "--env", env, "--episodes", str(count), "--seed", str(seed)]
    code, out, err = run(capsys, *argv, *extra)
    assert code == 0, err
    return out, err


def read_png(data):
    """(width, height, colour type, decompressed image data), checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, colour = struct.unpack(">IIBB", chunks[0][1][:10])
    assert depth == 8
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    return width, height, colour, raw


# -- list ------------------------------------------------------------------------------------------


def test_list_shows_games_ids_and_faces(capsys):
    code, out, err = run(capsys, "list")
    assert code == 0 and err == ""
    header, *rows = out.splitlines()
    assert header.split()[:3] == ["name", "gym", "id"]
    cartpole = next(r for r in rows if r.startswith("cartpole "))
    assert cartpole.split()[:5] == ["cartpole", "CartPole-v1", "gym,aisys", "1", "Discrete(2)"]
    assert "(4,)" in cartpole
    assert len(rows) == len(registry.list_envs())


def test_faces_come_from_the_spec():
    assert faces(registry.get_spec("cartpole")) == ["gym", "aisys"]
    assert faces(registry.get_spec("catch")) == ["gym", "csuite", "aisys"]
    assert faces(registry.get_spec("connectx")) == ["gym", "kaggle", "aisys"]


# -- train -----------------------------------------------------------------------------------------


def test_train_prints_one_line_per_episode_and_a_summary(capsys):
    out, err = train(capsys, count=4)
    found = episodes(out)
    assert len(found) == 4
    for ret, length in found:
        assert ret == length  # CartPole: +1 per step
        assert 1 <= length <= 500
    summary = out.splitlines()[-1]
    mean = np.mean([ret for ret, _ in found])
    assert summary.startswith(f"4 episodes: mean return {mean:.2f}")
    assert "steps/s" in summary
    assert err == ""  # no progress bar when stderr is not a terminal


def test_same_seed_same_returns_and_names_agree(capsys):
    first = episodes(train(capsys, seed=11, count=5)[0])
    again = episodes(train(capsys, seed=11, count=5)[0])
    by_folder = episodes(train(capsys, env="cartpole", seed=11, count=5)[0])
    other = episodes(train(capsys, seed=12, count=5)[0])
    assert first == again == by_folder
    assert other != first


def test_gymnasiums_own_env_runs_through_the_same_loop(capsys):
    out, _ = train(capsys, env="gym.CartPole-v1", count=3)
    assert out.splitlines()[0].startswith("CartPole-v1 (gymnasium)")
    found = episodes(out)
    assert len(found) == 3 and all(ret == length for ret, length in found)
    assert found == episodes(train(capsys, env="gym.CartPole-v1", count=3)[0])


def test_continuous_actions_run_through_the_same_loop(capsys):
    out, _ = train(capsys, env="gym.Pendulum-v1", count=1)
    ((ret, length),) = episodes(out)
    assert length == 200 and ret < 0


def test_random_agent_samples_every_kind_of_space():
    from gymnasium import spaces

    rng = np.random.default_rng(0)
    inf = np.inf
    cases = [
        spaces.Discrete(3, start=-1),
        spaces.Box(-2.0, 2.0, (2,), np.float32),
        spaces.Box(np.array([-1.0, -inf, 0.0, -inf]), np.array([1.0, inf, inf, 5.0]), dtype=float),
        spaces.Box(0, 3, (2,), np.int64),
        spaces.MultiDiscrete([2, 5]),
        spaces.MultiBinary(4),
        spaces.Tuple([spaces.Discrete(2), spaces.Box(0.0, 1.0, (1,))]),
        spaces.Dict({"a": spaces.Discrete(2)}),
    ]
    for space in cases:
        draws = [random_agent(None, space, rng) for _ in range(50)]
        assert all(space.contains(x) for x in draws), space


def test_render_prints_ansi_frames(capsys):
    out, _ = train(capsys, "--render", count=1)
    ((ret, length),) = episodes(out)
    assert "\x1b[38;2;" in out and "\x1b[48;2;" in out and "\u2580" in out
    frame_lines = [line for line in out.splitlines() if "\u2580" in line]
    assert len(frame_lines) % (length + 1) == 0  # the reset frame and one per step


def test_render_to_png_writes_a_contact_sheet(capsys, tmp_path):
    path = tmp_path / "out.png"
    out, _ = train(capsys, "--render-to", str(path), count=2)
    assert f"wrote {path}" in out
    width, height, colour, raw = read_png(path.read_bytes())
    assert colour == 2 and width > 0 and height > 0
    assert len(raw) == height * (1 + 3 * width)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, 1 + 3 * width)
    assert (rows[:, 0] == 0).all()  # filter byte "None" on every row
    assert len(np.unique(rows[:, 1:])) > 2  # a picture, not a blank


def test_render_to_gif_writes_the_first_episode(capsys, tmp_path):
    image = pytest.importorskip("PIL.Image")
    path = tmp_path / "out.gif"
    out, _ = train(capsys, "--render-to", str(path), count=2)
    length = episodes(out)[0][1]
    with image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == min(length + 1, 500) > 1
        assert gif.info.get("loop") == 0


def test_png_writer_round_trips_pixels():
    img = np.random.default_rng(0).integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    width, height, _, raw = read_png(png_bytes(img))
    assert (width, height) == (7, 5)
    rows = np.frombuffer(raw, dtype=np.uint8).reshape(5, 1 + 21)
    np.testing.assert_array_equal(rows[:, 1:].reshape(5, 7, 3), img)


def test_ansi_uses_half_blocks_with_foreground_top_and_background_bottom():
    img = np.zeros((2, 1, 3), dtype=np.uint8)
    img[0, 0] = (255, 0, 0)
    img[1, 0] = (0, 0, 255)
    assert to_ansi(img) == "\x1b[38;2;255;0;0m\x1b[48;2;0;0;255m\u2580\x1b[0m"
    big = np.zeros((400, 600, 3), dtype=np.uint8)
    lines = to_ansi(big, columns=80).split("\n")
    assert len(lines) == 27 and all(line.count("\u2580") == 80 for line in lines)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "random", "--env", "NoSuchGame-v9"], "unknown game"),
        (["train", "random", "--env", "gym.NoSuchGame-v9"], "cannot make"),
        (["train", "random", "--env", "CartPole-v1", "--render-to", "x.bmp"], ".gif or .png"),
        (["bench", "--env", "NoSuchGame-v9"], "unknown game"),
        (["bench", "--num-envs", "0,8"], "positive"),
        (["bench", "--num-envs", "1,x"], "integers"),
    ],
)
def test_bad_requests_exit_2_with_one_line(capsys, argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_usage_errors_exit_2(capsys):
    code, _, err = run(capsys, "train")
    assert code == 2 and "usage" in err
    code, _, err = run(capsys, "train", "clever", "--env", "CartPole-v1")
    assert code == 2 and "invalid choice: 'clever'" in err


# -- progress --------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_draws_on_a_terminal_and_stays_silent_elsewhere():
    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        bar = Progress(4, "episodes", stream=stream)
        bar.update(2, force=True)
        bar.clear()
    assert pipe.getvalue() == ""
    assert "\r" in tty.getvalue() and "2/4" in tty.getvalue()
    assert tty.getvalue().endswith("\r\x1b[K")


def test_terminal_view_redraws_in_place_on_a_terminal():
    tty = Terminal()
    view = TerminalView(tty, fps=0)  # no pacing
    view.show("ab\ncd\n")
    view.show(np.zeros((4, 2, 3), dtype=np.uint8))
    first, second = tty.getvalue().split("\x1b[2A")  # up over the two lines of the text frame
    assert first == "ab\x1b[K\ncd\x1b[K\n"
    assert second.count("\u2580") == 4 and second.endswith("\x1b[K\n")
    view.detach()
    view.show("x")
    assert tty.getvalue().endswith("\x1b[0m\x1b[K\nx\x1b[K\n")  # drawn below, not over


# -- bench -----------------------------------------------------------------------------------------


def test_bench_prints_a_table_with_a_ratio(capsys):
    argv = ["bench", "--env", "CartPole-v1", "--num-envs", "1,8", "--steps", "20"]
    code, out, err = run(capsys, *argv, "--repeats", "1")
    assert code == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("env"))
    assert header.split()[-1] == "ratio" and "gymnasium" in header
    rows = [line.split() for line in lines if line.startswith("CartPole-v1 ")]
    assert [(r[1], r[2]) for r in rows] == [("1", "1"), ("8", "1")]
    assert all(re.fullmatch(r"[\d.]+x", r[-1]) for r in rows)


def test_bench_says_which_loop_each_thread_count_ran(capsys):
    """A small batch never runs the threaded loop, whatever threads it was given: the rows of 1
    and 2 threads both say serial (and are measured in alternating runs)."""
    argv = ["bench", "--num-envs", "8", "--threads", "1,2", "--steps", "20", "--no-gym"]
    code, out, err = run(capsys, *argv, "--repeats", "2")
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("env")).split()
    assert header[:4] == ["env", "N", "threads", "loop"]
    rows = [line.split() for line in out.splitlines() if line.startswith("CartPole-v1 ")]
    assert [(r[2], r[3]) for r in rows] == [("1", "serial"), ("2", "serial")]


def test_bench_measures_the_precision_it_is_given(capsys):
    argv = ["bench", "--num-envs", "8", "--steps", "5", "--repeats", "1", "--no-gym"]
    code, out, err = run(capsys, *argv, "--precision", "float32")
    assert code == 0, err
    assert "precision='float32'" in out or "precision=float32" in out
    assert run(capsys, *argv, "--precision", "float16")[0] == 2


def test_bench_without_gymnasium_and_with_a_plot(capsys, tmp_path):
    path = tmp_path / "bench.png"
    argv = ["bench", "--num-envs", "2", "--steps", "5", "--repeats", "1", "--no-gym"]
    code, out, err = run(capsys, *argv, "--plot", str(path))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert code == 2 and "matplotlib" in err
        return
    assert code == 0, err
    row = next(line.split() for line in out.splitlines() if line.startswith("CartPole-v1 "))
    assert row[-2:] == ["-", "-"]
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the installed script --------------------------------------------------------------------------


def test_console_script_and_module_list_the_games():
    script = shutil.which("vecenv", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the vecenv console script is not installed")
    for cmd in ([script, "list"], [sys.executable, "-m", "vecenv", "list"]):
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert "cartpole" in done.stdout and "CartPole-v1" in done.stdout


def test_play_prints_the_summary_and_writes_a_replay(tmp_path):
    out = io.StringIO()
    replay = tmp_path / "match.html"
    with contextlib.redirect_stdout(out):
        status = main(
            [
                "play",
                "tictactoe",
                "--agents",
                "reaction",
                "random",
                "--matches",
                "20",
                "--replay",
                str(replay),
                "--replay-match",
                "3",
            ]
        )
    assert status == 0
    text = out.getvalue()
    assert "reaction vs random: 20 matches" in text and "wins" in text and "losses" in text
    page = replay.read_text()
    assert "vecenvReplay" in page and "tictactoe" in page


def test_play_refuses_unknown_agents_and_games():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["play", "connectx", "--agents", "negamx", "random"]) == 2
        assert main(["play", "nogame", "--agents", "random", "random"]) == 2
        assert main(["play", "connectx", "--agents", "random", "random", "--matches", "0"]) == 2
    assert "unknown agent 'negamx'" in err.getvalue() and "unknown game" in err.getvalue()


# -- flags checked before any work ---------------------------------------------------------------

PLAY = ["play", "tictactoe", "--agents", "random", "reaction"]
TOURNAMENT = ["tournament", "tictactoe", "--agents", "random", "reaction"]


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (PLAY + ["--matches", "0"], "--matches"),
        (PLAY + ["--threads", "0"], "--threads"),
        (PLAY + ["--seed", "-1"], "--seed"),
        (PLAY + ["--replay-match", "-2"], "--replay-match"),
        (TOURNAMENT + ["--matches-per-pair", "0"], "--matches-per-pair"),
        (TOURNAMENT + ["--threads", "-3"], "--threads"),
        (TOURNAMENT + ["--seed", "-1"], "--seed"),
        (["bench", "--seconds", "inf"], "--seconds"),
        (["bench", "--seconds", "nan"], "--seconds"),
        (["bench", "--repeats", "0"], "--repeats"),
        (["bench", "--steps", "0"], "--steps"),
        (["bench", "--rounds", "0"], "--rounds"),
        (["train", "random", "--env", "CartPole-v1", "--episodes", "0"], "--episodes"),
        (["train", "random", "--env", "CartPole-v1", "--seed", "-5"], "--seed"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(capsys, argv, flag):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert f"argument {flag}:" in err and "Traceback" not in err


def test_play_help_names_every_two_agent_game_and_a_plain_percent(capsys):
    for command in ("play", "tournament"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and "%%" not in out
        two = [n for n, s in registry.specs().items() if s.num_agents == 2]
        assert set(two) > {"connectx", "othello"}
        assert all(name in out for name in two), out
    code, out, _ = run(capsys, "play", "--help")
    assert "95% confidence" in " ".join(out.split())


@pytest.mark.parametrize(
    "argv",
    [
        TOURNAMENT + ["--html", "{file}/table.html"],
        TOURNAMENT + ["--html", "{dir}/no/such/table.html"],
        TOURNAMENT + ["--html", "{dir}.html"],
        PLAY + ["--replay", "{file}/match.html"],
        ["train", "random", "--env", "CartPole-v1", "--render-to", "{file}/frames.png"],
        ["bench", "--save", "{file}/run.json"],
    ],
)
def test_an_output_path_that_cannot_be_written_fails_before_any_work(capsys, tmp_path, argv):
    (tmp_path / "a_file").write_text("")
    (tmp_path / "a_dir.html").mkdir()
    where = {"file": str(tmp_path / "a_file"), "dir": str(tmp_path / "a_dir")}
    code, out, err = run(capsys, *(a.format(**where) for a in argv))
    assert code == 2 and out == ""  # nothing played, measured or printed
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_ray_address_where_nothing_listens_fails_at_once(capsys):
    pytest.importorskip("ray")
    code, out, err = run(capsys, *PLAY, "--ray", "127.0.0.1:1")
    assert code == 2 and out == ""
    assert "no Ray cluster answers at 127.0.0.1:1" in err


def test_ray_auto_is_the_running_cluster_or_else_a_new_local_one(monkeypatch):
    from vecenv.cli.common import connect_ray
    from vecenv.ray import cluster

    calls = []

    def connect(address=None):  # no cluster runs here: Ray's "auto" finds none
        calls.append(address)
        if address == "auto":
            raise ConnectionError("no running Ray cluster found on this machine")
        return "a local Ray"

    monkeypatch.setattr(cluster, "connect", connect)
    assert connect_ray("auto") == "a local Ray" and calls == ["auto", None]


def test_a_run_never_writes_over_a_previous_one(tmp_path, capsys):
    """The default folder takes a suffix where a run is; a given one is refused unless --force."""
    from vecenv.cli.common import run_folder

    default = str(tmp_path / "runs" / "CartPole-v1-1")
    assert run_folder(None, default) == default
    (Path(default) / "policy.pt").write_bytes(b"first run")
    second = run_folder(None, default)
    assert second == default + "-run2" and Path(second).is_dir()
    (Path(second) / "policy.pt").write_bytes(b"second run")
    assert run_folder(None, default) == default + "-run3"
    assert run_folder(default, "unused", force=True) == default
    assert (Path(default) / "policy.pt").read_bytes() == b"first run"  # nothing removed
    code, _, err = run(capsys, "train", "ppo", "--env", "CartPole-v1", "--run-dir", default)
    assert code == 2 and "holds a previous run" in err and "--force" in err
    assert len(err.strip().splitlines()) == 1


def test_warm_compiles_ahead_and_a_later_process_loads(tmp_path, capsys):
    """In processes of their own (a cache folder is read once per process)."""
    import json
    import os

    env = dict(os.environ, VECENV_CACHE_DIR=str(tmp_path / "cache"))
    warm = [sys.executable, "-m", "vecenv", "warm", "tictactoe", "--jobs", "1", "--parts"]
    done = subprocess.run([*warm, "engine"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^tictactoe +[\d.]+ s  ok$", done.stdout, re.M), done.stdout
    assert "1 of 1 games warmed" in done.stdout
    assert list((tmp_path / "cache" / "drivers").glob("vecenv_drivers_tictactoe_*.py"))
    probe = (
        "import json, numpy as np, vecenv\n"
        "e = vecenv.make('tictactoe', num_envs=2, seed=0)\n"
        "e.step(np.zeros((2, 2), dtype=np.int64))\n"
        "s = e._drivers.step.stats\n"
        "print(json.dumps([sum(s.cache_hits.values()), sum(s.cache_misses.values())]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert json.loads(done.stdout) == [1, 0], done.stderr  # loaded, not compiled
    code, _, err = run(capsys, "warm", "tictactoe", "--parts", "engine,nosuch")
    assert code == 2 and "parts must be some of" in err
    code, _, err = run(capsys, "warm", "nosuch")
    assert code == 2 and "unknown game 'nosuch'" in err and len(err.strip().splitlines()) == 1


def test_a_game_that_fails_to_warm_is_exit_1_and_one_line_on_stderr(capsys, monkeypatch):
    from vecenv import warm

    def broken(game, parts):
        raise RuntimeError("the kernel did not compile")

    monkeypatch.setattr(warm, "warm_game", broken)
    code, out, err = run(capsys, "warm", "tictactoe", "--jobs", "1")
    assert code == 1
    assert "tictactoe" in out and "FAILED: RuntimeError: the kernel did not compile" in out
    assert "0 of 1 games warmed" in out
    assert err.strip().splitlines() == ["vecenv warm: error: failed to warm: tictactoe"]
