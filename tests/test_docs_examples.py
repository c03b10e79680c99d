"""The site's pages' examples run as written, as README's do (``tests/markdown_blocks.py``): every
markdown page under docs/, a temporary folder per page and section. A block shown on a page and
in README as well is marked ``<!-- copy: README.md -->`` and runs once, in README's test."""

from pathlib import Path

import pytest

from .markdown_blocks import ROOT, collect, folders_fixture, run_block

DOCS = ROOT / "docs"


def pages():
    """Every markdown page of the site, the build's hooks aside, from the repository's root."""
    found = sorted(DOCS.rglob("*.md"))
    return [p.relative_to(ROOT).as_posix() for p in found if "hooks" not in p.parts]


BLOCKS = [block for page in pages() for block in collect((ROOT / page).read_text(), page)]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return folders_fixture(tmp_path_factory)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_docs_block(block, folders):
    run_block(block, folders)


def test_every_page_is_collected():
    """The pages with examples are found (a page moved out of docs/ would drop its blocks)."""
    with_blocks = {b.page for b in BLOCKS}
    for page in ("docs/getting-started.md", "docs/engine.md", "docs/faces/gymnasium.md"):
        assert page in with_blocks
    assert all(Path(ROOT / b.page).is_file() for b in BLOCKS)
