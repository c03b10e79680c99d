"""README.md's examples run as written (see ``tests/markdown_blocks.py`` for the directives), and
README stays a front page whose links into the site's pages resolve."""

import re

import pytest

from .markdown_blocks import ROOT, collect, folders_fixture, run_block

README = ROOT / "README.md"
BLOCKS = collect(README.read_text())


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return folders_fixture(tmp_path_factory)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_readme_block(block, folders):
    run_block(block, folders)


def test_readme_is_a_front_page_linking_into_the_site():
    text = README.read_text()
    assert len(text.splitlines()) <= 250, "README.md is a front page: move the detail to docs/"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    pages = [link for link in links if link.startswith("docs/")]
    assert pages, "README.md links into the site's pages"
    for link in links:
        if "://" not in link:
            assert (ROOT / link).exists(), f"README.md links to {link}, which does not exist"
