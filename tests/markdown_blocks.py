"""The examples of README.md and of the site's pages (docs/) run as written: every python, pycon,
bash and console block, each in a fresh process, in a fresh temporary folder per page (its blocks
share it, in page order, so a later block finds what an earlier one wrote), and with only the
packages that the page's extras bring: a page that says ``pip install ".[train]"`` (anywhere: in a
block or in its text) may use PyTorch, one that names no extra only vecenv's core (numpy, numba,
gymnasium, dm-env and what they need), as in a fresh virtualenv holding those alone (see
``fence``; ``tests/docs_in_venvs.py`` runs the pages in real throwaway virtualenvs, their install
lines included). ``tests/test_readme.py`` runs README's, ``tests/test_docs_examples.py`` the pages'.

The blocks are collected by mktestdocs. An HTML comment on the line before a block directs it:
- ``<!-- skip: REASON -->``: not run (a GPU, a cluster, a server left running, the whole suite);
- ``<!-- requires: MODULE -->``: run where MODULE imports; skipped outside CI otherwise;
- ``<!-- continues -->``: a python block run after the python block before it, in one process;
- ``<!-- excerpt: PATH -->``: a python excerpt of PATH (from the repository's root): each code line
  (comments aside) must appear in PATH in the same order;
- ``<!-- exits: 0 1 -->``: a bash block whose exit status is a verdict on timings (a regression
  gate): any status listed passes; tests assert no timings. What it prints must still show it ran;
- ``<!-- copy: PATH -->``: the same block (language and code) is in PATH (README.md or a page),
  which runs it: here it is only checked to be the same, so an example shown in two places runs
  once.
``pip install ".[X]"`` and ``pip install -e ".[X]"`` lines are not run: the test checks instead
that every requirement of the extra X is satisfied where it runs (CI installs the test extra).
Any other ``pip install`` must be in a skipped block.

Console blocks: ``$ `` lines are run with bash; the lines after one are its expected output,
matched line by line with every number free (run-dependent figures: the text says whose) and runs
of spaces free; a ``...`` line stands for any number of lines.
"""

import contextlib
import functools
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mktestdocs import grab_code_blocks
from packaging.requirements import Requirement

from tests import fences
from tests.raycluster import one_ray_at_a_time

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("python", "pycon", "bash", "console")
DIRECTIVE = re.compile(
    r"<!--\s*(skip|requires|continues|excerpt|exits|copy)\s*(?::\s*(.*?))?\s*-->"
)
PIP_EXTRA = re.compile(r'^pip install (?:-e )?"\.\[([\w,-]+)\]"\s*(?:#.*)?$')
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
TIMEOUT = 300
# Runs the doctest read from stdin; fails on a failed example or on none at all.
DOCTEST = """
import doctest, sys
test = doctest.DocTestParser().get_doctest(sys.stdin.read(), {}, "example", "example.md", 0)
flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
runner = doctest.DocTestRunner(optionflags=flags)
runner.run(test)
sys.exit(1 if runner.failures or not test.examples else 0)
"""


@dataclass
class Block:
    lang: str
    code: str
    line: int
    section: str
    index: int  # among the section's blocks
    directives: dict = field(default_factory=dict)
    before: list = field(default_factory=list)  # python blocks it continues
    page: str = "README.md"  # the file, from the repository's root

    @property
    def id(self):
        return f"{self.page}:L{self.line}-{self.lang}-{self.section[:24]}"

    @property
    def where(self):
        return f"{self.page} line {self.line} ({self.lang})"


def collect(text, page="README.md"):
    """The page's blocks in order, each with its section (the ``## `` heading above it, "(top)"
    before the first) and the directives on the lines just above it."""
    blocks = []
    for lang in LANGS:
        start = 0
        for code in grab_code_blocks(text, lang=lang):
            at = text.index(f"```{lang}\n{code}```", start)
            start = at + 1
            blocks.append((at, lang, code))
    blocks.sort()
    out, counts, previous_python = [], {}, None
    for at, lang, code in blocks:
        head = text[:at]
        sections = re.findall(r"^## (.+)$", head, flags=re.M)
        section = sections[-1] if sections else "(top)"
        directives = {}
        for line in reversed(head.rstrip("\n").split("\n")):
            match = DIRECTIVE.fullmatch(line.strip())
            if not match:
                break
            directives[match[1]] = match[2] or ""
        index = counts.get(section, 0)
        counts[section] = index + 1
        block = Block(lang, code, head.count("\n") + 1, section, index, directives, page=page)
        if "continues" in directives:
            assert previous_python is not None, f"{page} line {block.line}: nothing to continue"
            block.before = [*previous_python.before, previous_python.code]
        if lang == "python":
            previous_python = block
        out.append(block)
    return out


def folders_fixture(tmp_path_factory):
    """A fresh folder per page, made on first use: the page's blocks share it, in page order, so
    a later block finds what an earlier one wrote (and two pages never see each other's)."""
    made = {}

    def folder(block):
        if block.page not in made:
            name = re.sub(r"\W+", "_", Path(block.page).stem)
            made[block.page] = tmp_path_factory.mktemp(name[:40])
        return made[block.page]

    return folder


# -- the fence: a page's blocks see only what its extras install ----------------------------------

EXTRA_NAMED = re.compile(r'pip install (?:-e )?"\.\[([\w,-]+)\]"')


@functools.cache
def declared_extras():
    return set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )


def page_extras(text):
    """The extras a page names in ``pip install ".[X]"`` lines or text."""
    return sorted({e for found in EXTRA_NAMED.findall(text) for e in found.split(",")})


def _requirements(lines, extras=()):
    """``(distribution, its extras asked for)`` of each of ``lines`` (requirement strings) that
    applies here, markers evaluated with each of ``extras`` (and with none)."""
    found = set()
    for line in lines:
        requirement = Requirement(line)
        marker = requirement.marker
        if marker is None or any(marker.evaluate({"extra": e}) for e in ("", *extras)):
            found.add((canonical(requirement.name), tuple(sorted(requirement.extras))))
    return found


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(items):
    """The distributions of ``items`` (``(name, extras)``) and all they need, as installed."""
    todo, done = list(items), set()
    while todo:
        item = todo.pop()
        if item in done:
            continue
        done.add(item)
        name, asked = item
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):  # not installed
            todo += _requirements(importlib.metadata.requires(name) or [], asked)
    return {name for name, _ in done}


def allowed_distributions(extras):
    """vecenv's core and ``extras`` (from this tree's pyproject.toml), with everything they need
    as installed here, transitively."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"].get(extra, [])  # ".[X]": a placeholder
    return _closure(_requirements(lines))


def requires_distributions(module):
    """The distributions a ``requires: MODULE`` block may use: MODULE's and what it needs."""
    distributions = importlib.metadata.packages_distributions().get(module, [])
    return _closure((canonical(d), ()) for d in distributions)


@functools.cache
def fence(extras, required=None):
    """The fence (JSON) of a page naming ``extras`` (and a block requiring module ``required``):
    every installed distribution they do not bring, and its top-level modules."""
    allowed = allowed_distributions(extras) | {"vecenv"}
    if required:
        allowed |= requires_distributions(required)
    blocked = {
        canonical(d.metadata["Name"] or "") for d in importlib.metadata.distributions()
    } - allowed
    modules = set()
    for module, distributions in importlib.metadata.packages_distributions().items():
        if not module.isidentifier() or module in sys.stdlib_module_names:
            continue
        if not {canonical(d) for d in distributions} & allowed:
            modules.add(module)
    return fences.encode(modules, blocked)


@functools.cache
def _page_text(page):
    return (ROOT / page).read_text()


# Where the blocks run: this environment behind its fence (the suite), or a throwaway virtualenv
# of the page's own (tests/docs_in_venvs.py sets VENV).
VENV = None


def python():
    return str(VENV / "bin" / "python") if VENV else sys.executable


def environment(page=None, required=None):
    if VENV:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VECENV_FENCE")}
        env["PATH"] = os.pathsep.join([str(VENV / "bin"), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(VENV)
        env["MPLBACKEND"] = "Agg"
        return env
    env = dict(os.environ)
    paths = [str(ROOT), env.get("PYTHONPATH")]
    if page is not None:
        paths.insert(0, str(fences.folder()))
        env[fences.VARIABLE] = fence(tuple(page_extras(_page_text(page))), required)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


def run(argv, cwd, block=None, **kwargs):
    page, required = (block.page, block.directives.get("requires")) if block else (None, None)
    env = environment(page, required)
    if block is not None and starts_ray(block):
        # A plain ``ray.init()`` joins the Ray last recorded as current on the machine, which may
        # be another test run's cluster, whose shutdown then strands this block's calls until
        # they time out: the block starts a Ray of its own, as it does on a user's machine.
        env["RAY_ADDRESS"] = "local"
    try:
        return subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, **kwargs
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(
            f"{' '.join(map(str, argv))} ran past {TIMEOUT} s\n"
            + streams(_text(expired.stdout), _text(expired.stderr))
        )


def _text(output):
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def streams(stdout, stderr):
    """The last 4,000 characters of a block's output and of its errors, for a failure."""
    return f"--- stdout\n{stdout[-4000:]}\n--- stderr\n{stderr[-4000:]}"


def starts_ray(block):
    return re.search(r"\bray\b", block.code) is not None


def check_ran(done, what, exits=(0,)):
    assert done.returncode in exits, f"{what} exited {done.returncode}\n" + streams(
        done.stdout, done.stderr
    )


def unsatisfied(extra):
    """The requirements of pyproject's extra that the running environment does not satisfy."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert extra in project["optional-dependencies"], f"no extra {extra!r} in pyproject.toml"
    missing = []
    for line in project["optional-dependencies"][extra]:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(f"{line} (not installed)")
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            missing.append(f"{line} (installed: {version})")
    return missing


def without_installs(code):
    """The bash block's lines but its ``pip install ".[X]"`` ones, each checked as satisfied."""
    kept = []
    for line in code.splitlines():
        match = PIP_EXTRA.match(line.strip())
        if match:
            for extra in match[1].split(","):
                missing = unsatisfied(extra)
                assert not missing, f"{line}: not satisfied here: {missing}"
            continue
        assert not re.search(r"\bpip install\b", line.split("#")[0]), (
            f"{line!r} would install into the test environment: mark its block <!-- skip: ... -->"
        )
        kept.append(line)
    return "\n".join(kept) + "\n"


def strip_comment(line):
    return re.sub(r"\s+#.*$", "", line).rstrip()


def check_excerpt(block):
    source = [
        strip_comment(line)
        for line in (ROOT / block.directives["excerpt"]).read_text().splitlines()
    ]
    at = 0
    for line in block.code.splitlines():
        code = strip_comment(line)
        if not code.strip() or code.lstrip().startswith("#"):
            continue
        assert code in source[at:], (
            f"{block.where}: {code!r} is not in {block.directives['excerpt']} "
            "(after the lines before it)"
        )
        at = source.index(code, at) + 1


def expected_pattern(lines):
    """A regex for the console output ``lines``: numbers and runs of spaces free, ``...`` any
    lines."""
    parts = []
    for line in lines:
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
            continue
        pieces = []
        for i, text in enumerate(NUMBER.split(line.rstrip())):
            if i:
                pieces.append(r"[-+]?\d[\d,]*(?:\.\d+)?")
            pieces.append(r"\s+".join(re.escape(word) for word in re.split(r"\s+", text)))
        parts.append("".join(pieces) + r"[ \t]*\n")
    return re.compile("".join(parts))


def console_commands(code):
    """[(command, expected output lines)] of a console block."""
    commands = []
    for line in code.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands and (line.strip() or commands[-1][1]):
            commands[-1][1].append(line)
    for _, expected in commands:
        while expected and not expected[-1].strip():
            expected.pop()
    assert commands, "a console block without a $ command: mark it <!-- skip: ... -->"
    return commands


def check_copy(block):
    """A ``copy`` block: the same block (language and code) runs in the page it names."""
    source = block.directives["copy"]
    blocks = [b for b in collect((ROOT / source).read_text(), source) if b.lang == block.lang]
    same = [b for b in blocks if b.code == block.code]
    assert same, f"{block.where}: no such {block.lang} block in {source} (the copy has drifted)"
    assert not {"copy", "skip"} & set(same[0].directives), (
        f"{block.where}: its original in {source} is not run there either"
    )


def run_block(block, folders):
    """Run (or check) one block as its directives say: skip, copy, requires, excerpt, exits."""
    if "skip" in block.directives:
        pytest.skip(block.directives["skip"])
    if "copy" in block.directives:
        check_copy(block)
        return
    # A block that starts Ray waits for other test modules' Ray (tests/raycluster.py).
    with one_ray_at_a_time() if starts_ray(block) else contextlib.nullcontext():
        _run_block(block, folders)


def _run_block(block, folders):
    needed = block.directives.get("requires")
    if needed and importlib.util.find_spec(needed) is None:
        if os.environ.get("CI"):
            pytest.fail(f"{block.where} needs {needed}, not installed in CI")
        pytest.skip(f"needs {needed}, not installed")
    cwd = folders(block)
    where = block.where
    if "excerpt" in block.directives:
        check_excerpt(block)
    elif block.lang == "python":
        script = cwd / f"example_{block.line}.py"
        script.write_text("\n".join([*block.before, block.code]))
        check_ran(run([python(), script.name], cwd, block), where)
    elif block.lang == "pycon":
        check_ran(run([python(), "-c", DOCTEST], cwd, block, input=block.code), where)
    elif block.lang == "bash":
        code = without_installs(block.code)
        done = run(["bash", "-e", "-u", "-o", "pipefail", "-c", code], cwd, block)
        exits = tuple(int(x) for x in block.directives.get("exits", "0").split())
        check_ran(done, where, exits)
        if exits != (0,):
            assert done.stdout.strip(), f"{where}: printed nothing"
    else:
        for command, expected in console_commands(block.code):
            code = without_installs(command)
            done = run(["bash", "-e", "-u", "-o", "pipefail", "-c", code], cwd, block)
            check_ran(done, f"{where}: $ {command}")
            if expected:
                pattern = expected_pattern(expected)
                assert pattern.fullmatch(done.stdout), (
                    f"{where}: $ {command}\nprints:\n{done.stdout}\nthe page shows:\n"
                    + "\n".join(expected)
                )
