"""``vecenv bench --compare-ref``: its paired statistic on synthetic rounds, the temporary git
worktree, and one real run against HEAD (asserted on its verdict and structure, never a time)."""

import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecenv.cli import bench_ref, main
from vecenv.perf import compare, paired, worktree

THRESHOLD = 0.10


def loaded_pairs(seed, n, slowdown=0.0, spread=0.03, hit=0.2):
    """``n`` pairs of round times on a machine under load that changes in spells: both rounds of
    a pair slowed by the same load (1x to 3x, held for a few pairs), each side hit by a burst of
    its own in a share ``hit`` of the rounds (up to 4x), and noise of ``spread``."""
    rng = np.random.default_rng(seed)
    spells = np.repeat(rng.uniform(1.0, 3.0, n // 5 + 1), 5)[:n]
    sides = []
    for scale in (1.0, 1.0 + slowdown):
        x = scale * spells * np.exp(rng.normal(0.0, spread, n))
        burst = rng.random(n) < hit
        x[burst] *= rng.uniform(1.0, 4.0, burst.sum())
        sides.append(x)
    return sides


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(60, 300), spread=st.floats(0.0, 0.05))
def test_same_code_under_common_load_passes(seed, n, spread):
    a, b = loaded_pairs(seed, n, spread=spread)
    c = paired.paired_change(a, b, THRESHOLD)
    assert c.verdict == "same"
    assert c.low <= c.change <= c.high
    assert c.pairs == n


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(100, 300), spread=st.floats(0.0, 0.05))
def test_a_fifteen_percent_slowdown_under_load_is_caught(seed, n, spread):
    a, b = loaded_pairs(seed, n, slowdown=0.15, spread=spread)
    c = paired.paired_change(a, b, THRESHOLD)
    assert c.verdict == "slower"
    assert THRESHOLD < c.low <= c.change <= c.high


def test_unpaired_medians_of_the_same_rounds_cry_wolf():
    """Why pairs: the saved-run check, given the same rounds side by side but with the load of
    the two runs drifting apart, calls the same code slower; the paired statistic does not."""
    a, b = loaded_pairs(7, 200)
    b = b * np.linspace(1.0, 1.4, b.size)  # the load grew during the run: on both sides...
    a = a * np.linspace(1.0, 1.4, a.size)  # ...paired, it cancels
    shifted = b * 1.2  # a baseline taken in a quieter spell than now
    assert compare.compare(a, shifted, THRESHOLD).verdict == "slower"
    assert paired.paired_change(a, b, THRESHOLD).verdict == "same"


def test_a_speed_up_is_reported_and_bad_input_refused():
    a, b = loaded_pairs(3, 200, slowdown=-0.3)
    assert paired.paired_change(a, b, THRESHOLD).verdict == "faster"
    with pytest.raises(ValueError, match="as many of each side"):
        paired.paired_change([1.0] * 10, [1.0] * 9, THRESHOLD)
    with pytest.raises(ValueError, match="at least 5 pairs"):
        paired.paired_change([1.0, np.nan, 1.0, 0.0, 1.0, 1.0], [1.0] * 6, THRESHOLD)
    with pytest.raises(ValueError, match="threshold"):
        paired.paired_change([1.0] * 9, [1.0] * 9, -0.1)


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("first")
    git(root, "add", "a.txt")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    (root / "a.txt").write_text("now")  # the working tree differs from HEAD
    return root


def listed(root):
    return git(root, "worktree", "list", "--porcelain").stdout


def test_a_revision_is_checked_out_then_removed(repo):
    with worktree.checkout(repo, "HEAD") as (folder, commit):
        assert (folder / "a.txt").read_text() == "first"
        assert commit == git(repo, "rev-parse", "HEAD").stdout.strip()
        assert str(folder) in listed(repo)
    assert not folder.exists()
    assert str(folder) not in listed(repo)


def test_the_worktree_goes_on_an_error_or_ctrl_c_too(repo):
    for error in (RuntimeError("boom"), KeyboardInterrupt()):
        with pytest.raises(type(error)), worktree.checkout(repo, "HEAD") as (folder, _):
            raise error
        assert not folder.exists()
        assert str(folder) not in listed(repo)


def test_bad_revisions_and_folders_are_refused(repo, tmp_path):
    for rev in ("no-such-branch", "", "--all", "HEAD~5"):
        with pytest.raises(ValueError, match="revision"):
            worktree.resolve(repo, rev)
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(ValueError, match="not in a git checkout"):
        worktree.repo_root(outside)


def bench(capsys, *argv):
    code = main(["bench", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_usage_errors_exit_2_without_a_traceback(capsys, monkeypatch, tmp_path):
    code, _, err = bench(capsys, "--compare-ref", "no-such-rev", "--num-envs", "8")
    assert code == 2 and "no revision 'no-such-rev'" in err and "Traceback" not in err
    code, _, err = bench(capsys, "--compare-ref", "HEAD", "--compare", "x.json")
    assert code == 2 and "drop --compare" in err
    monkeypatch.setattr(bench_ref, "current_tree", lambda: tmp_path)
    code, _, err = bench(capsys, "--compare-ref", "HEAD", "--num-envs", "8")
    assert code == 2 and "not in a git checkout" in err and "Traceback" not in err


def test_compare_ref_head_passes_end_to_end(capsys):
    """Identical code on both sides: the gate passes, every part of the report is there, and the
    temporary worktree is gone afterwards."""
    root = bench_ref.current_tree()
    argv = ["--compare-ref", "HEAD", "--num-envs", "8,16", "--rounds", "30", "--no-gym"]
    code, out, err = bench(capsys, *argv)
    assert code == 0, out + err
    lines = out.splitlines()
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    assert lines[0].startswith(f"reference: HEAD ({head[:12]}), checked out in ")
    folder = lines[0].rsplit(" in ", 1)[1]
    rows = [line for line in lines if line.startswith("CartPole-v1 N=")]
    assert [r.split()[1] for r in rows] == ["N=8", "N=16"]
    for r in rows:
        fields = r.split()
        assert fields[-1] in ("same", "faster") and fields[-2] == "30"  # verdict, pairs
        assert fields[5].endswith("%") and fields[7].endswith("%]")  # change [interval]
    assert "no case slower by more than 10%" in lines[-1]
    assert folder not in listed(root)
