"""The reference part of the site, made at build time so that it cannot drift from the code:

- an API page per public module of vecenv (and of ``vecenv.kernels``), rendered by mkdocstrings
  from the sources (griffe reads them without importing, so the modules that need Ray, CUDA or
  PyTorch are documented where those are not installed), added to the nav's Reference section;
- the command line reference (every ``vecenv`` command and its flags), read from the argparse
  parser the command line itself runs, in place of the ``<!-- cli-reference -->`` line of
  ``reference/cli.md``;
- each game's own page (``games/<game>.md``) in the nav's Games section, so a new game's page
  needs no nav entry.
"""

import argparse
import re
from pathlib import Path

from mkdocs.structure.files import File, InclusionLevel

# Private helpers of mkdocs' nav, the ones get_navigation itself uses for the links between pages.
from mkdocs.structure.nav import (
    Section,
    _add_parent_links,
    _add_previous_and_next_links,
    _get_by_type,
)
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
API_DIR = "reference/api"
CLI_MARKER = "<!-- cli-reference -->"
# Where each folder of sources is imported from: kernels/ installs as vecenv.kernels (setup.py).
PACKAGES = {"vecenv": ROOT / "vecenv", "vecenv.kernels": ROOT / "kernels"}
# Not public: ``python -m vecenv``'s entry (the command line's reference covers it).
PRIVATE = {"vecenv.__main__"}


def public_modules():
    """The dotted names of the public modules and packages one level under each package of
    ``PACKAGES``, in order: the package itself first."""
    names = []
    for package, folder in PACKAGES.items():
        names.append(package)
        children = []
        for path in folder.iterdir():
            name = path.stem if path.suffix == ".py" else path.name
            is_module = path.suffix == ".py" and path.stem != "__init__"
            is_package = path.is_dir() and (path / "__init__.py").is_file()
            if (is_module or is_package) and not name.startswith("_"):
                children.append(f"{package}.{name}")
        names += sorted(n for n in children if n not in PACKAGES and n not in PRIVATE)
    return names


def api_page(module):
    """The markdown of ``module``'s API page: its docstrings, and its submodules' for a package
    (the top-level packages list their modules as pages of their own instead)."""
    submodules = "false" if module in PACKAGES else "true"
    options = f"heading_level: 1\n      show_submodules: {submodules}"
    return f"::: {module}\n    options:\n      {options}\n"


def api_uri(module):
    return f"{API_DIR}/{module}.md"


def on_files(files, config):
    # Pages this hook places in the nav itself: no "not in the nav" warning for them.
    for module in public_modules():
        files.append(
            File.generated(
                config,
                api_uri(module),
                content=api_page(module),
                inclusion=InclusionLevel.NOT_IN_NAV,
            )
        )
    for file in files.documentation_pages():
        if _is_game_page(file.src_uri):
            file.inclusion = InclusionLevel.NOT_IN_NAV
    return files


def _is_game_page(uri):
    return uri.startswith("games/") and uri.count("/") == 1 and uri != "games/index.md"


def _section(nav, title):
    for item in nav.items:
        if isinstance(item, Section) and item.title == title:
            return item
    raise LookupError(f"mkdocs.yml's nav has no section {title!r}")


def on_nav(nav, config, files):
    listed = {page.file.src_uri for page in nav.pages}
    api = []
    for module in public_modules():
        page = files.get_file_from_path(api_uri(module)).page
        page.title = module
        api.append(page)
    _section(nav, "Reference").children.append(Section("API", api))
    games = sorted(
        (f for f in files.documentation_pages() if _is_game_page(f.src_uri)),
        key=lambda f: f.src_uri,
    )
    _section(nav, "Games").children.extend(f.page for f in games if f.src_uri not in listed)
    # The links the nav gives every page (parent, previous, next), now with the pages added.
    _add_parent_links(nav.items)
    nav.pages = _get_by_type(nav.items, Page)
    _add_previous_and_next_links(nav.pages)
    return nav


# -- the command line ---------------------------------------------------------------------------


def _subcommands(parser):
    """[(name, help, subparser)] of ``parser``'s subcommands, in the order ``--help`` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            return [(name, helps.get(name), sub) for name, sub in action.choices.items()]
    return []


def _cell(text):
    return re.sub(r"\s+", " ", text or "").replace("|", "\\|").strip()


def _options(parser):
    """The markdown table of ``parser``'s arguments (help texts with argparse's %-expansions)."""
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                name += f" `{formatter._format_args(action, action.dest.upper())}`"
        else:
            name = f"`{formatter._format_args(action, action.dest)}`"
        text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {name} | {_cell(text)} |")
    if not rows:
        return ""
    return "| argument | what it does |\n|---|---|\n" + "\n".join(rows) + "\n"


def _command(parser, path, help_text, depth, out):
    title = " ".join(path)
    anchor = "-".join(path)
    out.append(f"{'#' * depth} `{title}` {{#{anchor}}}\n")
    about = parser.description or help_text
    if about:
        out.append(_cell(about) + "\n")
    usage = parser.format_usage().strip()
    usage = re.sub(r"^usage: ", "", usage)
    out.append(f"```text\n{usage}\n```\n")
    table = _options(parser)
    if table:
        out.append(table)
    for name, sub_help, sub in _subcommands(parser):
        _command(sub, [*path, name], sub_help, min(depth + 1, 4), out)


def cli_reference():
    """Markdown for every ``vecenv`` command, from the parser ``vecenv`` runs."""
    from vecenv.cli import build_parser

    parser = build_parser()
    out = []
    for name, help_text, sub in _subcommands(parser):
        _command(sub, ["vecenv", name], help_text, 2, out)
    return "\n".join(out)


def on_page_markdown(markdown, page, config, files):
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown
