"""Headless Chromium for the page tests: Debian's ``chromium`` driven by Playwright.

Without Playwright or the system Chromium the browser tests skip, except under ``CI``, where they
fail (``.ci/run`` installs Chromium and sets CI).
"""

import os
import shutil

import pytest


def chromium_path():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def require_browser():
    reason = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "the playwright package is not installed (pip install playwright)"
    if reason is None and chromium_path() is None:
        reason = "no system Chromium on PATH (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests must run in CI: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    """A launched Chromium, one per test module."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=chromium_path(),
            args=["--no-sandbox", "--force-color-profile=srgb"],
        )
        yield launched
        launched.close()
