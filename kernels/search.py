"""Monte Carlo tree search: one tree's arithmetic, shared by every game.

A search runs T trees at once (one per searched episode); tree ``t`` owns row ``t`` of every array
below, so trees never share a write and a tree's result depends on its root and its own random
stream only, whatever the thread count or the batch it runs in. Node 0 is the root; a node is
made per simulation (``search_drivers`` steps the game's rules into it), so a search of S
simulations needs at most S + 1 nodes.

- ``nodes`` (T, M) records of ``NODE``: per node its visits, the mean value of its visits and
  the evaluator's value (``raw``), all from the point of view of the seat to move there
  (``mover``); the edge from its parent (``parent``, ``action``, the step's ``reward`` to the
  parent's mover, and ``discount``: 0 where the step ended the game, -1 where the seat to move
  changed, +1 where it did not), and ``terminal``;
- ``children`` (T, M, A) int32: the child of each action, -1 until it is made;
- ``prior`` (T, M, A) float64: the prior probabilities (zero on illegal actions);
- ``legal`` (T, M, A) bool: the legal actions of the seat to move.

Chance (a game that declares ``CHANCE``: its ``step`` draws from the record's stream): the search
steps each record it makes with a word of its own stream, never the episode's, and where a step
drew, the edge (node, action) leads to a chance node (``chance``, an afterstate: the position after
the action, before chance) whose children are sampled outcomes: the records that action gave, each
stepped with a fresh word. ``children[x, 0]`` is a chance node's first outcome and ``sibling`` links
the others. A simulation through a chance node makes a new outcome while the node has fewer than
``ceil(V ** CHANCE_WIDENING)`` of them, V its visits with this one (progressive widening), else goes
on to its least visited one; its value is the mean of its visits, an expectation over the drawn
outcomes, as a Stochastic MuZero afterstate's (which a learned model samples from a codebook; here
the game's own step draws).

The value of action ``a`` at node ``n`` (its Q) is ``reward + discount * value`` of the child,
as mctx's ``Tree.qvalues``; an unvisited action has none. The selection rules are mctx's
(``muzero_action_selection`` with ``qtransform_by_parent_and_siblings``; Gumbel MuZero's
sequential halving at the root and its deterministic interior selection, with
``qtransform_completed_by_mix_value``) and OpenSpiel's ``MCTSBot`` UCT, with these differences:
illegal actions are masked at every node (mctx masks the root only and leaves the interior to the
priors), and ties in PUCT and UCT go to the lowest action (mctx adds 1e-7 uniform noise, OpenSpiel
shuffles the children once). A simulation that reaches a terminal node counts a visit of value 0
there (mctx would expand a dummy child whose discount is 0: the same statistics).
"""

import math

import numba as nb
import numpy as np

from .rng import integer, next_u64, uniform

NODE = np.dtype(
    [
        ("visits", np.int32),
        ("parent", np.int32),
        ("action", np.int32),
        ("mover", np.int8),
        ("terminal", np.bool_),
        ("value", np.float64),
        ("raw", np.float64),
        ("reward", np.float64),
        ("discount", np.float64),
        ("chance", np.bool_),  # a chance node: its children are sampled outcomes
        ("sibling", np.int32),  # an outcome's next sibling under its chance node, or -1
    ],
    align=True,
)

# Selection rules.
PUCT = 0
UCT = 1
GUMBEL = 2

# Leaf evaluations made inside the compiled search (a Python evaluator is the driver's business).
ROLLOUT = 0
UNIFORM = 1
CALLBACK = 2

# How a simulation ends: at a node it made, at a terminal node (a visit of value 0), or at a node
# it had made before, cut off by ``MAX_DEPTH`` (mctx evaluates that node again and overwrites
# its value).
FRESH = 0
TERMINAL = 1
AGAIN = 2
OUTCOME = 3  # at a chance node that draws a new outcome (``walk`` = (chance node, -1))

# Float parameters, by index into the search's ``fparams`` array.
C_INIT = 0  # PUCT's pb_c_init
C_BASE = 1  # PUCT's pb_c_base
UCT_C = 2  # UCT's exploration constant
VALUE_SCALE = 3  # Gumbel's qtransform value_scale
MAXVISIT_INIT = 4  # Gumbel's qtransform maxvisit_init
EPSILON = 5  # the qtransforms' smallest denominator
DIRICHLET_FRACTION = 6
DIRICHLET_ALPHA = 7
GUMBEL_SCALE = 8
TEMPERATURE = 9
CHANCE_WIDENING = 10  # a chance node of V visits has up to ceil(V ** this) outcomes
F_PARAMS = 11

# Integer parameters, by index into ``iparams``.
SELECTION = 0
SIMULATIONS = 1
MAX_DEPTH = 2
MAX_CONSIDERED = 3
ROLLOUT_LIMIT = 4
EVALUATION = 5
MAX_STEPS = 6  # the time limit: a step that reaches it ends the game
LOW = 7  # the action value of action index 0
I_PARAMS = 8

TINY = np.finfo(np.float64).tiny
LOW_LOGIT = -1e9  # mctx's floor of a considered score


def considered_visits(max_considered, simulations):
    """Sequential halving's schedule, as mctx's ``get_table_of_considered_visits``: row ``m`` (0
    to ``max_considered``) is, for each simulation, the visit count an action of the root must
    have to be considered when ``m`` actions are; an (M + 1, S) int32 array."""
    table = np.zeros((max_considered + 1, simulations), dtype=np.int32)
    for m in range(max_considered + 1):
        if m <= 1:
            table[m] = np.arange(simulations)
            continue
        halvings = math.ceil(math.log2(m))
        counts = [0] * m
        sequence = []
        considered = m
        while len(sequence) < simulations:
            rounds = max(1, int(simulations / (halvings * considered)))
            for _ in range(rounds):
                sequence.extend(counts[:considered])
                for k in range(considered):
                    counts[k] += 1
            considered = max(2, considered // 2)
        table[m] = sequence[:simulations]
    return table


# -- random draws ---------------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def open_uniform(r):
    """A uniform float on (0, 1), never 0 or 1 (for logarithms)."""
    return (np.float64(next_u64(r) >> np.uint64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@nb.njit(cache=True, error_model="numpy")
def gumbel(r):
    return -math.log(-math.log(open_uniform(r)))


@nb.njit(cache=True, error_model="numpy")
def normal(r):
    """A standard normal (Box-Muller, one of the pair)."""
    return math.sqrt(-2.0 * math.log(open_uniform(r))) * math.cos(2.0 * math.pi * uniform(r))


@nb.njit(cache=True, error_model="numpy")
def gamma_draw(r, shape):
    """A Gamma(shape, 1) draw (Marsaglia and Tsang; shape < 1 through Gamma(shape + 1)) and its
    logarithm: for a tiny shape the draw itself underflows to 0 (``u ** (1 / shape)``) while its
    logarithm stays finite, which the Dirichlet noise needs to normalise the draws."""
    boost = 1.0
    log_boost = 0.0
    if shape < 1.0:
        u = open_uniform(r)
        boost = u ** (1.0 / shape)
        log_boost = math.log(u) / shape
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(r)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = open_uniform(r)
        if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return boost * d * v, log_boost + math.log(d * v)


@nb.njit(cache=True, error_model="numpy")
def gamma(r, shape):
    """A Gamma(shape, 1) draw (``gamma_draw``'s)."""
    return gamma_draw(r, shape)[0]


# -- one node's statistics ------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy", inline="always")
def qvalue(nodes, child):
    return nodes[child].reward + nodes[child].discount * nodes[child].value


@nb.njit(cache=True, error_model="numpy")
def uniform_prior(legal, n, prior):
    """Uniform probabilities over the legal actions of node ``n``."""
    count = 0
    for a in range(legal.shape[1]):
        count += legal[n, a]
    for a in range(legal.shape[1]):
        prior[n, a] = 1.0 / count if legal[n, a] else 0.0


@nb.njit(cache=True, error_model="numpy")
def softmax_prior(legal, n, logits, prior):
    """``softmax(logits)`` over the legal actions of node ``n`` (mctx's masked softmax)."""
    top = -np.inf
    for a in range(legal.shape[1]):
        if legal[n, a] and logits[a] > top:
            top = logits[a]
    total = 0.0
    for a in range(legal.shape[1]):
        p = math.exp(logits[a] - top) if legal[n, a] else 0.0
        prior[n, a] = p
        total += p
    for a in range(legal.shape[1]):
        prior[n, a] /= total


@nb.njit(cache=True, error_model="numpy")
def add_dirichlet(r, legal, prior, scratch, fraction, alpha):
    """Mix Dirichlet(alpha) noise over the root's legal actions into its prior, AlphaZero's
    exploration noise (mctx draws it over every action and masks afterwards); ``scratch`` is
    two rows of A floats (the draws and their logarithms)."""
    noise = scratch[1]
    logs = scratch[0]
    total = 0.0
    top = -np.inf
    for a in range(legal.shape[1]):
        noise[a] = 0.0
        logs[a] = -np.inf
        if legal[0, a]:
            noise[a], logs[a] = gamma_draw(r, alpha)
            top = max(top, logs[a])
        total += noise[a]
    if not (0.0 < total < np.inf):
        # Every draw underflowed (a tiny alpha: the noise is all but one-hot) or their sum
        # overflowed: the same shares from the logarithms, scaled by the largest.
        total = 0.0
        for a in range(legal.shape[1]):
            noise[a] = math.exp(logs[a] - top) if legal[0, a] else 0.0
            total += noise[a]
    for a in range(legal.shape[1]):
        if legal[0, a]:
            prior[0, a] = (1.0 - fraction) * prior[0, a] + fraction * noise[a] / total


@nb.njit(cache=True, error_model="numpy")
def backward(nodes, leaf, value):
    """Count a visit of value ``value`` (the leaf mover's) at ``leaf`` and every node above it
    (``propagate``)."""
    node = nodes[leaf]
    node.value = (node.value * node.visits + value) / (node.visits + 1)
    node.visits += 1
    propagate(nodes, leaf, value)


@nb.njit(cache=True, error_model="numpy")
def propagate(nodes, leaf, value):
    """Count a visit of value ``value`` (``leaf``'s mover's) at every node above ``leaf``, each
    seeing it through the edges' rewards and discounts (mctx's ``backward``)."""
    index = leaf
    while index != 0:
        below = nodes[index]
        value = below.reward + below.discount * value
        above = nodes[below.parent]
        above.value = (above.value * above.visits + value) / (above.visits + 1)
        above.visits += 1
        index = below.parent


@nb.njit(cache=True, error_model="numpy", inline="always")
def settle(nodes, leaf, code, value):
    """Count the simulation that ended at ``leaf``: a terminal node's visit of value 0; a
    node's first visit, of the evaluator's ``value``; or (AGAIN) its value replaced by
    ``value``, as mctx's expansion of an existing node does."""
    if code == TERMINAL:
        backward(nodes, leaf, 0.0)
        return
    node = nodes[leaf]
    node.raw = value
    if code == FRESH:
        backward(nodes, leaf, value)
        return
    node.value = value
    node.visits += 1
    propagate(nodes, leaf, value)


@nb.njit(cache=True, error_model="numpy")
def root_value(r, nodes, prior, legal, noise, scratch, value, fparams, iparams):
    """The root's first visit, of value ``value``, and its noise: Dirichlet in its prior (PUCT
    and UCT, where the fraction is positive), Gumbel's for Gumbel's selection."""
    root = nodes[0]
    root.visits = 1
    root.value = value
    root.raw = value
    if iparams[SELECTION] == GUMBEL:
        for k in range(noise.shape[0]):
            noise[k] = fparams[GUMBEL_SCALE] * gumbel(r)
    elif fparams[DIRICHLET_FRACTION] > 0.0:
        add_dirichlet(
            r, legal, prior, scratch, fparams[DIRICHLET_FRACTION], fparams[DIRICHLET_ALPHA]
        )


# -- selection -------------------------------------------------------------------------------------


# UCT's exploration term ``c * sqrt(log(N) / n)`` (OpenSpiel's) is computed as
# ``(c * sqrt(log(N))) * (1 / sqrt(n))``: the same number to a rounding, its two factors read from
# a table by visit count.
@nb.njit(cache=True, error_model="numpy", inline="always")
def uct_node_term(visits, fparams):
    return fparams[UCT_C] * math.sqrt(math.log(visits)) if visits > 0 else 0.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def uct_child_term(visits):
    return 1.0 / math.sqrt(visits) if visits > 0 else 0.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def puct_term(visits, fparams):
    base = fparams[C_BASE]
    pb_c = fparams[C_INIT] + math.log((visits + base + 1.0) / base)
    return math.sqrt(visits) * pb_c


@nb.njit(cache=True, error_model="numpy")
def visit_terms(fparams, iparams, out):
    """The selection's factors by visit count, computed once instead of at every step down (a
    square root, a logarithm and a division per action, most of a simulation's time in UCT):
    ``out[0, v]`` the factor of a node visited ``v`` times (UCT's ``c * sqrt(log(v))``, PUCT's
    ``sqrt(v) * pb_c``), ``out[1, v]`` that of an action visited ``v`` times (UCT's
    ``1 / sqrt(v)``; PUCT reads none). By the same expressions ``visit_term`` computes past the
    table's end, so the same values."""
    for v in range(out.shape[1]):
        out[0, v] = node_term(v, fparams, iparams)
        out[1, v] = uct_child_term(v)


@nb.njit(cache=True, error_model="numpy", inline="always")
def node_term(visits, fparams, iparams):
    if iparams[SELECTION] == UCT:
        return uct_node_term(visits, fparams)
    return puct_term(visits, fparams)


@nb.njit(cache=True, error_model="numpy", inline="always")
def visit_term(terms, visits, fparams, iparams):
    """A node's factor for ``visits`` (``visit_terms``'s row 0; computed past its end)."""
    if visits < terms.shape[1]:
        return terms[0, visits]
    return node_term(visits, fparams, iparams)


@nb.njit(cache=True, error_model="numpy", inline="always")
def child_term(terms, visits):
    """An action's UCT factor for ``visits`` (``visit_terms``'s row 1; computed past its end)."""
    if visits < terms.shape[1]:
        return terms[1, visits]
    return uct_child_term(visits)


@nb.njit(cache=True, error_model="numpy", inline="always")
def puct_select(nodes, children, prior, legal, n, fparams, scale):
    """mctx's ``muzero_action_selection`` at node ``n``: Q normalised by the node's value and
    its children's (``qtransform_by_parent_and_siblings``), unvisited actions at the minimum,
    plus ``sqrt(N) * pb_c * prior / (visits + 1)``; ``scale`` is ``sqrt(N) * pb_c``."""
    node_value = nodes[n].value
    low = node_value
    high = node_value
    for a in range(children.shape[1]):
        c = children[n, a]
        if c >= 0:
            q = qvalue(nodes, c)
            low = min(low, q)
            high = max(high, q)
    span = max(high - low, fparams[EPSILON])
    best = -np.inf
    chosen = -1
    for a in range(children.shape[1]):
        if not legal[n, a]:
            continue
        c = children[n, a]
        if c >= 0:
            score = (qvalue(nodes, c) - low) / span + scale * prior[n, a] / (nodes[c].visits + 1)
        else:
            score = scale * prior[n, a]
        if score > best:
            best = score
            chosen = a
    return chosen


@nb.njit(cache=True, error_model="numpy", inline="always")
def uct_select(nodes, children, legal, n, terms, factor):
    """OpenSpiel's ``MCTSBot`` UCT at node ``n``: an unvisited legal action first, else the
    highest ``Q + c * sqrt(log(N) / visits)``; ``factor`` is ``c * sqrt(log(N))``."""
    best = -np.inf
    chosen = -1
    for a in range(children.shape[1]):
        if not legal[n, a]:
            continue
        c = children[n, a]
        if c < 0:
            return a
        score = qvalue(nodes, c) + factor * child_term(terms, nodes[c].visits)
        if score > best:
            best = score
            chosen = a
    return chosen


@nb.njit(cache=True, error_model="numpy")
def completed_qvalues(nodes, children, prior, n, fparams, out):
    """mctx's ``qtransform_completed_by_mix_value`` at node ``n`` into ``out``: the visited
    actions' Q, the unvisited ones' the mixed value (the evaluator's value mixed with the visited
    Q weighted by their priors), rescaled to [0, 1] over every action and scaled by
    ``(maxvisit_init + max visits) * value_scale``."""
    total_visits = 0
    most = 0
    prior_sum = 0.0
    weighted = 0.0
    for a in range(children.shape[1]):
        c = children[n, a]
        if c >= 0:
            k = nodes[c].visits
            total_visits += k
            most = max(most, k)
            p = max(TINY, prior[n, a])
            prior_sum += p
            weighted += p * qvalue(nodes, c)
    mixed = nodes[n].raw
    if total_visits > 0:
        mixed = (nodes[n].raw + total_visits * (weighted / prior_sum)) / (total_visits + 1)
    low = np.inf
    high = -np.inf
    for a in range(children.shape[1]):
        c = children[n, a]
        q = qvalue(nodes, c) if c >= 0 else mixed
        out[a] = q
        low = min(low, q)
        high = max(high, q)
    span = max(high - low, fparams[EPSILON])
    scale = (fparams[MAXVISIT_INIT] + most) * fparams[VALUE_SCALE]
    for a in range(children.shape[1]):
        out[a] = scale * (out[a] - low) / span


@nb.njit(cache=True, error_model="numpy", inline="always")
def child_visits(nodes, children, n, a):
    c = children[n, a]
    return nodes[c].visits if c >= 0 else 0


@nb.njit(cache=True, error_model="numpy")
def considered_scores(nodes, children, prior, legal, noise, completed, considered, out):
    """mctx's ``score_considered`` at the root into ``out``: ``gumbel + logit + completed Q``
    (floored at -1e9) for the actions visited ``considered`` times, -inf for the others and for
    illegal actions."""
    top = -np.inf
    for a in range(children.shape[1]):
        top = max(top, math.log(max(prior[0, a], TINY)))
    for a in range(children.shape[1]):
        if legal[0, a] and child_visits(nodes, children, 0, a) == considered:
            logit = math.log(max(prior[0, a], TINY)) - top
            out[a] = max(LOW_LOGIT, noise[a] + logit + completed[a])
        else:
            out[a] = -np.inf


@nb.njit(cache=True, error_model="numpy", inline="always")
def argmax_first(values):
    best = 0
    for a in range(1, values.shape[0]):
        if values[a] > values[best]:
            best = a
    return best


@nb.njit(cache=True, error_model="numpy")
def gumbel_root_select(nodes, children, prior, legal, noise, table, fparams, iparams, scratch):
    """Gumbel MuZero's root selection (mctx's ``gumbel_muzero_root_action_selection``): the
    considered action (by sequential halving's schedule) with the highest score."""
    completed = scratch[0]
    scores = scratch[1]
    completed_qvalues(nodes, children, prior, np.int64(0), fparams, completed)
    num_legal = np.int64(0)
    visited = np.int64(0)
    for a in range(children.shape[1]):
        num_legal += legal[0, a]
        visited += child_visits(nodes, children, 0, a)
    considered = table[min(iparams[MAX_CONSIDERED], num_legal), visited]
    considered_scores(nodes, children, prior, legal, noise, completed, considered, scores)
    return argmax_first(scores)


@nb.njit(cache=True, error_model="numpy")
def gumbel_interior_select(nodes, children, prior, legal, n, fparams, scratch):
    """Gumbel MuZero's interior selection (mctx's ``gumbel_muzero_interior_action_selection``):
    the legal action whose share of the visits falls furthest below
    ``softmax(logits + completed Q)``."""
    completed = scratch[0]
    completed_qvalues(nodes, children, prior, n, fparams, completed)
    top = -np.inf
    for a in range(children.shape[1]):
        completed[a] += math.log(max(prior[n, a], TINY))
        top = max(top, completed[a])
    total = 0.0
    visits = 0
    for a in range(children.shape[1]):
        completed[a] = math.exp(completed[a] - top)
        total += completed[a]
        visits += child_visits(nodes, children, n, a)
    best = -np.inf
    chosen = -1
    for a in range(children.shape[1]):
        if legal[n, a]:
            score = completed[a] / total - child_visits(nodes, children, n, a) / (1.0 + visits)
            if score > best:
                best = score
                chosen = a
    return chosen


@nb.njit(cache=True, error_model="numpy", inline="always")
def select(nodes, children, prior, legal, n, noise, table, terms, fparams, iparams, scratch):
    """The action the search takes at node ``n`` (-1 where it has no legal action)."""
    rule = iparams[SELECTION]
    if rule == GUMBEL:
        if n == 0:
            return gumbel_root_select(
                nodes, children, prior, legal, noise, table, fparams, iparams, scratch
            )
        return gumbel_interior_select(nodes, children, prior, legal, n, fparams, scratch)
    term = visit_term(terms, nodes[n].visits, fparams, iparams)
    if rule == UCT:
        return uct_select(nodes, children, legal, n, terms, term)
    return puct_select(nodes, children, prior, legal, n, fparams, term)


@nb.njit(cache=True, error_model="numpy")
def next_outcome(nodes, children, x, widening):
    """The outcome of chance node ``x`` a simulation goes on to: its least visited (the newest
    among equals), or -1 where ``x`` may draw one more (fewer than ``ceil(V ** widening)`` so
    far, V its visits with this one)."""
    count = 0
    best = -1
    o = children[x, 0]
    while o >= 0:
        count += 1
        if best < 0 or nodes[o].visits < nodes[best].visits:
            best = o
        o = nodes[o].sibling
    if count < math.ceil((nodes[x].visits + 1) ** widening):  # this visit counted
        return -1
    return best


@nb.njit(cache=True, error_model="numpy", inline="always")
def walk_down(nodes, children, prior, legal, noise, scratch, table, terms, fparams, iparams, walk):
    """One simulation's way down from the root (mctx's ``simulate``): FRESH where it leaves
    the tree, ``walk`` = (node, action) the node to make; OUTCOME at a chance node that draws a
    new outcome, TERMINAL at a terminal node and AGAIN at a node cut off by MAX_DEPTH, ``walk``
    = (node, -1)."""
    n = np.int64(0)
    depth = 0
    while True:
        if nodes[n].terminal:
            break
        if nodes[n].chance:
            o = next_outcome(nodes, children, n, fparams[CHANCE_WIDENING])
            if o < 0:
                walk[0] = n
                walk[1] = -1
                return OUTCOME
            n = np.int64(o)
            continue
        a = select(nodes, children, prior, legal, n, noise, table, terms, fparams, iparams, scratch)
        if a < 0:  # no legal action: only a terminal node has none, but never loop on it
            break
        c = np.int64(children[n, a])
        depth += 1
        if c < 0:
            walk[0] = n
            walk[1] = a
            return FRESH
        n = c
        if depth >= iparams[MAX_DEPTH]:
            walk[0] = n
            walk[1] = -1
            return TERMINAL if nodes[n].terminal else AGAIN
    walk[0] = n
    walk[1] = -1
    return TERMINAL


# -- the root's results ----------------------------------------------------------------------------


@nb.njit(cache=True, error_model="numpy")
def _most_visited(r, nodes, children, legal, temperature):
    """The action to play by visits: the most visited (ties uniformly at random) at temperature
    0, else one drawn with probability proportional to ``visits ** (1 / temperature)``."""
    most = 0
    for a in range(children.shape[1]):
        most = max(most, child_visits(nodes, children, 0, a))
    if most == 0:
        return -1
    if temperature <= 0.0:
        ties = np.int64(0)
        for a in range(children.shape[1]):
            ties += legal[0, a] and child_visits(nodes, children, 0, a) == most
        pick = integer(r, ties)
        for a in range(children.shape[1]):
            if legal[0, a] and child_visits(nodes, children, 0, a) == most:
                if pick == 0:
                    return a
                pick -= 1
    total = 0.0
    for a in range(children.shape[1]):
        k = child_visits(nodes, children, 0, a)
        if k > 0:
            total += math.exp(math.log(k / most) / temperature)
    draw = uniform(r) * total
    last = -1
    for a in range(children.shape[1]):
        k = child_visits(nodes, children, 0, a)
        if k > 0:
            last = a
            draw -= math.exp(math.log(k / most) / temperature)
            if draw < 0.0:
                return a
    return last


@nb.njit(cache=True, error_model="numpy")
def results(r, nodes, children, prior, legal, noise, scratch, fparams, iparams, out, row):
    """The root's statistics into row ``row`` of ``out`` = (action, policy, visits, qvalues,
    value): visit counts and Q per action (0 where unvisited, as mctx's summary), the root's
    value, the policy (visit shares for PUCT and UCT; ``softmax(logits + completed Q)`` over the
    legal actions for Gumbel, mctx's ``action_weights``) and the index of the action to play
    (the most visited, or at a temperature drawn by visits; for Gumbel the best considered
    action; -1 where the root has no legal action)."""
    action, policy, visits, qvalues, value = out
    if nodes[0].terminal:
        for a in range(children.shape[1]):
            visits[row, a] = 0
            qvalues[row, a] = 0.0
            policy[row, a] = 0.0
        value[row] = nodes[0].value
        action[row] = -1
        return
    total = 0
    for a in range(children.shape[1]):
        c = children[0, a]
        visits[row, a] = nodes[c].visits if c >= 0 else 0
        qvalues[row, a] = qvalue(nodes, c) if c >= 0 else 0.0
        total += visits[row, a]
    value[row] = nodes[0].value
    if iparams[SELECTION] == GUMBEL:
        completed = scratch[0]
        scores = scratch[1]
        completed_qvalues(nodes, children, prior, np.int64(0), fparams, completed)
        most = np.int64(0)
        for a in range(children.shape[1]):
            most = max(most, visits[row, a])
        considered_scores(nodes, children, prior, legal, noise, completed, most, scores)
        action[row] = argmax_first(scores)
        top = -np.inf
        for a in range(children.shape[1]):
            if legal[0, a]:
                completed[a] += math.log(max(prior[0, a], TINY))
                top = max(top, completed[a])
        norm = 0.0
        for a in range(children.shape[1]):
            policy[row, a] = math.exp(completed[a] - top) if legal[0, a] else 0.0
            norm += policy[row, a]
        for a in range(children.shape[1]):
            policy[row, a] /= norm
    else:
        for a in range(children.shape[1]):
            policy[row, a] = visits[row, a] / total if total > 0 else 0.0
        action[row] = _most_visited(r, nodes, children, legal, fparams[TEMPERATURE])
