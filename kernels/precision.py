"""A game's rules in float32, from the same source as its float64 rules.

A game whose rules compute in floating point declares in ``rules.py`` which of its names follow the
engine's precision::

    PRECISION = ("x", "x_dot", "theta", "theta_dot", "GRAVITY", "TAU", ...)

each a float field of ``FIELDS``, a float constant of the module, or a number of the
configuration. Under ``precision="float64"`` (the default) nothing changes: the engine runs the
rules module itself, bit-exact with its reference. Under ``"float32"`` ``build.py`` writes a copy
of the rules' source (and of every module of a game it imports from, such as another game's
rules) rewritten by ``rewrite`` below, and compiles the drivers against that copy:

- the declared constants are rebound, at the end of the module, to their float64 values rounded
  once to float32, and the declared fields of ``FIELDS`` become float32 (the engine narrows the
  declared configuration numbers in the record it passes);
- inside every jitted function, a float literal, ``math.pi``-like constants and the casts
  ``np.float64(x)``/``float(x)`` become float32, and every arithmetic operator, comparison and
  two-argument ``min``/``max`` becomes a call of ``precision_ops``, which computes in float32
  wherever a float32 meets an integer or a float64 (numba would widen both to float64) and is the
  operator itself everywhere else;
- imports of ``npmath`` (NumPy-exact float64 helpers) take ``precision_ops``' float32 versions.

Why a rewritten copy and not a type the rules write their constants through: the rules keep
reading as the reference reads (the float64 game stays the one reviewed against it), nothing in a
game's code has to remember the other precision, and an operand the rules never thought of (an
integer literal in ``2 * x``) cannot silently widen a float32 step to float64. The copy is
generated like the drivers, and numba caches it like any module.
"""

import ast
import importlib
import inspect
import math
import sys

import numpy as np

PRECISIONS = ("float64", "float32")
DEFAULT = "float64"
OPS = "vecenv.kernels.precision_ops"
# The name the copy imports ``precision_ops`` under (chosen to clash with no game's names).
ALIAS = "_vecenv_float32"
# Modules a float32 copy imports a counterpart of, with the same names.
COUNTERPARTS = {"vecenv.kernels.npmath": OPS}

_BINARY = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow_",
}
_COMPARE = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_JIT_DECORATORS = {"njit", "jit", "register_jitable"}
_FLOAT_CONSTANTS = {"pi", "e", "tau", "inf", "nan"}  # of math and numpy, float64 attributes
_FLOAT_CASTS = {"float64", "double", "float_"}  # numpy's float64 casts, and ``float``


def check(precision):
    """``precision`` if it is one the engine knows, else ValueError."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    return precision


def declared(module):
    """The names ``module`` (a game's rules) declares as following the precision, or ()."""
    names = getattr(module, "PRECISION", ())
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"{module.__name__}.PRECISION must be a tuple of names, got {names!r}")
    return tuple(names)


def narrow_fields(fields, names):
    """``FIELDS`` (a list of ``(name, dtype[, shape])``, or a function of the configuration
    returning one) with the float fields named in ``names`` made float32."""
    if callable(fields):
        return lambda config: narrow_fields(fields(config), names)
    out = []
    for field in fields:
        name, dtype, *shape = field
        if name in names and np.dtype(dtype).kind == "f":
            dtype = np.float32
        out.append((name, dtype, *shape))
    return out


def narrow_record(record, names):
    """A copy of a one-element record array (the configuration) whose float fields named in
    ``names`` are float32 (values rounded once)."""
    dtype = np.dtype(
        [
            (n, np.float32 if n in names and record.dtype[n].kind == "f" else record.dtype[n])
            for n in record.dtype.names
        ],
        align=record.dtype.isalignedstruct,
    )
    out = np.zeros(record.shape, dtype=dtype)
    for n in record.dtype.names:
        out[n] = record[n]
    return out


def is_float_constant(value):
    return isinstance(value, (float, np.floating)) and not isinstance(value, bool)


def module_names(module, prefixes):
    """``module`` and every module under ``prefixes`` it imports from, dependencies first: the
    modules a float32 copy of it is made of."""
    order, seen = [], set()

    def visit(mod):
        if mod.__name__ in seen:
            return
        seen.add(mod.__name__)
        for target in _imported_modules(mod):
            if target.startswith(prefixes) and target not in COUNTERPARTS:
                visit(importlib.import_module(target))
        order.append(mod.__name__)

    visit(module)
    return order


def _imported_modules(module):
    """The absolute names of the modules ``module``'s source imports from."""
    tree = ast.parse(inspect.getsource(module))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            found.append(base)
            for alias in node.names:
                if f"{base}.{alias.name}" in sys.modules:
                    found.append(f"{base}.{alias.name}")  # ``from package import module``
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def _absolute(module, node):
    """The module an ``ImportFrom`` node of ``module`` names, made absolute."""
    if not node.level:
        return node.module
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    parts = package.split(".")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def rewrite(module, copies):
    """The source of ``module``'s float32 copy. ``copies`` maps the name of every module of the
    copy (``module_names``) to the name its own copy is imported under."""
    tree = ast.parse(inspect.getsource(module))
    names = declared(module)
    for name in names:
        if hasattr(module, name) and not is_float_constant(getattr(module, name)):
            raise ValueError(
                f"{module.__name__}.PRECISION names {name}, which is no float constant "
                f"({getattr(module, name)!r}); name float fields, constants and configuration"
            )
    namespace = vars(module)
    body = []
    for node in tree.body:
        found = _imports(module, node, copies)
        body.extend(found if isinstance(found, list) else [found])
    tree.body = body
    _Float32(namespace).visit(tree)
    head = ast.parse(f"from vecenv.kernels import precision_ops as {ALIAS}").body
    start = _after_future(tree.body)
    tree.body[start:start] = head
    epilogue = [f"{n} = {ALIAS}.FLOAT({n})" for n in names if hasattr(module, n)]
    if "FIELDS" in namespace:
        epilogue.insert(0, "from vecenv.kernels.precision import narrow_fields as _vecenv_fields")
        epilogue.append(f"FIELDS = _vecenv_fields(FIELDS, {names!r})")
    tree.body += ast.parse("\n".join(epilogue)).body
    ast.fix_missing_locations(tree)
    return (
        f"# Generated by vecenv/kernels/precision.py from {module.__name__} (float32); "
        "do not edit.\n" + ast.unparse(tree) + "\n"
    )


def _after_future(body):
    k = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        k = 1  # the docstring
    while k < len(body) and isinstance(body[k], ast.ImportFrom) and body[k].module == "__future__":
        k += 1
    return k


def _imports(module, node, copies):
    """A module-level import of ``module`` aimed at the float32 copies (and counterparts) of
    what it imports; relative imports made absolute (the copy lives in no package)."""
    if isinstance(node, ast.ImportFrom) and node.module != "__future__":
        base = _absolute(module, node)
        if base in COUNTERPARTS:
            counterpart = importlib.import_module(COUNTERPARTS[base])
            missing = [a.name for a in node.names if not hasattr(counterpart, a.name)]
            if missing:
                raise ValueError(
                    f"{module.__name__} imports {', '.join(missing)} from {base}, which has no "
                    f"float32 counterpart in {COUNTERPARTS[base]}"
                )
            return ast.ImportFrom(module=COUNTERPARTS[base], names=node.names, level=0)
        if base in copies:
            return ast.ImportFrom(module=copies[base], names=node.names, level=0)
        submodules = [a for a in node.names if f"{base}.{a.name}" in copies]
        if submodules:
            if len(submodules) != len(node.names):
                raise ValueError(f"{module.__name__}: import game modules on a line of their own")
            return [
                ast.Import(names=[ast.alias(copies[f"{base}.{a.name}"], a.asname or a.name)])
                for a in submodules
            ]
        return ast.ImportFrom(module=base, names=node.names, level=0)
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in copies or alias.name in COUNTERPARTS:
                raise ValueError(
                    f"{module.__name__}: `import {alias.name}` cannot follow the precision; "
                    f"use `from {alias.name} import ...`"
                )
    return node


class _Float32(ast.NodeTransformer):
    """Rewrites the bodies of jitted functions to compute in float32 (see the module)."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.depth = 0  # > 0 inside a jitted function

    def _is(self, node, module):
        return isinstance(node, ast.Name) and self.namespace.get(node.id) is module

    def _jitted(self, node):
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in _JIT_DECORATORS:
                return True
        return False

    def visit_FunctionDef(self, node):
        jitted = self._jitted(node)
        self.depth += jitted
        # The body only: defaults and decorators keep their own values.
        node.body = [self.visit(stmt) for stmt in node.body]
        node.body = [s for stmt in node.body for s in (stmt if isinstance(stmt, list) else [stmt])]
        self.depth -= jitted
        return node

    def _call(self, name, *args):
        return ast.Call(
            func=ast.Attribute(value=ast.Name(ALIAS, ast.Load()), attr=name, ctx=ast.Load()),
            args=list(args),
            keywords=[],
        )

    def visit_Constant(self, node):
        if self.depth and is_float_constant(node.value):
            return self._call("FLOAT", node)
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if (
            self.depth
            and isinstance(node.ctx, ast.Load)
            and node.attr in _FLOAT_CONSTANTS
            and (self._is(node.value, math) or self._is(node.value, np))
        ):
            return self._call("FLOAT", node)
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if self.depth and type(node.op) in _BINARY:
            return self._call(_BINARY[type(node.op)], node.left, node.right)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not self.depth or type(node.op) not in _BINARY:
            return node
        load = _as_load(node.target)
        value = self._call(_BINARY[type(node.op)], load, node.value)
        return ast.Assign(targets=[node.target], value=value)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if not self.depth or not all(type(op) in _COMPARE for op in node.ops):
            return node
        operands = [node.left, *node.comparators]
        # A chain ``a < b < c`` evaluates b once: only names and constants are repeated.
        middle = operands[1:-1]
        if not all(
            isinstance(m, (ast.Name, ast.Constant, ast.Attribute, ast.Call)) for m in middle
        ):
            return node
        if any(isinstance(m, ast.Call) and not _is_cast(m) for m in middle):
            return node
        pairs = [
            self._call(_COMPARE[type(op)], operands[k], operands[k + 1])
            for k, op in enumerate(node.ops)
        ]
        return pairs[0] if len(pairs) == 1 else ast.BoolOp(op=ast.And(), values=pairs)

    def visit_Call(self, node):
        self.generic_visit(node)
        if not self.depth or node.keywords:
            return node
        func = node.func
        builtin = isinstance(func, ast.Name) and func.id not in self.namespace
        if builtin and func.id in ("min", "max") and len(node.args) == 2:
            return self._call(func.id + "2", *node.args)
        cast = (
            isinstance(func, ast.Attribute)
            and func.attr in _FLOAT_CASTS
            and self._is(func.value, np)
        ) or (builtin and func.id == "float")
        if cast and len(node.args) == 1:
            return self._call("FLOAT", *node.args)
        return node


def _is_cast(node):
    """A call of ``precision_ops.FLOAT`` (a rewritten literal), which may be evaluated twice."""
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "FLOAT"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == ALIAS
    )


def _as_load(target):
    """An assignment target as an expression reading it."""
    node = ast.parse(ast.unparse(target), mode="eval").body
    return node


def check_declaration(rules, fields, record):
    """ValueError unless every name ``rules.PRECISION`` declares is a float constant of the
    module, a float field of ``fields`` (the record's, after the header) or a number of the
    configuration ``record``. (``rules`` is the float64 module: its constants are checked when
    the copy is written.)"""
    field_kinds = {f[0]: np.dtype(f[1]).kind for f in fields}
    config = record.dtype.names or ()
    for name in declared(rules):
        if name in field_kinds:
            ok = field_kinds[name] == "f"
        elif name in config:
            ok = record.dtype[name].kind == "f"
        else:
            ok = is_float_constant(getattr(rules, name, None))
        if not ok:
            raise ValueError(
                f"{rules.__name__}.PRECISION names {name!r}, which is no float field, float "
                "constant or float configuration number of the game"
            )
