"""The documentation site: ``mkdocs build --strict`` (a broken link, anchor or nav entry, a page
left out of the nav, a docstring mkdocstrings cannot read, any warning fails it) covering every
public module, every command and every game, then opened in headless Chromium: every page loads
without a script error, every image renders, and the search finds a game by name.

Without the docs extra (mkdocs, Material, mkdocstrings) the site's tests skip, except under
``CI``, where they fail (the test extra installs it).
"""

import argparse
import functools
import html
import http.server
import importlib.util
import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import vecenv

from .browser import require_browser

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def require_mkdocs():
    missing = [m for m in NEEDED if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        reason = f"the docs extra is not installed ({', '.join(missing)}): pip install '.[docs]'"
        if os.environ.get("CI"):
            pytest.fail(f"the site must build in CI: {reason}")
        pytest.skip(reason)


def hook(name):
    """A module of docs/hooks, as mkdocs loads it."""
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", HOOKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built strictly into a temporary folder, as ``mkdocs build`` builds it."""
    require_mkdocs()
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", MPLBACKEND="Agg")
    # The gallery's engines compile into the session's numba cache beside the other test
    # processes: under the same lock on its files as theirs (tests/cachelock.py).
    build = (
        "import sys; from tests import cachelock; cachelock.install(); "
        "from mkdocs.__main__ import cli; cli(sys.argv[1:])"
    )
    done = subprocess.run(
        [sys.executable, "-c", build, "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-8000:]}"
    return out


def read(site, path):
    return (site / path / "index.html").read_text()


def submodules(folder, dotted):
    """Every module below the package folder ``folder`` (named ``dotted``), private ones aside."""
    names = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("_"):
            continue
        if path.suffix == ".py":
            names.append(f"{dotted}.{path.stem}")
        elif (path / "__init__.py").is_file():
            names.append(f"{dotted}.{path.name}")
            names += submodules(path, f"{dotted}.{path.name}")
    return names


def test_every_public_module_has_its_api_documented(site):
    reference = hook("reference")
    modules = reference.public_modules()
    assert {"vecenv", "vecenv.engine", "vecenv.gym", "vecenv.ray", "vecenv.cuda"} <= set(modules)
    assert {"vecenv.kernels", "vecenv.kernels.rng", "vecenv.testing", "vecenv.cli"} <= set(modules)
    for module in modules:
        page = read(site, f"reference/api/{module}")
        assert f'id="{module}"' in page, f"{module}: no API section on its page"
        folder = reference.PACKAGES.get(module)
        if folder is None:  # a package's modules are documented on its page too
            top, _, name = module.rpartition(".")
            folder = reference.PACKAGES[top] / name
            for sub in submodules(folder, module) if folder.is_dir() else []:
                assert f'id="{sub}"' in page, f"{sub}: not documented on {module}'s page"
    # The engine's docstrings are rendered, not only named.
    engine = read(site, "reference/api/vecenv.engine")
    assert 'id="vecenv.engine.Engine.step"' in engine
    assert "N parallel episodes of one game" in engine


def commands(parser, path=("vecenv",)):
    """[(command words, its parser)] of every ``vecenv`` command, subcommands included."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append(((*path, name), sub))
                found += commands(sub, (*path, name))
    return found


def test_every_command_and_flag_is_in_the_cli_reference(site):
    from vecenv.cli import build_parser

    page = html.unescape(read(site, "reference/cli"))
    listed = commands(build_parser())
    assert len(listed) > 10
    for words, parser in listed:
        assert f'id="{"-".join(words)}"' in page, f"{' '.join(words)}: not in the CLI reference"
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in page, f"{' '.join(words)} {flag}: not in the CLI reference"


def test_the_gallery_shows_every_registered_game(site):
    from PIL import Image

    gallery = hook("gallery")
    table = gallery.game_table()
    page = html.unescape(read(site, "gallery"))
    games = vecenv.list_envs()
    assert len(games) >= 18
    for game in games:
        assert f'id="{game}"' in page, f"{game}: not in the gallery"
        assert game in table, f"{game}: no row in README's game table"
        if gallery.render_mode(game) == "rgb_array":
            with Image.open(site / "gallery" / f"{game}.gif") as gif:
                assert gif.n_frames > 1, f"{game}: its animation has one frame"
                assert min(gif.size) >= 16, f"{game}: its picture is {gif.size}"
            assert f'src="{game}.gif"' in page
    # The cells of README's table reach each game's entry.
    assert "17.8x Pgx" in page
    assert table["cartpole"]["reference"] == "gymnasium CartPole-v1"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site on a local HTTP server (the search's worker does not run from file://)."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    thread.join()


def test_every_page_loads_and_every_image_renders_in_chromium(site, served, browser):
    require_browser()
    pages = sorted(
        p.parent.relative_to(site).as_posix() for p in site.rglob("index.html") if p.is_file()
    )
    assert len(pages) > 40
    # The API reference's pages are text that mkdocstrings writes alike: one of them renders in
    # the browser, the others are fetched and checked for their title (half the test's time).
    api = [p for p in pages if p.startswith("reference/api/")]
    assert len(api) > 10
    for path in api[1:]:
        with urllib.request.urlopen(served + f"{path}/") as response:
            assert response.status == 200, path
            assert b"<title>" in response.read(), path
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    images = 0
    for path in [p for p in pages if p not in api[1:]]:
        url = served + ("" if path == "." else f"{path}/")
        response = page.goto(url, wait_until="load")
        assert response.status == 200, f"{url}: HTTP {response.status}"
        assert page.title(), f"{url}: no title"
        broken = page.evaluate(
            "[...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        )
        assert broken == [], f"{url}: images that do not render: {broken}"
        images += page.evaluate("document.images.length")
        assert errors == [], f"{url}: script errors: {errors}"
    assert images >= len(vecenv.list_envs()) + 4  # the gallery's, the plots, the curves
    page.close()


def test_the_search_finds_a_game_by_name(served, browser):
    require_browser()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = browser.new_page()
    page.goto(served, wait_until="load")
    # The search builds its index in a worker after the page loads (seconds on a busy machine);
    # a query typed before it is ready finds nothing, and under CI's load the worker has once
    # not started at all: so the page is loaded again and the query typed until results show.
    for attempt in range(6):
        page.fill(".md-search__input", "")
        page.fill(".md-search__input", "Othello")
        try:
            page.wait_for_selector(".md-search-result__item", timeout=20_000)
            break
        except PlaywrightTimeout:
            assert attempt < 5, "the search found nothing for 'Othello' in two minutes"
            page.reload(wait_until="load")  # a search worker that never started starts again
    links = page.eval_on_selector_all(".md-search-result__link", "links => links.map(a => a.href)")
    found = [urlsplit(link) for link in links]
    assert any(u.path == "/gallery/" and u.fragment == "othello" for u in found), links
    page.close()
