"""README's test command on a machine without the optional pieces: the suite collects, and every
test needing one of them skips, saying why (outside CI; under CI they fail instead).

The pieces are hidden as a fresh virtualenv would lack them (``tests/fences.py``): PufferLib (no
extra installs it), gymnax and EnvPool (the bench extra's), Playwright (so the browser tests miss
Chromium) and psycopg (the PostgreSQL tests). A GPU is missing here anyway.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from tests import fences

ROOT = Path(__file__).resolve().parents[1]
PIECES = ("pufferlib", "gymnax", "envpool", "playwright", "psycopg", "psycopg_binary")
# One test file (or test) of each piece; each must skip as a whole here.
USERS = (
    "tests/test_pufferlib.py",
    "tests/test_precision.py::test_the_pufferlib_face_takes_a_precision",
    "benchmarks/test_bench_pufferlib.py",
    "tests/kaggle/test_html_replay.py::test_hostile_title_stays_text_in_the_browser",
    "tests/arena/test_postgres.py",
    "benchmarks/test_bench_envpool.py::test_classic_step[Acrobot-v1-envpool-T1]",
    "tests/cuda/test_gpu.py",
)


def _without_pieces():
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(fences.folder()), str(ROOT)]))
    env[fences.VARIABLE] = fences.encode(PIECES, [p.replace("_", "-") for p in PIECES])
    return env


def _pytest(*argv, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv],
        cwd=ROOT,
        env=_without_pieces(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_fence_hides_the_pieces():
    code = "import importlib.util as u; print([u.find_spec(m) is None for m in PIECES])"
    code = f"PIECES = ('pufferlib', 'os')\n{code}"

    done = subprocess.run(
        [sys.executable, "-c", code], env=_without_pieces(), capture_output=True, text=True
    )
    assert done.stdout.strip() == "[True, False]", done.stderr


def test_the_whole_suite_collects_without_them():
    """``pytest --collect-only`` over tests/ and benchmarks/ (pyproject's testpaths), as README's
    command and plain ``pytest`` start: no collection error anywhere."""
    done = _pytest("--collect-only", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not re.search(r"\berrors?\b", done.stdout.splitlines()[-1]), done.stdout[-2000:]
    assert re.search(r"\d+ tests collected", done.stdout), done.stdout[-2000:]


def test_their_tests_skip_saying_why():
    done = _pytest("-q", "-rs", "--benchmark-disable", *USERS)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = done.stdout.splitlines()[-1]
    assert "passed" not in summary and "failed" not in summary and "error" not in summary, summary
    reasons = done.stdout
    for needed in ("pufferlib", "playwright", "psycopg", "envpool", "GPU"):
        assert needed.lower() in reasons.lower(), f"no skip names {needed}:\n{reasons[-3000:]}"
