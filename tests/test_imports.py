"""No import cycles between vecenv's modules.

The graph is read from the sources with ``ast``: every import statement, at module level or inside
a function, is an edge from its module to the vecenv module it names (``from package import name``
names the submodule ``package.name`` where there is one). The folders map as installed: ``vecenv/``,
``kernels/`` as ``vecenv.kernels`` and ``envs/`` as ``vecenv.envs``.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "vecenv": ROOT / "vecenv",
    "vecenv.kernels": ROOT / "kernels",
    "vecenv.envs": ROOT / "envs",
}


def modules():
    """{module name: (path, is a package)} of every vecenv source file."""
    found = {}
    for prefix, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            package = parts[-1] == "__init__"
            if package:
                parts = parts[:-1]
            name = ".".join([prefix, *parts])
            if name not in found or path.parent == folder:
                found[name] = (path, package)
    return found


def imports(name, path, package, known):
    """The vecenv modules the file imports."""
    base = name if package else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def graph():
    known = modules()
    return {name: imports(name, path, package, known) for name, (path, package) in known.items()}


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


def test_faces_never_import_the_command_line():
    edges = graph()
    for module, targets in edges.items():
        if not module.startswith(("vecenv.cli", "vecenv.__main__")):
            assert not any(t.startswith("vecenv.cli") for t in targets), module
