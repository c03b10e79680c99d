"""A git revision checked out into a temporary ``git worktree``, removed afterwards.

``checkout(repo, rev)`` is a context manager: the worktree (detached at ``rev``'s commit) lives in
a temporary folder for the ``with`` block and is removed when it ends, on an error or Ctrl-C too
(``git worktree remove --force``; ``git worktree prune`` where the folder had gone already).
A revision git cannot resolve, or a folder that is not in a git checkout, raises ValueError.
"""

import contextlib
import shutil
import subprocess
import tempfile
from pathlib import Path


def _git(cwd, *args):
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise ValueError("git is not installed: --compare-ref needs it") from None


def repo_root(path):
    """The top folder of the git checkout holding ``path``; ValueError if there is none."""
    proc = _git(path, "rev-parse", "--show-toplevel")
    if proc.returncode != 0:
        raise ValueError(f"{str(path)!r} is not in a git checkout")
    return Path(proc.stdout.strip())


def resolve(repo, rev):
    """The full commit id ``rev`` names in ``repo``; ValueError if it names none."""
    if not rev or rev.startswith("-"):
        raise ValueError(f"not a git revision: {rev!r}")
    proc = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if proc.returncode != 0:
        raise ValueError(f"git knows no revision {rev!r} in {str(repo)!r}")
    return proc.stdout.strip()


@contextlib.contextmanager
def checkout(repo, rev):
    """Yield ``(folder, commit)``: ``rev`` checked out in a temporary worktree of ``repo``."""
    commit = resolve(repo, rev)
    tmp = Path(tempfile.mkdtemp(prefix="vecenv-ref-"))
    folder = tmp / commit[:12]
    try:
        proc = _git(repo, "worktree", "add", "--detach", str(folder), commit)
        if proc.returncode != 0:
            raise ValueError(f"git worktree add failed: {proc.stderr.strip()}")
        yield folder, commit
    finally:
        removed = _git(repo, "worktree", "remove", "--force", str(folder)).returncode == 0
        shutil.rmtree(tmp, ignore_errors=True)
        if not removed:  # the folder went first (a kill): git's own record of it goes now
            _git(repo, "worktree", "prune")
