"""The batched MCTS on the GPU: one thread runs one tree's whole search.

A template like ``drivers.py``: ``vecenv.cuda.compile.search_kernel`` makes one copy per game,
its binding bound to the game's ``observe`` and the functions it calls retargeted to the GPU:
the tree's arithmetic (``vecenv.kernels.search``: selection, priors, the count of a simulation,
the results) and the CPU search's own steps of the game (``vecenv.kernels.search_drivers``: the
root, a node made by stepping its parent's record, a random playout), the very same Python
functions the CPU search compiles. The body follows the CPU's ``run`` (with ``tree_op``'s
``OP_ROOT``, ``OP_WALK``, ``OP_SETTLE`` and ``OP_RESULTS`` written out where the CPU calls them by
address), so that both give the same search from the same stream where their arithmetic agrees.

Leaves are evaluated inside the kernel (ROLLOUT or UNIFORM): a Python evaluator would need the
host between simulations.
"""

from numba import cuda

from vecenv.kernels.search import (
    AGAIN,
    EVALUATION,
    FRESH,
    ROLLOUT,
    SIMULATIONS,
    TERMINAL,
    results,
    root_value,
    settle,
    uniform_prior,
    walk_down,
)
from vecenv.kernels.search_drivers import begin_tree, make_node, rollout

# >>> bindings
game_observe = None
# <<< bindings


def search(states, rows, seats, cfgs, tree, game, obs, words, params, out):
    """Tree ``cuda.grid(1)`` searches episode ``rows[t]`` of ``states`` for seat ``seats[t]``,
    drawing from ``words[rows[t]]``; its results go into the episode's rows of ``out``.
    ``tree``: (nodes, children, prior, legal, noise, scratch); ``game``: as the CPU search's
    (records, work, legal view, action rows, reward rows, walk); ``params``: (fparams, iparams,
    table, the selection's terms per visit count)."""
    t = cuda.grid(1)
    if t >= rows.shape[0]:
        return
    fparams, iparams, table, terms = params
    row = rows[t]
    r = words[row]
    cfg = cfgs[0]
    searcher = seats[t]
    nodes, children, prior, legal = tree[0][t], tree[1][t], tree[2][t], tree[3][t]
    noise, scratch = tree[4][t], tree[5][t]
    records, walk = game[0][t], game[5][t]
    rollouts = iparams[EVALUATION] == ROLLOUT
    begin_tree(t, states[row], cfg, records, nodes, children, legal, game, obs, searcher)
    value = 0.0
    if rollouts:
        value = rollout(t, records[0], searcher, cfg, game, obs, r, iparams)
    uniform_prior(legal, 0, prior)
    root_value(r, nodes, prior, legal, noise, scratch, value, fparams, iparams)
    used = 1
    for _ in range(iparams[SIMULATIONS]):
        code = walk_down(
            nodes, children, prior, legal, noise, scratch, table, terms, fparams, iparams, walk
        )
        leaf = walk[0]
        if code == FRESH:
            make_node(
                t, leaf, walk[1], used, cfg, records, nodes, children, legal, game, obs,
                searcher, r, iparams,
            )  # fmt: skip
            leaf = used
            code = TERMINAL if nodes[used].terminal else FRESH
        elif code == AGAIN:
            game_observe(records[leaf], cfg, obs, t)
        if leaf == used:
            used += 1
        value = 0.0
        if code != TERMINAL:
            if rollouts:
                value = rollout(t, records[leaf], nodes[leaf].mover, cfg, game, obs, r, iparams)
            uniform_prior(legal, leaf, prior)
        settle(nodes, leaf, code, value)
    results(r, nodes, children, prior, legal, noise, scratch, fparams, iparams, out, row)


KERNELS = ("search",)
