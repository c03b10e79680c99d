"""Compiles a game's batch drivers from the templates ``drivers.py`` and ``search_drivers.py``.

numba cannot cache a driver made by a closure over the rules (the pickled closure differs in every
process, so each start recompiles). Instead each game gets a generated copy of a template whose
binding block imports that game's rules; numba caches it like any module. The file name carries a
hash of the template, the rules' source and the numba version, so editing any of them makes a new
file (and a fresh compile) instead of reusing stale machine code. The engine's drivers are one
copy; the search's (``search_drivers.py``, loaded only by a search) another.

Under ``precision="float32"`` a game that declares ``PRECISION`` gets its drivers bound to a
float32 copy of its rules instead, written beside them (``precision.py`` says how it is made).
"""

import functools
import hashlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import numba

from . import cache, drivers, precision, search_drivers

_BEGIN = "# >>> bindings\n"
_END = "# <<< bindings\n"
_PARALLEL_BEGIN = "# >>> parallel variants\n"
_PARALLEL_END = "# <<< parallel variants\n"
# Each template: its module, the functions of its parallel block, the generated modules' prefix.
_TEMPLATES = {
    "drivers": (drivers, ("step", "act_agents"), "vecenv_drivers_"),
    # The search runs its threads itself (each on a range of trees, ``nogil``): no variants.
    "search": (search_drivers, (), "vecenv_drivers_search_"),
}


# What the parallel block calls that runs the rules: (the rules' functions it runs, its
# arguments). ``_begin`` (the drivers' own, inline) runs ``reset`` and ``observe``.
_CALLED = {
    "game_step": (("step",), "s, cfg, actions, rewards"),
    "game_observe": (("observe",), "s, cfg, obs, i"),
    "game_observe_step": (("observe_step",), "s, cfg, obs, i"),
    "_begin": (("reset", "observe"), "s, cfg, obs, i"),
}


def _called(rules_module):
    """Wrappers compiled as plain calls of what in ``_CALLED`` runs a rules function the game
    compiles inline (``inline="always"``), for the parallel variant: numba's parallel loops drop
    writes inlined into their body through a borrowed array (``kernels.views.borrowed``), such
    as a step's rewards, while writes inside a call stay. The serial drivers keep them inlined."""

    def inlined(name):
        function = getattr(rules_module, name, None)
        if function is None and name == "observe_step":
            function = rules_module.observe  # bound in its place (``driver_source``)
        return getattr(function, "targetoptions", {}).get("inline") == "always"

    wrappers = {}
    for binding, (names, args) in _CALLED.items():
        if any(inlined(name) for name in names):
            wrappers[binding] = (
                '@nb.njit(cache=True, error_model="numpy")\n'
                f"def {binding}_called({args}):\n"
                f"    return {binding}({args})\n\n\n"
            )
    return wrappers


def _parallel_variant(template, names, called=None):
    """The functions of the template's parallel block, rewritten as ``<name>_parallel``: the same
    bodies, compiled with ``parallel=True``, with ``nb.prange`` on the loops marked "parallel"
    (none for a template without the block); what ``called`` names (from ``_called``) called
    through its wrapper, which comes first."""
    if _PARALLEL_BEGIN not in template:
        return ""
    called = called or {}
    block = template.split(_PARALLEL_BEGIN, 1)[1].split(_PARALLEL_END, 1)[0]
    block = block.replace('error_model="numpy")', 'error_model="numpy", parallel=True)')
    for name in names:
        assert block.count(f"def {name}(") == 1
        block = re.sub(rf"\b{name}\(", f"{name}_parallel(", block)
    for binding in called:
        block = re.sub(rf"\b{binding}\(", f"{binding}_called(", block)
    block = "".join(called.values()) + block
    lines = []
    for line in block.splitlines(keepends=True):
        if line.rstrip().endswith("# parallel"):
            assert " in range(" in line
            line = line.replace(" in range(", " in nb.prange(")
        lines.append(line)
    return "".join(lines)


def cache_dir():
    """Where generated drivers (and numba's cache of them) live: ``drivers/`` in vecenv's cache
    folder (``vecenv.kernels.cache``)."""
    return cache.folder("drivers")


def _agents_module(rules_module):
    """The game's built-in agents (``agents.py`` beside its rules), or None."""
    name = rules_module.__name__.rsplit(".", 1)[0] + ".agents"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None
        raise


def driver_source(rules_module, action_discrete, kind="drivers", copies=None, constants=()):
    """The ``kind`` template bound to ``rules_module`` (or, where ``copies`` maps its name, and
    its agents', to other modules: their float32 copies); ``constants``, (name, value) pairs,
    set more names of the binding block (the search's ``ONE_AGENT`` and ``CHANCE``)."""
    copies = copies or {}
    module, parallel_names, _ = _TEMPLATES[kind]
    template = inspect.getsource(module)
    head, rest = template.split(_BEGIN, 1)
    _, tail = rest.split(_END, 1)
    name = copies.get(rules_module.__name__, rules_module.__name__)
    bindings = (
        f"import {name} as game_rules\n"
        f"from {name} import reset as game_reset, step as game_step, observe as game_observe\n"
        f"ACTION_DISCRETE = {bool(action_discrete)}\n"
    )
    kind_of_action = "discrete" if action_discrete else "continuous"
    for check in ("count_bad", "first_bad"):
        noun = "actions" if check == "count_bad" else "action"
        bindings += (
            f"from vecenv.kernels.actions import {check}_{kind_of_action} as {check}_{noun}\n"
        )
    bindings += "".join(f"{constant} = {value!r}\n" for constant, value in constants)
    step_observe = "observe_step" if hasattr(rules_module, "observe_step") else "observe"
    bindings += f"from {name} import {step_observe} as game_observe_step\n"
    agents = _agents_module(rules_module)
    if agents is not None:
        agents_name = copies.get(agents.__name__, agents.__name__)
        bindings += f"from {agents_name} import act as game_act\n"
    else:
        bindings += "game_act = None\n"
    return (
        f"# Generated from vecenv/kernels/{Path(module.__file__).name} for {name}; do not edit.\n"
        + head
        + _BEGIN
        + bindings
        + _END
        + tail
        + "\n\n"
        + _parallel_variant(template, parallel_names, _called(rules_module))
    )


def _inlined_sources(module, prefixes, found=None):
    """The files of ``module`` and of every module under ``prefixes`` (vecenv's, the game's own
    package) that it imports, directly or not."""
    found = set() if found is None else found
    path = getattr(module, "__file__", None)
    if path is None or path in found:
        return found
    found.add(path)
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", "")
        if isinstance(name, str) and name.startswith(prefixes) and name in sys.modules:
            _inlined_sources(sys.modules[name], prefixes, found)
    return found


@functools.cache
def load_drivers(
    game, rules_module, action_discrete, kind="drivers", precision_name=None, constants=()
):
    """Import (writing it first if needed) the generated driver module of ``game`` (``kind``
    "drivers", the engine's, or "search", the search's); once per process, so making more
    engines of a game neither re-reads nor re-hashes its sources. ``game_rules`` in it is the
    rules module it runs: ``rules_module``, or under ``"float32"`` the float32 copy of a game
    that declares ``PRECISION``. ``constants``: see ``driver_source``."""
    precision_name = precision.DEFAULT if precision_name is None else precision_name
    precision.check(precision_name)
    narrow = precision_name != precision.DEFAULT and bool(precision.declared(rules_module))
    source = driver_source(rules_module, action_discrete, kind, constants=constants)
    digest = hashlib.sha256((source + numba.__version__ + precision_name * narrow).encode())
    # The rules inline code from every module they import: any edit there must give a new
    # module, or numba would keep serving machine code compiled from the old source.
    # (Imported constants leave no trace of their module, so the whole core is always included.)
    core = {str(p) for p in Path(__file__).parent.glob("*.py")}
    # A game outside vecenv (its package named anything) counts its own modules as vecenv's.
    prefixes = ("vecenv.", rules_module.__name__.rsplit(".", 1)[0] + ".")
    sources = _inlined_sources(rules_module, prefixes)
    agents = _agents_module(rules_module)
    if agents is not None:
        sources |= _inlined_sources(agents, prefixes)
    # Constants a game imports from its own modules leave no trace either: its whole folder.
    sources |= {str(p) for p in Path(rules_module.__file__).parent.rglob("*.py")}
    # The files' contents, not their paths: the same sources installed elsewhere (an editable
    # install and a wheel, another virtualenv) make the same module and reuse its machine code.
    for text in sorted(Path(path).read_bytes() for path in sources | core):
        digest.update(hashlib.sha256(text).digest())
    modname = f"{_TEMPLATES[kind][2]}{game}_{digest.hexdigest()[:16]}"
    path = cache_dir() / f"{modname}.py"
    copies = {}
    if narrow:
        # The float32 copies of the rules and of every game module they import (a game's, not
        # the kernels'), dependencies first; their names carry the drivers' digest, which covers
        # all their sources.
        games = ("vecenv.envs.", prefixes[1])
        originals = precision.module_names(rules_module, games)
        if agents is not None:
            originals += [m for m in precision.module_names(agents, games) if m not in originals]
        copies = {m: f"{modname}_f32_{k}" for k, m in enumerate(originals)}
        source = driver_source(rules_module, action_discrete, kind, copies, constants)
    texts = {path: source}
    for original, copy in copies.items():
        texts[cache_dir() / f"{copy}.py"] = precision.rewrite(
            importlib.import_module(original), copies
        )
    # numba's entries of the rules and kernels need no flushing when a source changes: their
    # stamp covers every file they may have inlined (``cache.source_stamp``).
    for target, text in texts.items():
        if not _holds(target, text):
            _write(target, text)
    for copy in copies.values():
        _import(copy, cache_dir() / f"{copy}.py")
    return _import(modname, path)


def _holds(path, text):
    """Whether the generated module ``path`` holds ``text``: a missing file is written, and a
    damaged one (truncated, garbled: it would fail to import on every run) written again, with a
    warning. Cheaper than a failed import: a comparison of a few tens of kilobytes."""
    try:
        held = path.read_text()
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError) as e:
        held = e
    if held == text:
        return True
    reason = held if isinstance(held, Exception) else ValueError("it differs from its source")
    cache._report_damage(str(path), reason)
    return False


def _write(path, text):
    # Atomically: several processes may build the same game at once.
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _import(modname, path):
    if modname in sys.modules:
        return sys.modules[modname]
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    # numba's cache re-imports the module by name when it loads a cached entry.
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module
