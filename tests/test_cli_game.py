"""``vecenv new`` and ``vecenv check``: a written game folder runs and passes its own test as
written; the check prints its table and exits by the contract."""

import json
import subprocess
import sys

from tests.test_cli import run
from tests.test_outside_games import ROOT


def test_new_writes_a_game_whose_own_test_passes(capsys, tmp_path):
    code, out, _ = run(capsys, "new", "coins", "--agents", "2", "--dir", str(tmp_path))
    assert code == 0
    folder = tmp_path / "coins"
    assert {p.name for p in folder.iterdir()} >= {
        "coins.json",
        "rules.py",
        "render.py",
        "agents.py",
        "test_coins.py",
    }
    assert json.loads((folder / "coins.json").read_text())["agents"] == [2]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout


def test_new_refuses_a_bad_name_and_an_existing_folder(capsys, tmp_path):
    code, _, err = run(capsys, "new", "Bad-Name", "--dir", str(tmp_path))
    assert code == 2 and "lower-case letters" in err
    assert run(capsys, "new", "walker", "--dir", str(tmp_path))[0] == 0
    code, _, err = run(capsys, "new", "walker", "--dir", str(tmp_path))
    assert code == 2 and "exists already" in err


def test_check_prints_every_check_of_a_folder_and_passes(capsys, tmp_path):
    run(capsys, "new", "hopper", "--dir", str(tmp_path))
    code, out, _ = run(capsys, "check", str(tmp_path / "hopper"))
    assert code == 0, out
    for check in ("spec", "batch", "threads", "fuzz actions", "gymnasium", "render", "speed"):
        assert any(line.startswith(check + " ") and "PASS" in line for line in out.splitlines())
    assert "kaggle" in out and "SKIP" in out  # a one-agent game is no Kaggle game
    assert "N=4096:" in out


def test_check_fails_a_broken_game_with_status_1(capsys, tmp_path):
    run(capsys, "new", "leaky", "--dir", str(tmp_path))
    rules = tmp_path / "leaky" / "rules.py"
    rules.write_text(rules.read_text().replace("= s.position\n", "= s.position - 1000\n"))
    code, out, _ = run(capsys, "check", str(tmp_path / "leaky"), "--only", "spec", "batch")
    assert code == 1
    assert "FAIL" in out and "outside its space" in out
    assert "leaky: 1 of 2 checks passed (0 skipped), 1 failed" in out


def test_check_refuses_unknown_games_and_checks(capsys, tmp_path):
    code, _, err = run(capsys, "check", "no_such_game")
    assert code == 2 and "unknown game" in err
    code, _, err = run(capsys, "check", "cartpole", "--only", "everything")
    assert code == 2 and "no check 'everything'" in err
    code, _, err = run(capsys, "check", str(tmp_path / "nowhere"))
    assert code == 2 and "no such game folder" in err


def test_new_refuses_a_name_that_could_never_register_before_writing(capsys, tmp_path):
    for name, words in [
        ("cartpole", "bundled game 'cartpole'"),
        ("tic_tac_toe", "bundled game 'tictactoe'"),  # its Gymnasium id, TicTacToe-v0
        ("class", "lower-case letters"),
    ]:
        code, _, err = run(capsys, "new", name, "--dir", str(tmp_path))
        assert code == 2 and words in err, err
    assert list(tmp_path.iterdir()) == []


STEP_LINE = "    s.position += 1 if actions[0] == 1 else -1\n"
BROKEN_STEPS = {
    # rules that never return: a loop whose values cycle below its bound
    "endless": STEP_LINE
    + "    while s.position < 1000:\n        s.position = (s.position * 3) % 7\n",
    # a write 8 TiB past a small array: far outside any mapping, so SIGSEGV every time
    "wild": STEP_LINE + "    rewards[1 << 40] = 1.0\n",
}


def _check_broken(tmp_path, kind, timeout):
    from vecenv import scaffold

    folder = scaffold.write_game(kind, tmp_path)
    rules = folder / "rules.py"
    rules.write_text(rules.read_text().replace(STEP_LINE, BROKEN_STEPS[kind], 1))
    done = subprocess.run(
        [sys.executable, "-m", "vecenv", "check", str(folder), "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=240,  # far past the check's own limit: the command must end by itself
    )
    lines = {line.split("  ")[0].strip(): line for line in done.stdout.splitlines()}
    return done, lines


def test_check_fails_rules_that_never_return_after_the_timeout(tmp_path):
    # Compiling counts against the limit too: the check times out whether or not it compiled.
    done, lines = _check_broken(tmp_path, "endless", timeout=8)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "PASS" in lines["spec"]
    assert "FAIL" in lines["batch"] and "timed out: no result after 8 s" in lines["batch"]
    assert "Engine.step" in lines["batch"] and "check_batch" in lines["batch"]
    assert "SKIP" in lines["speed"] and "not run: 'batch' timed out" in lines["speed"]
    assert "endless: 1 of 14 checks passed (12 skipped), 1 failed" in done.stdout


def test_check_fails_rules_that_crash_the_process_naming_the_signal(tmp_path):
    done, lines = _check_broken(tmp_path, "wild", timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "FAIL" in lines["batch"] and "killed by SIGSEGV" in lines["batch"]
    assert "Engine.step" in lines["batch"]
    assert "not run: the process running 'batch' crashed" in lines["threads"]
    assert "wild: 1 of 14 checks passed (12 skipped), 1 failed" in done.stdout


def test_check_refuses_a_timeout_that_is_no_positive_number(capsys):
    code, _, err = run(capsys, "check", "cartpole", "--timeout", "0")
    assert code == 2 and "--timeout must be a positive number" in err


def test_without_hypothesis_the_fuzzing_checks_name_the_game_extra(monkeypatch):
    import tomllib

    from vecenv import testing

    monkeypatch.setitem(sys.modules, "hypothesis", None)  # import hypothesis: ImportError
    result = testing.run_checks("catch", ["fuzz actions"])[0]
    assert result.status == "skip" and 'pip install ".[game]"' in result.detail
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert {r.split(">")[0] for r in extras["game"]} == {"pytest", "hypothesis"}
