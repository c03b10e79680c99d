"""Every page's examples in a throwaway virtualenv of its own, its install lines really run: the
slow counterpart of the suite's fenced runs (``tests/markdown_blocks.py``), for a newcomer's
machine. Not part of the suite (minutes: PyTorch alone is a few hundred MB to unpack).

For each page with runnable blocks (README.md, then docs/ in order): a new virtualenv; ``pip
install`` of this clone with the extras the page names (what its ``pip install ".[X]"`` lines
do); then its blocks in page order in a fresh folder, with that virtualenv's Python and commands
first on PATH and nothing of this environment. Prints a line per block and a summary; exits 1 if
a block failed.

    python -m tests.docs_in_venvs                       # every page
    python -m tests.docs_in_venvs README.md docs/cli.md # some
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _pytest.outcomes import Failed, Skipped

from tests import markdown_blocks
from tests.markdown_blocks import ROOT, collect, page_extras, run_block
from tests.test_docs_examples import pages


def _runnable(block):
    return not ({"skip", "copy"} & set(block.directives))


def install(venv, extras):
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True, capture_output=True)
    # The page's extras that pyproject declares (".[X]" in prose is a placeholder).
    extras = [e for e in extras if e in markdown_blocks.declared_extras()]
    target = f"{ROOT}[{','.join(extras)}]" if extras else str(ROOT)
    subprocess.run([*pip, "install", target], check=True, capture_output=True)


def run_page(page, out):
    blocks = collect((ROOT / page).read_text(), page)
    if not any(_runnable(b) for b in blocks):
        return []
    extras = page_extras((ROOT / page).read_text())
    results = []
    with tempfile.TemporaryDirectory(prefix="vecenv-docs-venv-") as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        install(tmp / "venv", extras)
        print(f"{page}: venv with [{','.join(extras)}] in {time.perf_counter() - start:.0f} s",
              file=out, flush=True)  # fmt: skip
        markdown_blocks.VENV = tmp / "venv"
        folder = tmp / "work"
        folder.mkdir()
        for block in blocks:
            try:
                run_block(block, lambda b: folder)
                verdict = "ok"
            except Skipped as e:
                verdict = f"skipped: {e.msg}"
            except (Failed, AssertionError, subprocess.TimeoutExpired) as e:
                verdict = f"FAILED: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
            results.append((block.id, verdict))
            print(f"  {block.id}: {verdict}", file=out, flush=True)
        markdown_blocks.VENV = None
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help="pages (default: README.md and docs/)")
    args = parser.parse_args(argv)
    chosen = args.pages or ["README.md", *pages()]
    failed = []
    for page in chosen:
        failed += [r for r in run_page(page, sys.stdout) if r[1].startswith("FAILED")]
    print(f"{len(failed)} block(s) failed" + "".join(f"\n  {i}: {v}" for i, v in failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
