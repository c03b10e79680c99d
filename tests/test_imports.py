"""vecenv's import graph: its layers read bottom-up, no import points up, and none forms a cycle.

The graph is read from the sources with ``ast``: every import statement, at module level or inside
a function, is an edge from its module to the vecenv module it names (``from package import name``
names the submodule ``package.name`` where there is one), and so is ``importlib.import_module``
called with a vecenv module's name written out. The folders map as installed: ``vecenv/``,
``kernels/`` as ``vecenv.kernels`` and ``envs/`` as ``vecenv.envs``.

``LAYERS`` declares the layers (docs/design.md draws them): a module may import its own layer and
the layers below. The one way up is ``vecenv.variants``, where a face finds the Ray or GPU variant
of what it makes: the package offering it registers it there, and ``variants.find`` imports that
package by the name in ``variants.PACKAGES`` (no import statement). ``python tests/test_imports.py``
prints the layers and every import that breaks the rule.
"""

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "vecenv": ROOT / "vecenv",
    "vecenv.kernels": ROOT / "kernels",
    "vecenv.envs": ROOT / "envs",
}

# Bottom-up. An entry names a module and everything under it; "vecenv" is the package's own
# ``__init__`` only (``vecenv.make``, which registers the Gymnasium ids on import: a face).
LAYERS = (
    ("kernels", ("vecenv.kernels", "vecenv.render", "vecenv.extras")),
    ("games", ("vecenv.envs",)),
    (
        "engine",
        (
            "vecenv.engine",
            "vecenv.inputs",
            "vecenv.records",
            "vecenv.dispatch",
            "vecenv.registry",
            "vecenv.protocol",
            "vecenv.spec",
            "vecenv.positions",
            "vecenv.memory",
            "vecenv.search",
            "vecenv.search_checks",
            "vecenv.seats",
            "vecenv.opponent",
            "vecenv.stats",
            "vecenv.variants",
            "vecenv.threads",
        ),
    ),
    (
        "faces",
        (
            "vecenv",
            "vecenv.gym",
            "vecenv.kaggle",
            "vecenv.csuite",
            "vecenv.csuite_dm",
            "vecenv.aisys",
            "vecenv.pettingzoo",
            "vecenv.sb3",
            "vecenv.pufferlib",
        ),
    ),
    (
        "scale and play",
        (
            "vecenv.warm",
            "vecenv.ray",
            "vecenv.cuda",
            "vecenv.selfplay",
            "vecenv.tournament",
            "vecenv.ppo",
            "vecenv.alphazero",
            "vecenv.checkpoints",
            "vecenv.arena",
            "vecenv.testing",
            "vecenv.guarded_check",
            "vecenv.scaffold",
            "vecenv.perf",
        ),
    ),
    ("cli", ("vecenv.cli", "vecenv.__main__")),
)


def modules(root=ROOT):
    """{module name: (path, is a package)} of every vecenv source file under ``root``."""
    folders = {prefix: root / folder.relative_to(ROOT) for prefix, folder in FOLDERS.items()}
    found = {}
    for prefix, folder in folders.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts = parts[:-1]
            name = ".".join([prefix, *parts])
            if name not in found or path.parent == folder:
                found[name] = (path, package)
    return found


def _is_import_module(call):
    func = call.func
    named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return named in ("import_module", "__import__") and call.args


def statements(name, source, package, known):
    """(vecenv module imported, line, enclosing function or class) for each import of ``source``,
    the source of module ``name``."""
    base = name if package else name.rsplit(".", 1)[0]
    found = []

    def visit(node, scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope = f"{scope}.{node.name}" if scope else node.name
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                module = ".".join(anchor + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        elif isinstance(node, ast.Call) and _is_import_module(node):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                targets = [first.value]
        for target in targets:
            # ``import vecenv.kernels.state.X``-like names: the longest known module they name
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            entry = (target, node.lineno, scope or "module level")
            if target in known and target != name and entry not in found:
                found.append(entry)
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(source), "")
    return found


@functools.cache
def all_statements(root=ROOT):
    """{module: its ``statements``} of every vecenv module under ``root``."""
    known = modules(root)
    return {
        name: statements(name, path.read_text(encoding="utf-8"), package, known)
        for name, (path, package) in known.items()
    }


def graph(root=ROOT):
    """{module: the vecenv modules it imports}."""
    return {name: {t for t, _, _ in found} for name, found in all_statements(root).items()}


def layer_of(module):
    """The index in ``LAYERS`` of the layer that holds ``module`` (None where none does)."""
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or (member != "vecenv" and module.startswith(member + ".")):
                return index
    return None


def upward(root=ROOT):
    """Every import that points to a higher layer, as readable lines."""
    known = modules(root)
    found = []
    for name, imported in sorted(all_statements(root).items()):
        for target, line, scope in imported:
            mine, theirs = layer_of(name), layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                found.append(
                    f"{name} ({LAYERS[mine][0]}) imports {target} ({LAYERS[theirs][0]}) "
                    f"at {known[name][0].relative_to(root)}:{line}, {scope}"
                )
    return found


def find_cycle(edges):
    """One cycle of ``edges`` as a list of modules, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def test_the_graph_sees_the_package():
    edges = graph()
    assert "vecenv.cli" in edges and "vecenv.kernels.turns" in edges
    assert "vecenv.envs.connectx.rules" in edges
    assert "vecenv.kernels.turns" in edges["vecenv.envs.connectx.rules"]
    assert (
        "vecenv.engine" in edges["vecenv.positions"] or "vecenv.spec" in edges["vecenv.positions"]
    )


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_vecenv_has_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def packages(edges):
    """``edges`` between packages: each module counted as its top package under vecenv
    (``vecenv.gym``, ``vecenv.envs``), the package's own ``__init__`` as ``vecenv``."""

    def package(module):
        return ".".join(module.split(".")[:2])

    out = {}
    for module, targets in edges.items():
        mine = package(module)
        out.setdefault(mine, set()).update(package(t) for t in targets if package(t) != mine)
    return out


def test_no_import_cycle_between_packages():
    """A package's modules may import each other freely; packages import each other one way."""
    cycle = find_cycle(packages(graph()))
    assert cycle is None, "packages import each other: " + " -> ".join(cycle)


def test_every_module_has_a_layer():
    """A new module is placed in ``LAYERS`` (and docs/design.md) on purpose, not by default."""
    unplaced = sorted(m for m in modules() if layer_of(m) is None)
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_import_points_up():
    found = upward()
    assert not found, "imports that point up:\n" + "\n".join(found)


def test_the_statements_include_imports_inside_functions_and_by_name():
    source = (
        "import importlib\n"
        "from vecenv import engine\n"
        "def make(device):\n"
        "    from vecenv.cuda.engine import CudaEngine\n"
        "    return importlib.import_module('vecenv.ray')\n"
        "class Env:\n"
        "    def step(self):\n"
        "        from ..selfplay import play\n"
    )
    known = {"vecenv.engine", "vecenv.cuda", "vecenv.cuda.engine", "vecenv.ray", "vecenv.selfplay"}
    found = statements("vecenv.gym.vector", source, False, known)
    assert found == [
        ("vecenv.engine", 2, "module level"),
        ("vecenv.cuda.engine", 4, "make"),
        ("vecenv.ray", 5, "make"),
        ("vecenv.selfplay", 8, "Env.step"),
    ]
    layers = [layer_of(t) for t, _, _ in found]
    assert layers[0] < layer_of("vecenv.gym.vector") < min(layers[1:])


def test_the_layers_read_bottom_up():
    assert layer_of("vecenv.kernels.rng") < layer_of("vecenv.envs.cartpole.rules")
    assert layer_of("vecenv.envs.cartpole.rules") < layer_of("vecenv.engine")
    assert layer_of("vecenv.engine") < layer_of("vecenv") == layer_of("vecenv.gym.vector")
    assert layer_of("vecenv.gym.vector") < layer_of("vecenv.ray.vector") == layer_of("vecenv.cuda")
    assert layer_of("vecenv.ray") < layer_of("vecenv.cli.play")
    # "vecenv" is the package's own module, not a prefix of every module.
    assert layer_of("vecenv.no_such_module") is None


def test_the_way_up_names_packages_above_the_faces():
    """``vecenv.variants`` imports, by name, only modules of the layer above the faces."""
    from vecenv import variants

    faces = next(i for i, (layer, _) in enumerate(LAYERS) if layer == "faces")
    known = modules()
    assert variants.PACKAGES
    for package in variants.PACKAGES.values():
        assert package in known, package
        assert layer_of(package) == faces + 1, package


def test_the_design_page_draws_these_layers():
    """docs/design.md's diagram names each layer's modules as ``LAYERS`` does (``name/`` for a
    package, ``vecenv`` for the package's own module)."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    (diagram,) = re.findall(r"```mermaid\n(.*?)```", text, re.S)
    drawn = {}
    for layer, names in re.findall(r'\["<b>(.+?)</b><br/>(.+?)"\]', diagram):
        drawn[layer] = {
            name if name == "vecenv" else "vecenv." + name.rstrip("/")
            for name in re.split(r" · |<br/>", names)
        }
    assert drawn == {layer: set(members) for layer, members in LAYERS}


if __name__ == "__main__":  # the map: each layer's modules and every import that breaks the rule
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    known = modules(root)
    for index, (layer, _) in enumerate(LAYERS):
        members = sorted(m for m in known if layer_of(m) == index)
        print(f"{index} {layer}: {' '.join(members)}")
    print("in no layer:", " ".join(sorted(m for m in known if layer_of(m) is None)) or "none")
    print("\n".join(upward(root)) or "no import points up")
    for what, edges in (("modules", graph(root)), ("packages", packages(graph(root)))):
        cycle = find_cycle(edges)
        print(f"cycle of {what}: " + " -> ".join(cycle) if cycle else f"no cycle of {what}")
