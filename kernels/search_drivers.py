"""Batched MCTS over a game's own rules: a template, one copy per game.

``build.py`` writes one copy per game with the binding block below replaced by imports of its
rules, as for ``drivers.py``, so the search steps the rules inlined and numba caches the result.
Nothing here is called from this module itself.

A search runs T trees; tree ``t`` searches episode ``rows[t]`` of ``states`` for seat
``seats[t]`` and draws from the random stream ``words[rows[t]]`` (advancing it). The tree's
arithmetic is ``kernels/search.py``'s; here a node is made by copying its parent's record into
the node's slot of ``records`` (T, M) and stepping it with the game's ``step`` (the parent's
mover playing the action, the other seat the action's lowest value, which turn-based rules
ignore), and a node's legal actions are its observation's ``legal`` field (read through
``legal_view``, (T, 1 or agents, A) over the observation array ``obs`` that ``observe`` writes;
a game without one has every action legal, and a move its rules refuse loses, as they rule it).
The seat to move is the one ACTIVE seat (``kernels/turns``); where both seats move at once
(rps) the searching seat chooses and the other seat's action is drawn uniformly from its legal
ones. A node whose step ended the game, reached the time limit (``iparams[MAX_STEPS]``) or left
the seat to move without a legal action is terminal.

Bundles (every array's first axis is the tree, but ``states``, ``words`` and ``out``, indexed by
episode):
- ``tree``: ``(nodes, children, prior, legal, used, noise, scratch)``: the tree's arrays
  (``kernels/search.py``), the nodes made so far (T,), the root's Gumbel noise (T, A) and scratch
  rows (T, 2, A);
- ``game``: ``(records, work, obs, legal_view, acts, rews)``: node records (T, M), a rollout's
  record (T,), the observation arrays (T rows), the legal mask's view, an action row and a reward
  row per tree;
- ``params``: ``(fparams, iparams, table, terms)`` (``kernels/search.py``'s indices; ``table``
  the sequential halving schedule, ``terms`` the selection's factors by visits);
- ``out``: ``(action, policy, visits, qvalues, value)``, rows by episode.

Leaf evaluation inside the search (``iparams[EVALUATION]``): ROLLOUT plays uniformly random legal
moves to the end (at most ``iparams[ROLLOUT_LIMIT]`` plies) and sums the leaf mover's rewards;
UNIFORM values every leaf 0. Both give uniform priors. With a Python evaluator the driver calls
``begin``, then per simulation ``descend`` and ``ascend`` around its evaluator, then ``finish``.
"""

import numba as nb
import numpy as np

from vecenv.kernels.agents import uniform_choice
from vecenv.kernels.search import (
    AGAIN,
    EVALUATION,
    FRESH,
    LOW,
    MAX_STEPS,
    ROLLOUT,
    ROLLOUT_LIMIT,
    SIMULATIONS,
    TERMINAL,
)
from vecenv.kernels.state import TERMINATED, TRUNCATED
from vecenv.kernels.tree_op import (
    OP_RESULTS,
    OP_ROOT,
    OP_SETTLE,
    OP_WALK,
    call_tree_op,
)
from vecenv.kernels.turns import ACTIVE
from vecenv.kernels.views import borrowed

# >>> bindings
game_reset = game_step = game_observe = game_observe_step = game_act = None
ACTION_DISCRETE = True
# <<< bindings


@nb.njit(cache=True, error_model="numpy", inline="always")
def seat_to_move(s, searcher):
    """The one ACTIVE seat; the searching seat where both are; -1 where none is."""
    first = s.status[0] == ACTIVE
    second = s.status[1] == ACTIVE
    if first and second:
        return searcher
    if first:
        return 0
    if second:
        return 1
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def legal_row(legal_view, t, seat):
    """Seat ``seat``'s legal mask in tree ``t``'s observation (a shared mask is every seat's)."""
    return legal_view[t, min(seat, legal_view.shape[1] - 1)]


# Inlined (into ``simulate``, its one caller): a call hands over every array of the tree and the
# game field by field, which cost a simulation more than the node's step.
@nb.njit(cache=True, error_model="numpy", inline="always")
def make_node(t, n, a, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams):
    """Node ``c``, node ``n``'s child by action ``a``: its record stepped from ``n``'s, its
    edge, its legal actions; the observation row ``t`` then holds its observation."""
    legal_view, acts, rews = game[2], game[3], game[4]
    low = iparams[LOW]
    records[c] = records[n]
    s = records[c]
    m = nodes[n].mover
    row = acts[t]
    row[0] = low
    row[1] = low
    row[m] = low + a
    other = 1 - m
    if s.status[other] == ACTIVE:  # both seats move: the other one at random
        game_observe(s, cfg, obs, t)
        row[other] = low + max(uniform_choice(r, legal_row(legal_view, t, other)), 0)
    ended = game_step(s, cfg, row, rews[t])
    s.step += 1
    truncated = s.step >= iparams[MAX_STEPS]
    over = ended != 0 or truncated
    if over:
        s.done = (TERMINATED if ended != 0 else 0) | (TRUNCATED if truncated else 0)
    game_observe(s, cfg, obs, t)
    mover = -1 if over else seat_to_move(s, searcher)
    mask = legal_row(legal_view, t, max(mover, 0))
    moves = 0
    for k in range(children.shape[1]):
        legal[c, k] = mover >= 0 and mask[k]
        moves += legal[c, k]
        children[c, k] = -1
    node = nodes[c]
    node.parent = n
    node.action = a
    node.visits = 0
    node.value = 0.0
    node.raw = 0.0
    node.reward = rews[t, m]
    node.terminal = moves == 0
    node.mover = mover if moves > 0 else -1
    if moves == 0:
        node.discount = 0.0
    else:
        node.discount = 1.0 if mover == m else -1.0
    children[n, a] = c


@nb.njit(cache=True, error_model="numpy", inline="always")
def rollout(t, s, seat, cfg, game, obs, r, iparams):
    """The value for ``seat`` of record ``s`` (whose observation row ``t`` holds) by one random
    playout: the sum of its rewards over uniformly random legal moves to the end."""
    work, legal_view, acts, rews = game[1], game[2], game[3], game[4]
    low = iparams[LOW]
    work[t] = s
    w = work[t]
    row = acts[t]
    total = 0.0
    for _ in range(iparams[ROLLOUT_LIMIT]):
        row[0] = low
        row[1] = low
        for k in range(2):
            if w.status[k] == ACTIVE:
                pick = uniform_choice(r, legal_row(legal_view, t, k))
                if pick < 0:
                    return total
                row[k] = low + pick
        ended = game_step(w, cfg, row, rews[t])
        w.step += 1
        total += rews[t, seat]
        if ended != 0 or w.step >= iparams[MAX_STEPS]:
            return total
        game_observe_step(w, cfg, obs, t)
    return total


@nb.njit(cache=True, error_model="numpy")
def begin_tree(t, state, cfg, records, nodes, children, legal, game, obs, searcher):
    """Tree ``t``'s root: the record ``state``, its legal actions and mover."""
    records[0] = state
    game_observe(records[0], cfg, obs, t)
    mask = legal_row(game[2], t, searcher)
    moves = 0
    for k in range(children.shape[1]):
        children[0, k] = -1
        legal[0, k] = mask[k]
        moves += mask[k]
    root = nodes[0]
    root.mover = searcher
    root.terminal = moves == 0  # nothing to search: every simulation counts a visit of 0
    root.parent = -1
    root.action = -1
    root.visits = 0
    root.reward = 0.0
    root.discount = 0.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def simulate(t, row, used, cfg, tree, game, obs, searcher, r, iparams, op, context):
    """One simulation of tree ``t`` down to its leaf, which it makes (node ``used``) where it
    leaves the tree: ``(leaf, code)``, ``kernels/search``'s FRESH, TERMINAL or AGAIN; the
    observation row ``t`` then holds a FRESH or AGAIN leaf's observation."""
    code = np.int64(call_tree_op(op, context, OP_WALK, t, row, 0, 0.0))
    records = game[0][t]
    walk = game[5][t]
    if code != FRESH:
        if code == AGAIN:
            game_observe(records[walk[0]], cfg, obs, t)
        return walk[0], code
    nodes, children, legal = tree[0][t], tree[1][t], tree[2][t]
    make_node(
        t,
        walk[0],
        walk[1],
        used,
        cfg,
        records,
        nodes,
        children,
        legal,
        game,
        obs,
        searcher,
        r,
        iparams,
    )
    return used, TERMINAL if nodes[used].terminal else FRESH


# The loops over the trees: each runs trees ``lo`` to ``hi`` - 1, without the GIL, so that a
# search's threads each run a range of them at once.
@nb.njit(cache=True, error_model="numpy", nogil=True)
def run(states, rows, seats, cfgs, tree, game, obs, words, iparams, op, context, lo, hi):
    """The whole search of every tree, its leaves evaluated inside it (ROLLOUT or UNIFORM)."""
    states, rows, seats, cfgs, tree, game, obs, words, iparams = borrowed(
        (states, rows, seats, cfgs, tree, game, obs, words, iparams)
    )
    rollouts = iparams[EVALUATION] == ROLLOUT
    for t in range(lo, hi):
        row = rows[t]
        r = words[row]
        cfg = cfgs[0]
        searcher = seats[t]
        records, nodes = game[0][t], tree[0][t]
        begin_tree(t, states[row], cfg, records, nodes, tree[1][t], tree[2][t], game, obs, searcher)
        value = 0.0
        if rollouts:
            value = rollout(t, records[0], searcher, cfg, game, obs, r, iparams)
        call_tree_op(op, context, OP_ROOT, t, row, 0, value)
        used = np.int64(1)
        for _ in range(iparams[SIMULATIONS]):
            leaf, code = simulate(
                t, row, used, cfg, tree, game, obs, searcher, r, iparams, op, context
            )
            used += leaf == used
            value = 0.0
            if code != TERMINAL and rollouts:
                value = rollout(t, records[leaf], nodes[leaf].mover, cfg, game, obs, r, iparams)
            call_tree_op(op, context, OP_SETTLE, t, leaf, code, value)
        call_tree_op(op, context, OP_RESULTS, t, row, 0, 0.0)


@nb.njit(cache=True, error_model="numpy", nogil=True)
def begin(states, rows, seats, cfgs, tree, game, obs, used, lo, hi):
    """Every tree's root, its observation in the observation rows, for a Python evaluator."""
    states, rows, seats, cfgs, tree, game, obs, used = borrowed(
        (states, rows, seats, cfgs, tree, game, obs, used)
    )
    for t in range(lo, hi):
        used[t] = 1
        begin_tree(
            t,
            states[rows[t]],
            cfgs[0],
            game[0][t],
            tree[0][t],
            tree[1][t],
            tree[2][t],
            game,
            obs,
            seats[t],
        )


@nb.njit(cache=True, error_model="numpy", nogil=True)
def begin_values(rows, values, op, context, lo, hi):
    """Every root's priors (the evaluator's logits, in the context) and first visit."""
    for t in range(lo, hi):
        call_tree_op(op, context, OP_ROOT, t, rows[t], 0, values[t])


@nb.njit(cache=True, error_model="numpy", nogil=True)
def descend(
    rows,
    seats,
    cfgs,
    tree,
    game,
    obs,
    words,
    iparams,
    op,
    context,
    used,
    leaves,
    codes,
    movers,
    lo,
    hi,
):
    """Every tree's next simulation down to its leaf: ``leaves``, ``codes`` and the leaves'
    seats to move (``movers``, -1 at a terminal node); the observation rows hold the leaves'."""
    rows, seats, cfgs, tree, game, obs, words, iparams, used = borrowed(
        (rows, seats, cfgs, tree, game, obs, words, iparams, used)
    )
    for t in range(lo, hi):
        row = rows[t]
        leaf, code = simulate(
            t,
            row,
            np.int64(used[t]),
            cfgs[0],
            tree,
            game,
            obs,
            seats[t],
            words[row],
            iparams,
            op,
            context,
        )
        used[t] += leaf == used[t]
        leaves[t] = leaf
        codes[t] = code
        movers[t] = tree[0][t][leaf].mover


@nb.njit(cache=True, error_model="numpy", nogil=True)
def ascend(rows, leaves, codes, values, op, context, lo, hi):
    """Every tree's simulation counted with the evaluator's priors (in the context) and value
    of its leaf."""
    for t in range(lo, hi):
        call_tree_op(op, context, OP_SETTLE, t, leaves[t], codes[t], values[t])


@nb.njit(cache=True, error_model="numpy", nogil=True)
def finish(rows, op, context, lo, hi):
    """Every tree's results into the context's result arrays."""
    for t in range(lo, hi):
        call_tree_op(op, context, OP_RESULTS, t, rows[t], 0, 0.0)
