"""``vecenv bench --compare-ref``: its paired statistic on synthetic rounds, the temporary git
worktree, and one real run against HEAD (asserted on its verdict and structure, never a time)."""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vecenv.cli import bench_ref, main
from vecenv.cli.common import CliError
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


def grouped(seed, groups, n, slowdown=0.0, offsets=None):
    """``groups`` pairs of worker processes, ``n`` loaded pairs of rounds each; ``offsets``: what
    each pair of processes of the same code differs by for its whole life (B over A)."""
    a, b, labels = [], [], []
    for g in range(groups):
        x, y = loaded_pairs(seed + g, n, slowdown=slowdown)
        a.append(x)
        b.append(y * (1.0 + (offsets[g] if offsets is not None else 0.0)))
        labels.append(np.full(n, g))
    return np.concatenate(a), np.concatenate(b), np.concatenate(labels)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), odd=st.integers(0, 3), offset=st.floats(-0.5, 0.5))
def test_one_odd_pair_of_processes_does_not_decide(seed, odd, offset):
    """Same code, one of four pairs of processes steadily apart (by up to 50%, as seen on a
    loaded machine): the interval widens, the verdict stays "same". The same rounds judged as one
    group would cry wolf whenever that pair's offset is past the threshold."""
    offsets = [0.0] * 4
    offsets[odd] = offset
    a, b, labels = grouped(seed, 4, 50, offsets=offsets)
    c = paired.paired_change(a, b, THRESHOLD, groups=labels)
    assert c.verdict == "same"
    assert c.low <= c.change <= c.high and c.pairs == 200


def test_the_interval_spans_the_pairs_of_processes():
    """Three of four pairs of processes of the same code steadily 20% apart, one not: judged as
    one group the rounds say "slower", clearly; judged by process pair, the interval reaches from
    the odd pair to the rest, and no verdict is called on what four processes cannot settle."""
    a, b, labels = grouped(11, 4, 50, offsets=[0.2, 0.2, 0.2, 0.0])
    assert paired.paired_change(a, b, THRESHOLD).verdict == "slower"
    c = paired.paired_change(a, b, THRESHOLD, groups=labels)
    assert c.verdict == "same" and c.low < 0.02 and c.high > 0.18


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1), wobble=st.lists(st.floats(-0.03, 0.03), min_size=4, max_size=4)
)
def test_a_fifteen_percent_slowdown_in_every_pair_of_processes_is_caught(seed, wobble):
    a, b, labels = grouped(seed, 4, 50, slowdown=0.15, offsets=wobble)
    c = paired.paired_change(a, b, THRESHOLD, groups=labels)
    assert c.verdict == "slower", c
    assert THRESHOLD < c.low <= c.change <= c.high


def test_group_labels_must_match_the_pairs():
    with pytest.raises(ValueError, match="group labels"):
        paired.paired_change([1.0] * 10, [1.0] * 10, THRESHOLD, groups=[0] * 9)


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
    monkeypatch.chdir(tmp_path)
    code, _, err = bench(capsys, "--compare-ref", "HEAD", "--num-envs", "8")
    assert code == 2 and "not in a checkout of vecenv" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_an_installed_vecenv_compares_against_the_checkout_it_runs_in(tmp_path):
    """``pip install .`` then ``vecenv bench --compare-ref main`` in the clone (README's order):
    the installed package lies in no checkout, so the repository is the current folder's."""
    site = tmp_path / "site-packages"
    (site / "vecenv").mkdir(parents=True)
    root = bench_ref.current_tree()
    assert bench_ref.reference_repository(site, cwd=root / "docs") == (root, Path("."))
    assert bench_ref.reference_repository(root) == (root, Path("."))
    with pytest.raises(CliError, match="not in a checkout of vecenv"):
        bench_ref.reference_repository(site, cwd=tmp_path)


def test_compare_ref_head_passes_end_to_end(capsys):
    """Identical code on both sides: the gate passes, every part of the report is there, and the
    temporary worktree is gone afterwards. (At a 50% threshold: whether the same code reads a few
    percent apart is the machine's doing, and tests assert no timings.)"""
    root = bench_ref.current_tree()
    argv = ["--compare-ref", "HEAD", "--num-envs", "8,16", "--rounds", "40", "--no-gym"]
    argv += ["--fail-over", "50%"]
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
        assert fields[-1] in ("same", "faster") and fields[-2] == "40"  # verdict, pairs
        assert fields[5].endswith("%") and fields[7].endswith("%]")  # change [interval]
    assert "no case slower by more than 50%" in lines[-1]
    assert folder not in listed(root)
