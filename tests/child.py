"""Python code run in a child process of its own, against this checkout's vecenv."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_python(code, env_extra=None, cwd=None, timeout=300):
    """Run ``code`` (dedented) in a fresh interpreter with this process's environment plus
    ``env_extra`` and this checkout on ``PYTHONPATH``; assert it exits 0 and return its
    stdout."""
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(ROOT)]))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout
