import os
import tempfile

# One driver cache per test session, so tests never depend on what an earlier run compiled; the
# session still shares it between tests (compiling each game once).
os.environ.setdefault("VECENV_CACHE_DIR", tempfile.mkdtemp(prefix="vecenv-test-cache-"))

from .browser import browser  # noqa: E402, F401  (a fixture for every test module)
