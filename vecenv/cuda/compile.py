"""A game's rules, compiled as CUDA code from the very same Python functions.

``kernels(game, rules, discrete)`` gives a game's GPU drivers (the template
``vecenv.cuda.drivers`` bound to the game's rules). The rules are ``numba.njit``
functions; each one reachable from the rules' ``reset``, ``step``, ``observe`` (and the agents'
``act``) is *retargeted*: a copy of its Python function (same code object, so same source and line
numbers in every message) whose globals name the retargeted copies of the njit functions it calls
instead of the CPU ones, compiled with ``numba.cuda.jit(device=True)``. The CPU's intrinsics
(``vecenv.kernels.npmath``'s C-library ``pow``, bit casts) are swapped for their CUDA
counterparts. Under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, set before numba.cuda is
first imported) the same copies run as plain Python, with Python counterparts of the intrinsics.

numba-cuda could itself take a CPU dispatcher for a device function, but it would keep the CPU
intrinsics, and the simulator cannot run CPU machine code on its own arrays: retargeting gives both
paths one mechanism.

``target_capability(cc)`` lets a machine without a GPU compile kernels to PTX (``compile_ptx``):
numba-cuda asks the current device for its compute capability when it compiles a device function
a kernel calls, which needs a driver; inside the context manager it is told ``cc`` instead.
"""

import ast
import contextlib
import dis
import functools
import math
import re
import struct
import threading
import types
from pathlib import Path

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from vecenv.kernels import npmath
from vecenv.kernels import search_drivers as search_template

from . import drivers as cuda_drivers
from . import search_drivers as cuda_search

_SIMULATOR = numba.config.ENABLE_CUDASIM


class UnsupportedConstruct(ValueError):
    """A rule uses something CUDA cannot compile; the message names the game, the function and
    numba-cuda's account of the construct."""


# -- the intrinsics' counterparts ---------------------------------------------------------------


def _binade_py(x):
    bits = struct.unpack("<q", struct.pack("<d", float(x)))[0] & 0x7FF0000000000000
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _pow_py(x, y):
    return np.float64(x) ** np.float64(y)  # numpy's scalar power: the C library's pow


def _powf_py(x, y):
    return np.float32(x) ** np.float32(y)


@functools.cache
def _counterparts():
    """{id(CPU intrinsic): what replaces it} for the current mode (GPU or simulator)."""
    if _SIMULATOR:
        table = {npmath.pow: _pow_py, npmath.powf: _powf_py, npmath._binade: _binade_py}
    else:
        from numba import cuda

        @cuda.jit(device=True, forceinline=True)
        def pow_(x, y):  # libdevice's pow: within 2 ulp where glibc's is within 1
            return math.pow(x, y)

        @cuda.jit(device=True, forceinline=True)
        def powf(x, y):
            return math.pow(np.float32(x), np.float32(y))

        # ``_binade`` is a plain bit cast in LLVM IR, which NVVM compiles as it is.
        table = {npmath.pow: pow_, npmath.powf: powf, npmath._binade: npmath._binade}
    return {id(k): v for k, v in table.items()}


# -- retargeting --------------------------------------------------------------------------------


def _global_names(code):
    """The global names ``code`` (and the code objects nested in it) reads (not its attribute
    names, which share ``co_names`` with them: ``s.step`` is no call of ``step``)."""
    names = {
        ins.argval
        for ins in dis.get_instructions(code)
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class Retarget:
    """Copies of njit functions (and of the template's plain functions) bound to each other's
    copies, compiled as CUDA device functions (or left as Python under the simulator).
    ``bindings`` override global names of the template's functions."""

    def __init__(self, bindings=None, shared=None):
        self.bindings = dict(bindings or {})
        self._done = {}  # (id(original), kernel) -> copy, for the template's functions
        self._keep = []  # the originals, so that their ids stay theirs
        # The copies of everything else (the rules, the agents, a policy): the same whatever
        # the bindings, so that kernels made by several retargets compile them once.
        self.shared = shared if shared is not None else types.SimpleNamespace(done={}, keep=[])
        self._counterparts = _counterparts()

    def function(self, fn, kernel=False):
        key = (id(fn), kernel)
        py = fn.py_func if isinstance(fn, Dispatcher) else fn
        own = kernel or _is_template(py)
        done, keep = (self._done, self._keep) if own else (self.shared.done, self.shared.keep)
        if key in done:
            return done[key]
        namespace = dict(py.__globals__)
        closure = None
        if py.__closure__:
            closure = tuple(types.CellType(self.value(c.cell_contents)) for c in py.__closure__)
        copy = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, closure)
        copy.__kwdefaults__ = py.__kwdefaults__
        copy.__qualname__ = py.__qualname__
        copy.__module__ = py.__module__
        copy.__doc__ = py.__doc__
        if _SIMULATOR and not kernel:
            compiled = copy
            from numba import cuda

            if any(v is cuda for v in namespace.values()):
                # The simulator hands its kernel API (``cuda.atomic``, ``cuda.local``) only to
                # the functions it runs as its own: as it runs a kernel or device function.
                compiled = cuda.jit(device=True)(copy)
        else:
            from numba import cuda

            if kernel:
                compiled = cuda.jit(copy)
            else:
                # numba's own inlining kept: a device function may not return a view of its
                # argument (``legal_row``), which an inlined one does.
                inline = "never"
                if isinstance(fn, Dispatcher):
                    inline = fn.targetoptions.get("inline", "never")
                compiled = cuda.jit(device=True, inline=inline)(copy)
        done[key] = compiled  # before its globals: a function may call itself
        keep.append(fn)
        own = _is_template(py)
        for name in _global_names(py.__code__):
            if own and name in self.bindings:
                bound = self.bindings[name]
                # A policy may be a plain function written for the GPU (it need not run on the
                # CPU): retargeted like the njit functions it calls.
                plain = isinstance(bound, types.FunctionType)
                namespace[name] = self.function(bound) if plain else self.value(bound)
            elif name in namespace:
                namespace[name] = self.value(namespace[name])
        return compiled

    def value(self, value):
        if isinstance(value, Dispatcher):
            return self.function(value)
        counterpart = self._counterparts.get(id(value))
        if counterpart is not None:
            return counterpart
        if isinstance(value, types.FunctionType) and _is_template(value):
            return self.function(value)
        return value


# The templates whose binding blocks name a game's rules: the GPU drivers, the GPU search, and the
# CPU search's own steps of a game, which the GPU search calls.
_TEMPLATES = (cuda_drivers, cuda_search, search_template)


def _is_template(fn):
    """Whether ``fn`` (a plain Python function) is one of a template's."""
    return any(fn.__globals__ is module.__dict__ for module in _TEMPLATES)


def _bindings(rules, agents, discrete, policy=None):
    """The names the templates' binding blocks give a game's rules."""
    return {
        "game_reset": rules.reset,
        "game_step": rules.step,
        "game_observe": rules.observe,
        "game_observe_step": getattr(rules, "observe_step", rules.observe),
        "game_act": agents.act if agents is not None else None,
        "game_policy": policy,
        "ACTION_DISCRETE": bool(discrete),
        "WITH_AGENTS": False,
    }


def kernels(rules, agents, discrete):
    """The GPU drivers of a game (a namespace of ``cuda_drivers.KERNELS``, and ``step_agents``
    where the game has agents): compiled lazily on the first launch of each, for the argument
    types it is given."""
    bindings = _bindings(rules, agents, discrete)
    retarget = Retarget(bindings)
    found = {
        name: retarget.function(getattr(cuda_drivers, name), kernel=True)
        for name in cuda_drivers.KERNELS
    }
    if agents is not None:
        with_agents = Retarget(dict(bindings, WITH_AGENTS=True), retarget.shared)
        found["step_agents"] = with_agents.function(cuda_drivers.step, kernel=True)
    found["shared"] = retarget.shared  # for ``rollout_kernel``: the rules compiled once
    return types.SimpleNamespace(**found)


def rollout_kernel(rules, discrete, policy, shared=None):
    """The T-step kernel of a one-agent game (``cuda_drivers.rollout``) drawing its actions from
    ``policy`` (an njit function, or a plain Python one written for the GPU, of the signature
    ``policy(obs, row, low, high, params, rng, action)``: see ``vecenv.cuda.rollout``);
    ``shared``: the ``kernels(...).shared`` of the same game, whose compiled rules it reuses."""
    retarget = Retarget(_bindings(rules, None, discrete, policy), shared)
    return retarget.function(cuda_drivers.rollout, kernel=True)


def search_kernel(rules, discrete):
    """The GPU search of a game (``cuda_search.search``), compiled lazily on its first launch."""
    retarget = Retarget(_bindings(rules, None, discrete))
    return retarget.function(cuda_search.search, kernel=True)


def _simulate_record_assignment():
    """Under the simulator, ``a[i] = b[j]`` between arrays of records (a search's node copies
    its parent's record) as a kernel does it: the simulator hands a kernel its records wrapped
    and its arrays take no wrapped value; unwrapped here, once."""
    from numba.cuda.simulator.cudadrv import devicearray as fake

    def unwrapped(value):
        if isinstance(value, fake.FakeWithinKernelCUDAArray):
            value = value._item
        return value._ary if isinstance(value, fake.FakeCUDAArray) else value

    def setitem(self, idx, val):
        return self._ary.__setitem__(idx, unwrapped(val))

    def setitem_within(self, idx, val):
        self._item.__setitem__(idx, unwrapped(val))

    fake.FakeCUDAArray.__setitem__ = setitem
    fake.FakeWithinKernelCUDAArray.__setitem__ = setitem_within


if _SIMULATOR:
    _simulate_record_assignment()


def simulated_tuple(items):
    """A tuple of kernel arguments as a kernel sees it: the simulator gives arrays passed inside a
    tuple none of the record semantics of arrays passed alone (``a[i].field``); on a GPU the
    tuple itself."""
    if not _SIMULATOR or items is None:
        return items
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

    return tuple(FakeWithinKernelCUDAArray(a) if isinstance(a, FakeCUDAArray) else a for a in items)


# -- compiling without a GPU --------------------------------------------------------------------

_capability_lock = threading.Lock()


class _Target:
    def __init__(self, cc):
        self.compute_capability = tuple(cc)


@contextlib.contextmanager
def target_capability(cc):
    """Within it, numba-cuda compiles device functions for compute capability ``cc`` (a pair such
    as (9, 0)) instead of asking the current device, so that ``numba.cuda.compile_ptx`` compiles
    kernels calling device functions on a machine without a GPU or driver. Device functions are
    compiled once per argument types, for the capability of the first compile: compile each
    capability in a process of its own where the difference matters (nothing vecenv's rules use
    depends on it)."""
    from numba.cuda import dispatcher

    with _capability_lock:
        saved = dispatcher.get_current_device
        dispatcher.get_current_device = lambda: _Target(cc)
        try:
            yield
        finally:
            dispatcher.get_current_device = saved


_LOCATION = re.compile(
    r'(?:File "(?P<file>[^"]+\.py)", line (?P<fline>\d+))|(?:at (?P<at>\S+\.py) \((?P<aline>\d+)\))'
)


def _rules_file(path):
    parts = Path(path).parts
    return not (
        "numba" in parts or "numba_cuda" in parts or Path(path) == Path(cuda_drivers.__file__)
    )


def _where(exc):
    """Where in the rules numba-cuda failed: (path, line), or None. numba-cuda's typing errors
    carry no location in their message (its error contexts are not numba's), but its frames
    keep the statement each was typing: the innermost one in a rules' file. Lowering errors say
    where in their message."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        loc = tb.tb_frame.f_locals.get("loc")
        path, line = getattr(loc, "filename", None), getattr(loc, "line", None)
        if isinstance(path, str) and isinstance(line, int) and _rules_file(path):
            found = (path, line)
        tb = tb.tb_next
    if found is not None:
        return found
    for match in _LOCATION.finditer(str(exc)):
        path = match.group("file") or match.group("at")
        if _rules_file(path) and Path(path).is_file():
            return path, int(match.group("fline") or match.group("aline"))
    return None


def _function_at(path, line):
    """The name of the innermost function of ``path`` holding ``line``, and the line's text."""
    source = Path(path).read_text(encoding="utf-8")
    name = "?"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or 0):
            name = node.name  # ast.walk goes outside in: the last one found is the innermost
    lines = source.splitlines()
    return name, lines[line - 1].strip() if 0 < line <= len(lines) else ""


def describe_error(game, exc):
    """numba-cuda's compile error ``exc`` as an ``UnsupportedConstruct`` naming the game, the
    rules' function and line (the first place in numba's report outside numba and the drivers)
    and numba's account of the construct."""
    text = str(exc)
    head = next((line.strip() for line in text.splitlines() if line.strip()), "")
    where = _where(exc)
    if where is None:
        return UnsupportedConstruct(f"{game}: the rules do not compile for CUDA: {head}\n\n{text}")
    path, line = where
    function, code = _function_at(path, line)
    return UnsupportedConstruct(
        f"{game}: the rules do not compile for CUDA: function {function} ({path}, line {line}): "
        f"`{code}`: {head}\n\nnumba-cuda's report:\n{text}"
    )
