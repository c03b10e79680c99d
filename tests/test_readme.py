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


def test_readme_opens_with_its_two_set_up_commands():
    """The first code blocks a newcomer meets install and run the demo, then install the test
    extra and run the suite (both tested from a fresh virtualenv by tests/test_packaging.py)."""
    first, second = BLOCKS[:2]
    assert first.code.startswith("pip install . && vecenv bench ")
    assert second.code.startswith('pip install -e ".[test]" && pytest ')
    assert first.section == second.section == "Install"
