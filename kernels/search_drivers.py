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
from vecenv.kernels.rng import next_u64
from vecenv.kernels.search import (
    AGAIN,
    EVALUATION,
    FRESH,
    LOW,
    MAX_STEPS,
    OUTCOME,
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

# What the search of a game binds beside its rules (``build.load_drivers``' constants); these
# defaults, before the binding block, hold where it binds none (the GPU search's).
ONE_AGENT = False  # a one-agent game: no statuses, agent 0 moves until the episode ends
CHANCE = False  # the game declares CHANCE: its step draws from the record's stream

# >>> bindings
game_reset = game_step = game_observe = game_observe_step = game_act = None
ACTION_DISCRETE = True
# <<< bindings


@nb.njit(cache=True, error_model="numpy", inline="always")
def seat_to_move(s, searcher):
    """The one ACTIVE seat; the searching seat where both are; -1 where none is (a one-agent
    game: its agent, 0)."""
    if ONE_AGENT:
        return 0
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


# Inlined (into ``simulate``): a call hands over every array of the tree and the game field by
# field, which cost a simulation more than the node's step.
@nb.njit(cache=True, error_model="numpy", inline="always")
def step_node(t, n, a, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams):
    """Node ``c``, from node ``n`` by action ``a``: its record stepped from ``n``'s (with a word
    of the search's own stream where the game has chance), its edge, its legal actions; the
    observation row ``t`` then holds its observation. Returns whether the step drew chance."""
    legal_view, acts, rews = game[2], game[3], game[4]
    low = iparams[LOW]
    records[c] = records[n]
    s = records[c]
    m = nodes[n].mover
    row = acts[t]
    row[0] = low
    row[1] = low
    row[m] = low + a
    if not ONE_AGENT:
        other = 1 - m
        if s.status[other] == ACTIVE:  # both seats move: the other one at random
            game_observe(s, cfg, obs, t)
            row[other] = low + max(uniform_choice(r, legal_row(legal_view, t, other)), 0)
    word = s.rng
    if CHANCE:  # never the episode's stream: what it will draw is no business of the search
        word = next_u64(r)
        s.rng = word
    ended = game_step(s, cfg, row, rews[t])
    drew = s.rng != word
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
    node.chance = False
    node.sibling = -1
    if moves == 0:
        node.discount = 0.0
    else:
        node.discount = 1.0 if mover == m else -1.0
    return drew


@nb.njit(cache=True, error_model="numpy", inline="always")
def make_node(t, n, a, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams):
    """Node ``n``'s child by action ``a``, made at ``c`` (``step_node``); where the step drew
    chance, ``c`` becomes the chance node of (``n``, ``a``) and the outcome drawn its first
    child, at ``c + 1``. Returns the node made last: the simulation's leaf."""
    drew = step_node(
        t, n, a, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams
    )
    children[n, a] = c
    if not (CHANCE and drew):
        return c
    o = c + 1
    records[o] = records[c]
    nodes[o] = nodes[c]
    nodes[o].parent = c
    for k in range(children.shape[1]):
        legal[o, k] = legal[c, k]
        legal[c, k] = False
        children[o, k] = -1
    x = nodes[c]  # the chance node: the action's value to its mover, before chance
    x.mover = nodes[n].mover
    x.terminal = False
    x.chance = True
    x.reward = 0.0
    x.discount = 1.0
    children[c, 0] = o
    return o


@nb.njit(cache=True, error_model="numpy", inline="always")
def make_outcome(t, x, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams):
    """A new outcome of chance node ``x`` at ``c``: the record of ``x``'s parent stepped by
    ``x``'s action with a fresh word of the search's stream, the outcome's edge below ``x``."""
    n = nodes[x].parent
    a = nodes[x].action
    step_node(t, n, a, c, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams)
    nodes[c].parent = x
    nodes[c].sibling = children[x, 0]
    children[x, 0] = c


@nb.njit(cache=True, error_model="numpy", inline="always")
def rollout(t, s, seat, cfg, game, obs, r, iparams):
    """The value for ``seat`` of record ``s`` (whose observation row ``t`` holds) by one random
    playout: the sum of its rewards over uniformly random legal moves to the end."""
    work, legal_view, acts, rews = game[1], game[2], game[3], game[4]
    low = iparams[LOW]
    work[t] = s
    w = work[t]
    if CHANCE:  # the playout's chance from the search's stream, not the episode's
        w.rng = next_u64(r)
    row = acts[t]
    total = 0.0
    for _ in range(iparams[ROLLOUT_LIMIT]):
        row[0] = low
        row[1] = low
        if ONE_AGENT:
            pick = uniform_choice(r, legal_row(legal_view, t, 0))
            if pick < 0:
                return total
            row[0] = low + pick
        else:
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
    root.chance = False
    root.sibling = -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def simulate(t, row, used, cfg, tree, game, obs, searcher, r, iparams, op, context):
    """One simulation of tree ``t`` down to its leaf, which it makes where it leaves the tree
    (at ``used``, and ``used + 1`` where a chance node comes first): ``(leaf, code)``,
    ``kernels/search``'s FRESH, TERMINAL or AGAIN; the observation row ``t`` then holds a FRESH
    or AGAIN leaf's observation."""
    code = np.int64(call_tree_op(op, context, OP_WALK, t, row, 0, 0.0))
    records = game[0][t]
    walk = game[5][t]
    if code == TERMINAL or code == AGAIN:  # noqa: SIM109 (numba: no tuples)
        if code == AGAIN:
            game_observe(records[walk[0]], cfg, obs, t)
        return walk[0], code
    nodes, children, legal = tree[0][t], tree[1][t], tree[2][t]
    leaf = used
    if code == OUTCOME:
        make_outcome(
            t, walk[0], used, cfg, records, nodes, children, legal, game, obs, searcher, r, iparams
        )
    else:
        leaf = make_node(
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
    return leaf, TERMINAL if nodes[leaf].terminal else FRESH


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
            used = max(used, leaf + 1)
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
        used[t] = max(used[t], leaf + 1)
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
