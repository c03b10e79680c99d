"""One call for the tree's side of a simulation, shared by every game's search.

Every game's search (``search_drivers``) calls the tree's arithmetic (``kernels/search.py``)
through one C function, ``tree_op``, by its address: compiled once (and cached) for every game,
instead of being compiled again into each game's search (numba optimises and emits a function's
callees again into every caller, which made a game's first search several times slower to compile
than the game's engine). The arrays reach it through a context, an int64 array of their addresses
and sizes.

numba keys ``tree_op``'s cached machine code on this file's contents alone, though it inlines
``kernels/search.py``'s functions and lays out its ``NODE``: a change there must come with one here
(these lines name the layout they were compiled with: ``NODE`` with ``chance`` and ``sibling``,
chance nodes widening by their visits with the simulation's own), or a process could run code
compiled for the old layout.
"""

import functools

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from .agents import AGENT_RNG
from .search import (
    CALLBACK,
    EVALUATION,
    F_PARAMS,
    I_PARAMS,
    NODE,
    TERMINAL,
    results,
    root_value,
    settle,
    softmax_prior,
    uniform_prior,
    walk_down,
)
from .views import pointer

# The operations of ``tree_op``.
OP_ROOT = 0
OP_WALK = 1
OP_SETTLE = 2
OP_RESULTS = 3

# ``tree_op``'s context: an int64 array of the arrays' addresses and sizes, by index.
CTX_NODES = 0  # (T, M) NODE
CTX_CHILDREN = 1  # (T, M, A) int32
CTX_PRIOR = 2  # (T, M, A) float64
CTX_LEGAL = 3  # (T, M, A) bool
CTX_NOISE = 4  # (T, A) float64
CTX_SCRATCH = 5  # (T, 2, A) float64
CTX_LOGITS = 6  # (T, A) float64: a Python evaluator's prior logits
CTX_WALK = 7  # (T, 2) int64: where OP_WALK ends
CTX_FPARAMS = 8  # (F_PARAMS,) float64
CTX_IPARAMS = 9  # (I_PARAMS,) int64
CTX_TABLE = 10  # (min(MAX_CONSIDERED, A) + 1, SIMULATIONS) int32: sequential halving's schedule
CTX_WORDS = 11  # (N,) AGENT_RNG: the trees' random streams, by episode
CTX_ACTION = 12  # (N,) int64, then the other results, by episode: (action, policy, visits,
CTX_POLICY = 13  # qvalues, value) as ``results`` writes them
CTX_VISITS = 14
CTX_QVALUES = 15
CTX_VALUE = 16
CTX_TREES = 17  # T
CTX_NODES_PER_TREE = 18  # M
CTX_ACTIONS = 19  # A
CTX_EPISODES = 20  # N
CTX_TABLE_ROWS = 21  # the schedule's shape (1 x 1 where it is not read)
CTX_TABLE_COLUMNS = 22
CTX_TERMS = 23  # (2, CTX_TERMS_SIZE) float64: the selection's factors by visits (``visit_terms``)
CTX_TERMS_SIZE = 24
CTX_SIZE = 25


@intrinsic
def call_tree_op(typingctx, address, context, op, t, i, j, value):
    """``tree_op(context, op, t, i, j, value)`` called through its ``address``."""
    sig = types.float64(
        types.int64, types.int64, types.int64, types.int64, types.int64, types.int64, types.float64
    )

    def codegen(cgctx, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.DoubleType(), [i64, i64, i64, i64, i64, ir.DoubleType()])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, args[1:])

    return sig, codegen


@nb.njit(cache=True, error_model="numpy", inline="always")
def _view(ctx, k, shape, dtype):
    return nb.carray(pointer(ctx[k]), shape, dtype)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _priors(ctx, t, n, legal, prior, callback):
    """Node ``n``'s priors: the evaluator's logits row of tree ``t`` where the evaluation is
    CALLBACK, else uniform over its legal actions."""
    if callback:
        logits = _view(ctx, CTX_LOGITS, (ctx[CTX_TREES], ctx[CTX_ACTIONS]), np.float64)[t]
        softmax_prior(legal, n, logits, prior)
    else:
        uniform_prior(legal, n, prior)


def _tree_op(context, op, t, i, j, value):
    """One tree's side of a search step, on tree ``t`` of the arrays ``context`` addresses:

    - OP_ROOT (``i`` the episode): the root's priors (uniform, or the evaluator's ``logits``
      row where the evaluation is CALLBACK), its first visit, of ``value``, and its noise;
    - OP_WALK (``i`` the episode): one simulation's way down, to where it makes a node (returns
      FRESH, ``walk[t]`` = (parent, action)), draws a new outcome of a chance node (OUTCOME,
      (chance node, -1)), reaches a terminal node (TERMINAL, (node, -1)) or is cut off by
      MAX_DEPTH (AGAIN, (node, -1));
    - OP_SETTLE (``i`` the node, ``j`` its code): the node's priors (as OP_ROOT's) unless it is
      terminal, and the simulation counted with ``value`` (``settle``);
    - OP_RESULTS (``i`` the episode): the root's results into the episode's rows (``results``).
    """
    ctx = nb.carray(pointer(context), (CTX_SIZE,), np.int64)
    trees, m, a, n = ctx[CTX_TREES], ctx[CTX_NODES_PER_TREE], ctx[CTX_ACTIONS], ctx[CTX_EPISODES]
    nodes = _view(ctx, CTX_NODES, (trees, m), NODE)[t]
    children = _view(ctx, CTX_CHILDREN, (trees, m, a), np.int32)[t]
    prior = _view(ctx, CTX_PRIOR, (trees, m, a), np.float64)[t]
    legal = _view(ctx, CTX_LEGAL, (trees, m, a), np.bool_)[t]
    noise = _view(ctx, CTX_NOISE, (trees, a), np.float64)[t]
    scratch = _view(ctx, CTX_SCRATCH, (trees, 2, a), np.float64)[t]
    fparams = _view(ctx, CTX_FPARAMS, (F_PARAMS,), np.float64)
    iparams = _view(ctx, CTX_IPARAMS, (I_PARAMS,), np.int64)
    callback = iparams[EVALUATION] == CALLBACK
    if op == OP_WALK:
        table = _view(ctx, CTX_TABLE, (ctx[CTX_TABLE_ROWS], ctx[CTX_TABLE_COLUMNS]), np.int32)
        walk = _view(ctx, CTX_WALK, (trees, 2), np.int64)[t]
        terms = _view(ctx, CTX_TERMS, (2, ctx[CTX_TERMS_SIZE]), np.float64)
        return walk_down(
            nodes, children, prior, legal, noise, scratch, table, terms, fparams, iparams, walk
        )
    if op == OP_SETTLE:
        if j != TERMINAL:
            _priors(ctx, t, i, legal, prior, callback)
        settle(nodes, i, j, value)
        return 0.0
    words = _view(ctx, CTX_WORDS, (n,), AGENT_RNG)
    r = words[i]
    if op == OP_ROOT:
        _priors(ctx, t, np.int64(0), legal, prior, callback)
        root_value(r, nodes, prior, legal, noise, scratch, value, fparams, iparams)
        return 0.0
    out = (
        _view(ctx, CTX_ACTION, (n,), np.int64),
        _view(ctx, CTX_POLICY, (n, a), np.float64),
        _view(ctx, CTX_VISITS, (n, a), np.int64),
        _view(ctx, CTX_QVALUES, (n, a), np.float64),
        _view(ctx, CTX_VALUE, (n,), np.float64),
    )
    results(r, nodes, children, prior, legal, noise, scratch, fparams, iparams, out, i)
    return 0.0


_TREE_OP = types.float64(
    types.int64, types.int64, types.int64, types.int64, types.int64, types.float64
)


# numba keys this cfunc's cache entry by this file alone, not by the functions of
# ``kernels/search.py`` compiled into it: a change there must come with a change here (this
# line's date) so that no cache serves the old arithmetic. Last changed with search.py: the
# Dirichlet noise normalised from its logarithms (2026-12).
@functools.cache
def tree_op_address():
    """``tree_op``'s address, compiled (or loaded from numba's cache) on the first search."""
    return nb.cfunc(_TREE_OP, cache=True, error_model="numpy")(_tree_op).address
