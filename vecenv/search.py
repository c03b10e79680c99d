"""Batched Monte Carlo tree search over a game's own rules.

``MCTS(game, simulations)`` searches N positions of a game at once, S simulations each,
inside compiled code: one tree per position, grown by copying the game's state records and
stepping them with its ``step``, the legal moves read from its observation's ``legal`` field
(every action is legal in a game without one, and a move its rules refuse loses, as they rule
it). Nothing new for a game to write. The selection rules are mctx's PUCT (``selection="puct"``,
MuZero's ``muzero_action_selection``), Gumbel MuZero's (``"gumbel"``: sequential halving with
Gumbel noise at the root, mctx's ``gumbel_muzero_policy``) and OpenSpiel's UCT (``"uct"``, its
``MCTSBot``); ``vecenv.kernels.search`` says where they differ from those references.

Leaves are evaluated by random rollouts inside the compiled search (``evaluator="rollout"``), as
worth 0 with uniform priors (``"uniform"``), or by a batched Python evaluator
``evaluator(obs, legal) -> (logits, values)``: ``obs`` the leaves' observations seen by the seat
to move there ({field: (T, ...)}, as ``selfplay``'s policies get them), ``legal`` (T, A) bool,
returning prior logits (T, A) and values (T,) for the seat to move, all finite; it is called once
for the roots and once per simulation for every tree at once, as mctx batches its
``recurrent_fn``, so a network evaluates thousands of leaves per call. The values of terminal
leaves come from the rules (the evaluator's are ignored there).

``MCTS.search(states, seed)`` returns a ``SearchResult`` of arrays: the action to play, the
policy (visit shares; Gumbel's improved policy), visit counts and Q per action, the root's value.
Tree i draws from the random stream of ``(seed, i)`` (or the stream word given for it), so the
same seed gives the same search for any thread count and any split of the batch.

An ``MCTS`` object holds its trees between searches and runs one search at a time: it is not
shared between threads (make one per thread; ``num_threads`` spreads one search's trees over
threads), and an evaluator that searches uses an ``MCTS`` of its own. A second search of the same
object while one runs, re-entered from its evaluator or from another thread, is a RuntimeError at
once. The float settings are finite numbers up to ``SETTING_LIMIT`` (1e100; ``c_base`` and
``dirichlet_alpha`` from 1e-100), inside which every search answers finite numbers.

A game with one discrete action per agent and no hidden information
(``registry.hidden_information``) can be searched. In a two-agent game of Kaggle's statuses
(``vecenv.kernels.turns``) the seat to move is the ACTIVE one and values are zero-sum (a node's
value is the mover's; a step that keeps the mover adds the next value, one that passes the move
subtracts it, as mctx's discount of -1); where both seats move at once (rps) the searching seat
chooses and the other's action is drawn uniformly from its legal ones. In a one-agent game
(2048, MinAtar) its agent moves until the episode ends and a node's value is the sum of the
rewards to come (returns in the hundreds want PUCT, whose Q is normalised by the node's and its
siblings', rather than UCT's constant).

Chance: a game that declares ``CHANCE`` (its step draws dice or tiles from the record's stream)
is stepped with words of the search's own stream, never the episode's, and an action that drew
leads to a chance node over the outcomes the search drew (``chance_widening``; see
``vecenv.kernels.search``): its value is their expectation. Such a game takes up to two nodes a
simulation.

The agent ``mcts`` of every two-agent game is this search playing the seat to move (random
rollouts, UCT, ``DEFAULT_SIMULATIONS`` simulations; ``"mcts:400"`` sets them): ``MCTSAgent``,
and ``agent_spec`` reads the names.
"""

import concurrent.futures
import dataclasses
import re
import threading

import numba
import numpy as np

from vecenv.kernels import build, tree_op
from vecenv.kernels import search as kernels
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.rng import seed_words
from vecenv.kernels.turns import ACTIVE, INVALID

from . import memory, variants
from .engine import Engine
from .inputs import SEED_LIMIT, fresh_seed
from .search_checks import (
    SETTING_LIMIT,
    bool_mask,
    check_searchable_game,
    finite,
    float_array,
    positive,
    searchable,
    searching_seats,
    tree_budget,
)
from .spec import is_integer

DEVICES = ("cpu", "cuda")
SELECTIONS = {"puct": kernels.PUCT, "uct": kernels.UCT, "gumbel": kernels.GUMBEL}
EVALUATORS = {"rollout": kernels.ROLLOUT, "uniform": kernels.UNIFORM}
DEFAULT_SIMULATIONS = 1000
MAX_SIMULATIONS = 2**24  # node indices stay int32 with room to spare
DEFAULT_ROLLOUT_LIMIT = 10_000  # plies of a rollout in a game without a time limit
TERMS = 2**16  # the most entries of the selection's table of visit counts
AGENT = "mcts"
_AGENT_NAME = re.compile(r"mcts(?::([0-9]+))?")


@dataclasses.dataclass
class SearchResult:
    """Per searched position (rows by episode; ``searched`` says which were):

    ``action`` (N,) int64, the action to play (one below the action's range where the position
    was not searched or has no legal action); ``policy`` (N, A) float64, the search's policy over
    the A actions (visit shares; for Gumbel, mctx's ``action_weights``); ``visit_counts`` (N, A)
    int64; ``qvalues`` (N, A) float64, each action's value for the seat that searched (0 where
    unvisited); ``root_value`` (N,) float64, the root's mean value; ``searched`` (N,) bool;
    ``seats`` (N,) int64, the seat each search played (-1 where none); ``terminal`` (N,) bool,
    the position is over: done, no seat to move, or a seat to move without a legal action
    (its action is then the one below the range, as the search has nothing to choose)."""

    action: np.ndarray
    policy: np.ndarray
    visit_counts: np.ndarray
    qvalues: np.ndarray
    root_value: np.ndarray
    searched: np.ndarray
    seats: np.ndarray
    terminal: np.ndarray


def _host_ones(shape):
    return np.ones(shape, dtype=np.bool_)


class MCTS:
    """Batched MCTS over positions of one game (see the module). One search at a
    time: an object is not shared between threads (a concurrent or re-entered search is a
    RuntimeError).

    Args:
        game: an ``Engine`` (its game, configuration and time limit) or a game's name, with its
            ``**configuration``.
        simulations: simulations per search (S).
        selection: "uct" (default: OpenSpiel's, the one for random rollouts), "puct" or
            "gumbel" (mctx's, for an evaluator's priors and values).
        evaluator: "rollout" (default), "uniform" or a batched Python callable.
        num_threads: threads over the trees; results never depend on it.
        c_init: PUCT's ``pb_c_init`` (mctx's 1.25).
        c_base: PUCT's ``pb_c_base`` (mctx's 19652).
        uct_c: UCT's exploration constant (2, as OpenSpiel's examples).
        max_considered: Gumbel MuZero's ``max_num_considered_actions`` (mctx's 16).
        gumbel_scale: the scale of Gumbel MuZero's root noise (mctx's 1).
        value_scale: the ``value_scale`` of Gumbel MuZero's Q transform (mctx's 0.1).
        maxvisit_init: the ``maxvisit_init`` of Gumbel MuZero's Q transform (mctx's 50).
        dirichlet_fraction: the share of AlphaZero's root noise in the priors, for PUCT and UCT
            (0: none; mctx's muzero_policy uses 0.25).
        dirichlet_alpha: the Dirichlet noise's alpha (mctx's 0.3).
        temperature: PUCT and UCT play the most visited action at 0, else one drawn with
            probability proportional to ``visits ** (1 / temperature)``.
        max_depth: mctx's ``max_depth`` (None: no cut-off).
        rollout_limit: the most plies of a rollout (default: the time limit, else 10,000).
        chance_widening: in a game with chance (its rules' ``CHANCE``), a chance node at its
            V-th visit draws a new outcome while it has fewer than ``ceil(V ** chance_widening)``
            (0.5: the square root; 0: one outcome; 1: a new one every visit).
        max_trees: the most trees held at once (positions beyond are searched in batches of
            it, with the same results); default: as many as the memory budget holds.
        memory_budget: the most bytes the trees may take (bytes or "16G", as ``vecenv.make``'s;
            default ``VECENV_MEMORY_BUDGET`` where set, else ``search_checks.TREE_BYTES``); one
            tree over it is a ValueError, saying how to raise it, before anything is allocated.
        device: "cpu", or "cuda" for the search on the GPU (``vecenv.cuda.search``: one thread
            a tree, leaves evaluated by "rollout" or "uniform"); a GPU engine (``vecenv.make(...,
            device="cuda")``) given as ``game`` searches there too.
    """

    def __new__(cls, game=None, *args, device="cpu", **kwargs):
        if device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
        if cls is MCTS and (device == "cuda" or getattr(game, "device", "cpu") == "cuda"):
            cls = variants.find("cuda", "search")()
        return super().__new__(cls)

    def __init__(
        self,
        game,
        simulations=DEFAULT_SIMULATIONS,
        *,
        selection="uct",
        evaluator="rollout",
        num_threads=1,
        c_init=1.25,
        c_base=19652.0,
        uct_c=2.0,
        max_considered=16,
        gumbel_scale=1.0,
        value_scale=0.1,
        maxvisit_init=50.0,
        dirichlet_fraction=0.0,
        dirichlet_alpha=0.3,
        temperature=0.0,
        max_depth=None,
        rollout_limit=None,
        chance_widening=0.5,
        max_trees=None,
        memory_budget=None,
        device="cpu",
        **configuration,
    ):
        if isinstance(game, Engine):
            if configuration:
                raise ValueError("an engine brings its configuration: give none beside it")
            engine = game
        else:
            check_searchable_game(game)  # before an engine is made (and compiled)
            engine = Engine(game, num_envs=1, seed=0, autoreset="disabled", **configuration)
        self.engine = engine
        self.name = engine.name
        game_of = searchable(engine, getattr(self, "device", "cpu"))
        self.low, self.num_actions, self.chance = game_of.low, game_of.num_actions, game_of.chance
        self._legal = game_of.legal
        self.simulations = positive(simulations, "simulations", MAX_SIMULATIONS)
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        if not callable(evaluator) and evaluator not in EVALUATORS:
            raise ValueError(
                f"evaluator must be {', '.join(map(repr, EVALUATORS))} or a callable "
                f"(obs, legal) -> (logits, values), got {evaluator!r}"
            )
        self.selection, self.evaluator = selection, evaluator
        max_threads = numba.config.NUMBA_NUM_THREADS
        self.num_threads = positive(num_threads, "num_threads", max_threads)
        self.max_depth = None if max_depth is None else positive(max_depth, "max_depth", 2**31 - 1)
        limit = engine.max_episode_steps or DEFAULT_ROLLOUT_LIMIT
        self.rollout_limit = (
            limit if rollout_limit is None else positive(rollout_limit, "rollout_limit", 2**62)
        )
        f = np.zeros(kernels.F_PARAMS)
        big, tiny = SETTING_LIMIT, 1.0 / SETTING_LIMIT
        f[kernels.C_INIT] = finite(c_init, "c_init", 0.0, big)
        f[kernels.C_BASE] = finite(c_base, "c_base", tiny, big)
        f[kernels.UCT_C] = finite(uct_c, "uct_c", 0.0, big)
        f[kernels.VALUE_SCALE] = finite(value_scale, "value_scale", 0.0, big)
        f[kernels.MAXVISIT_INIT] = finite(maxvisit_init, "maxvisit_init", 0.0, big)
        f[kernels.EPSILON] = 1e-8
        f[kernels.DIRICHLET_FRACTION] = finite(dirichlet_fraction, "dirichlet_fraction", 0.0, 1.0)
        f[kernels.DIRICHLET_ALPHA] = finite(dirichlet_alpha, "dirichlet_alpha", tiny, big)
        f[kernels.GUMBEL_SCALE] = finite(gumbel_scale, "gumbel_scale", 0.0, big)
        f[kernels.TEMPERATURE] = finite(temperature, "temperature", 0.0, big)
        f[kernels.CHANCE_WIDENING] = finite(chance_widening, "chance_widening", 0.0, 1.0)
        i = np.zeros(kernels.I_PARAMS, dtype=np.int64)
        i[kernels.SELECTION] = SELECTIONS[selection]
        i[kernels.SIMULATIONS] = self.simulations
        i[kernels.MAX_DEPTH] = self.max_depth or 2**62
        i[kernels.MAX_CONSIDERED] = positive(max_considered, "max_considered", 2**16)
        i[kernels.ROLLOUT_LIMIT] = self.rollout_limit
        i[kernels.EVALUATION] = kernels.CALLBACK if callable(evaluator) else EVALUATORS[evaluator]
        i[kernels.MAX_STEPS] = engine._max_steps
        i[kernels.LOW] = self.low
        self.memory_budget = memory_budget
        # A simulation makes a node, or a chance node and its first outcome.
        self._nodes = (2 if self.chance else 1) * self.simulations + 1
        per_tree = self._tree_bytes()
        budget, whose = tree_budget(memory_budget)
        # Gumbel's sequential halving schedule: (considered + 1) x S int32, held once.
        schedule = 0
        if selection == "gumbel":
            schedule = min(int(i[kernels.MAX_CONSIDERED]), self.num_actions) + 1
            schedule *= self.simulations * 4
        if per_tree + schedule > budget:
            extra = f" and Gumbel's schedule {memory.show(schedule)}" if schedule else ""
            raise ValueError(
                f"one tree of {self.simulations} simulations of {self.name} takes "
                f"{memory.show(per_tree)}{extra}, over the memory budget of "
                f"{memory.show(budget)} for its trees ({whose}); lower simulations, or raise "
                "the budget: "
                f"MCTS(..., memory_budget='16G') in Python, {memory.ENV_VAR}=16G for the "
                "command line's agents (mcts:N) and for Python"
            )
        budget -= schedule
        self.max_trees = budget // per_tree
        if max_trees is not None:
            self.max_trees = min(self.max_trees, positive(max_trees, "max_trees", 2**30))
        # Sequential halving's schedule, which only Gumbel's root selection reads (a root never
        # has more than A legal actions to consider).
        table = np.zeros((1, 1), dtype=np.int32)
        if selection == "gumbel":
            rows = min(int(i[kernels.MAX_CONSIDERED]), self.num_actions)
            table = kernels.considered_visits(rows, self.simulations)
        # The selection's factor per visit count (a node has at most S + 1 visits; past the
        # table's end the search computes it).
        terms = np.zeros((2, min(self.simulations + 2, TERMS)))
        kernels.visit_terms(f, i, terms)
        self._params = (f, i, table, terms)
        self._trees = 0  # trees allocated
        self._drivers = None
        self._pool = None  # the threads of a search on several
        self._busy = threading.Lock()  # held while a search runs (``_search``)
        self._searching = None  # the thread that holds it

    # -- the game --------------------------------------------------------------------------------

    def _tree_bytes(self):
        """What one tree takes: its nodes, their records and per-action arrays, its scratch."""
        e = self.engine
        m, a = self._nodes, self.num_actions
        per_node = kernels.NODE.itemsize + e.state_dtype.itemsize + a * (4 + 8 + 1)
        obs = memory.observation_bytes(e.observation, e.num_agents)
        return m * per_node + e.state_dtype.itemsize + obs + a * (8 * 3 + 2) + 64

    def _layout(self, trees):
        """The trees' arrays for ``trees`` trees, as host arrays (the GPU search copies them
        to the device): ``(tree, game, obs)``, ``tree`` = (nodes, children, prior, legal,
        Gumbel noise, scratch rows), ``game`` = (node records, a rollout's records, None where
        the legal masks' view goes (``_with_legal_view``: a view of ``obs``, made where the
        arrays live), action rows, reward rows, where a walk down ends), ``obs`` the observation
        arrays (see ``kernels.search`` and ``kernels.search_drivers``)."""
        e = self.engine
        m, a = self._nodes, self.num_actions
        tree = (
            np.zeros((trees, m), dtype=kernels.NODE),
            np.full((trees, m, a), -1, dtype=np.int32),
            np.zeros((trees, m, a), dtype=np.float64),
            np.zeros((trees, m, a), dtype=np.bool_),
            np.zeros((trees, a), dtype=np.float64),
            np.zeros((trees, 2, a), dtype=np.float64),
        )
        game = (
            np.zeros((trees, m), dtype=e.state_dtype),
            np.zeros(trees, dtype=e.state_dtype),
            None,
            np.zeros((trees, 2), dtype=e._act_dtype),
            np.zeros((trees, 2), dtype=np.float64),
            np.zeros((trees, 2), dtype=np.int64),
        )
        obs = tuple(
            np.zeros(((trees,) if f.shared else (trees, e.num_agents)) + f.shape, dtype=f.dtype)
            for f in e.observation
        )
        return tree, game, obs

    def _with_legal_view(self, game, obs, ones=_host_ones):
        """``game`` of ``_layout`` (its arrays wherever they live) with the legal masks' view
        (T, 1 or 2, A) of the observation arrays ``obs`` in its place, or ``ones(shape)``
        (every action legal; host arrays by default) for a game without a ``legal`` field."""
        trees, a = obs[0].shape[0], self.num_actions
        if self._legal is None:
            view = ones((trees, 1, a))
        else:
            k, shared = self._legal
            view = obs[k].reshape((trees, 1, a)) if shared else obs[k]
        return game[:2] + (view,) + game[3:]

    def _allocate(self, trees):
        """The trees' arrays for ``trees`` trees (kept for later searches), and the context that
        hands their addresses to ``kernels.tree_op.tree_op``."""
        m, a = self._nodes, self.num_actions
        (nodes, children, prior, legal, noise, scratch), game, obs = self._layout(trees)
        self._tree = (nodes, children, legal)
        self._obs = obs
        self._game = self._with_legal_view(game, obs)
        walk = game[5]
        self._used = np.zeros(trees, dtype=np.int64)
        self._logits = np.zeros((trees, a), dtype=np.float64)
        fparams, iparams, table, terms = self._params
        # Every array the context addresses is held here, for as long as the context is used.
        self._held = (
            nodes,
            children,
            prior,
            legal,
            noise,
            scratch,
            self._logits,
            walk,
            fparams,
            iparams,
            table,
        )
        context = np.zeros(tree_op.CTX_SIZE, dtype=np.int64)
        for k, arr in enumerate(self._held):
            assert arr.flags.c_contiguous
            context[k] = arr.ctypes.data
        context[tree_op.CTX_TABLE_ROWS], context[tree_op.CTX_TABLE_COLUMNS] = table.shape
        context[tree_op.CTX_TERMS] = terms.ctypes.data
        context[tree_op.CTX_TERMS_SIZE] = terms.shape[1]
        context[tree_op.CTX_TREES] = trees
        context[tree_op.CTX_NODES_PER_TREE] = m
        context[tree_op.CTX_ACTIONS] = a
        self._context = context
        self._context_address = context.ctypes.data
        self._trees = trees

    def _kernels(self):
        if self._drivers is None:
            e = self.engine
            constants = (("ONE_AGENT", e.num_agents == 1), ("CHANCE", self.chance))
            self._drivers = build.load_drivers(e.name, e.rules, True, "search", constants=constants)
        return self._drivers

    # -- searching -------------------------------------------------------------------------------

    def search(self, states, seed=None, mask=None, seats=None):
        """Search the positions ``states`` (records of the game, e.g. ``engine.get_state()``,
        checked as ``set_state`` checks them); returns a ``SearchResult``.

        ``seed``: an int (tree i draws from the stream of ``(seed, i)``; None draws a seed) or
        an array of N uint64 stream words, one per tree (advanced in place). ``mask`` (N,) bool:
        which positions to search (default all); positions over or without a seat to move are
        never searched. ``seats`` (N,) ints: the seat searching each position, which must be
        to move there; default the seat to move, and a position where both seats move at once
        needs it.
        """
        states = np.asarray(states)
        if states.dtype != self.engine.state_dtype or states.ndim != 1:
            raise ValueError(
                f"states must be a 1-d array of {self.name}'s records (engine.get_state()), got "
                f"{states.dtype} of shape {states.shape}"
            )
        self.engine.check_state(states)
        states = np.ascontiguousarray(states)
        n = states.shape[0]
        words = self._words(seed, n)
        mask = np.ones(n, dtype=np.bool_) if mask is None else bool_mask(mask, n, "mask")
        result = self._search(states, words, mask, seats)
        if isinstance(seed, np.ndarray):
            seed[...] = words["rng"]
        return result

    def _words(self, seed, n):
        words = np.zeros(n, dtype=AGENT_RNG)
        if seed is None or is_integer(seed):
            seed = fresh_seed() if seed is None else seed
            if not 0 <= int(seed) < SEED_LIMIT:
                raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
            out = np.zeros(n, dtype=np.uint64)
            seed_words(np.uint64(int(seed)), out, np.ones(n, dtype=np.bool_))
            words["rng"] = out
            return words
        given = np.asarray(seed)
        if given.dtype != np.uint64 or given.shape != (n,):
            raise ValueError(
                f"seed must be an int or ({n},) uint64 stream words, got {given.dtype} "
                f"of shape {given.shape}"
            )
        words["rng"] = given
        return words

    def _search(self, states, words, mask, seats):
        """``search`` over trusted records (an engine's) and stream records ``words`` (advanced
        in place). One search at a time: the trees, the context and the result block are the
        object's, so a second search while one runs (from its own evaluator, or another
        thread) would overwrite them under the first; it is refused at once instead."""
        if not self._busy.acquire(blocking=False):
            if self._searching == threading.get_ident():
                raise RuntimeError(
                    f"{self!r} is searching already: its evaluator called it again; an evaluator "
                    "that searches needs an MCTS object of its own"
                )
            raise RuntimeError(
                f"{self!r} is searching on another thread: an MCTS object is not shared "
                "between threads; make one per thread"
            )
        self._searching = threading.get_ident()
        try:
            return self._search_unshared(states, words, mask, seats)
        finally:
            self._searching = None
            self._busy.release()

    def _search_unshared(self, states, words, mask, seats):
        n = states.shape[0]
        seats, running = searching_seats(states, mask, seats, self.engine.num_agents, self.name)
        searched = mask & running
        rows = np.flatnonzero(searched).astype(np.int64, copy=False)
        out = self._results(n)
        index = out[0]
        if rows.size:
            drivers = self._kernels()
            chunk = min(rows.size, self.max_trees)
            if chunk > self._trees:
                self._allocate(chunk)
            self._begin_batch(states, words, out)
            seats = np.ascontiguousarray(seats, dtype=np.int64)
            for start in range(0, rows.size, chunk):
                part = rows[start : start + chunk]
                self._run(drivers, states, part, seats[part], words)
            self._end_batch(words, out)
        action = np.where(index >= 0, index + self.low, self.low - 1)
        return SearchResult(
            terminal=~running | (searched & (index < 0)),
            action=action,
            policy=out[1],
            visit_counts=out[2],
            qvalues=out[3],
            root_value=out[4],
            searched=searched,
            seats=np.where(searched, seats, -1),
        )

    def _results(self, n):
        """The result arrays of a search of ``n`` positions, by episode, as the trees write
        them: (the action's index, -1 where none was chosen; policy; visits; Q-values; root
        value). They are views of one block of 8-byte words, at ``_result_offsets``, so that
        the compiled search learns all their addresses from one."""
        a = self.num_actions
        offsets = _result_offsets(n, a)
        block = np.zeros(offsets[-1], dtype=np.float64)
        index = block[: offsets[1]].view(np.int64)
        index.fill(-1)
        return (
            index,
            block[offsets[1] : offsets[2]].reshape(n, a),
            block[offsets[2] : offsets[3]].view(np.int64).reshape(n, a),
            block[offsets[3] : offsets[4]].reshape(n, a),
            block[offsets[4] : offsets[5]],
        )

    def _begin_batch(self, states, words, out):
        """Before the trees of one search run: where they read the streams ``words`` and write
        the results ``out`` (by episode)."""
        context = self._context
        context[tree_op.CTX_WORDS] = words.ctypes.data
        n = states.shape[0]
        start = out[0].ctypes.data  # the block's (``_results``)
        offsets = _result_offsets(n, self.num_actions)
        context[tree_op.CTX_ACTION : tree_op.CTX_VALUE + 1] = [start + 8 * k for k in offsets[:5]]
        context[tree_op.CTX_EPISODES] = n

    def _end_batch(self, words, out):
        """After the trees of one search ran (the streams and results are in place here)."""

    def _run(self, drivers, states, rows, seats, words):
        cfgs, tree, game, obs = self.engine._cfg, self._tree, self._game, self._obs
        iparams = self._params[1]
        op = tree_op.tree_op_address()
        context = self._context_address
        each = self._spread(rows.size)
        if not callable(self.evaluator):
            each(
                drivers.run, states, rows, seats, cfgs, tree, game, obs, words, iparams, op, context
            )
            return
        t = rows.size
        leaves = np.zeros(t, dtype=np.int64)
        codes = np.zeros(t, dtype=np.int64)
        movers = seats.copy()
        each(drivers.begin, states, rows, seats, cfgs, tree, game, obs, self._used)
        values = self._evaluate(movers)
        each(drivers.begin_values, rows, values, op, context)
        for _ in range(self.simulations):
            each(
                drivers.descend,
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
                self._used,
                leaves,
                codes,
                movers,
            )
            values = self._evaluate(movers)
            each(drivers.ascend, rows, leaves, codes, values, op, context)
        each(drivers.finish, rows, op, context)

    def _spread(self, trees):
        """A function calling a compiled loop over the ``trees`` trees: on this thread, or on
        ``num_threads`` threads at once, each a contiguous range of them (the loops run
        without the GIL; every tree's arithmetic is its own, so the results are the same)."""
        threads = min(self.num_threads, trees)
        if threads <= 1:
            return lambda fn, *args: fn(*args, 0, trees)
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.num_threads)
        bounds = np.linspace(0, trees, threads + 1).astype(np.int64)

        def each(fn, *args):
            parts = [
                self._pool.submit(fn, *args, int(lo), int(hi))
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
            ]
            for part in parts:
                part.result()

        return each

    def _evaluate(self, movers):
        """The Python evaluator's values (T,) for the T trees' leaves, whose observations the
        observation rows hold (seen by ``movers``, -1 at a terminal leaf); its logits (T, A) go
        into the context's logits rows."""
        t = movers.shape[0]
        seat = np.maximum(movers, 0)
        rows = np.arange(t)
        obs = {}
        for f, arr in zip(self.engine.observation, self._obs, strict=True):
            obs[f.name] = arr[:t].copy() if f.shared else arr[rows, seat]
        legal_view = self._game[2]
        legal = legal_view[rows, np.minimum(seat, legal_view.shape[1] - 1)]
        legal &= (movers >= 0)[:, None]
        answer = self.evaluator(obs, legal)
        if not isinstance(answer, tuple) or len(answer) != 2:
            raise ValueError("the evaluator must return (logits, values)")
        self._logits[:t] = float_array(answer[0], (t, self.num_actions), "logits")
        # a node's mean is updated as (mean * visits + value) / (visits + 1)
        limit = np.finfo(np.float64).max / (4.0 * (self.simulations + 2))
        return float_array(answer[1], (t,), "values", limit)

    # -- pickling: the settings travel, the trees and compiled code are made again ----------------

    def __getstate__(self):
        state = dict(self.__dict__)
        for key in (
            "_tree",
            "_game",
            "_obs",
            "_drivers",
            "_held",
            "_context",
            "_context_address",
            "_used",
            "_logits",
            "_pool",
            "_batch",
            "_busy",
            "_searching",
        ):
            state.pop(key, None)
        state["_trees"] = 0
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._drivers = None
        self._pool = None
        self._busy = threading.Lock()
        self._searching = None

    def __repr__(self):
        return (
            f"MCTS({self.name!r}, simulations={self.simulations}, selection={self.selection!r}, "
            f"evaluator={_evaluator_name(self.evaluator)!r})"
        )


def _result_offsets(n, a):
    """Where each of a search's results starts in their block of 8-byte words, and its end:
    the action indices (n), policies, visits, Q-values (n x a each), root values (n)."""
    return (0, n, n + n * a, n + 2 * n * a, n + 3 * n * a, 2 * n + 3 * n * a)


def _evaluator_name(evaluator):
    if isinstance(evaluator, str):
        return evaluator
    return getattr(evaluator, "__name__", type(evaluator).__name__)


# -- the agent ``mcts`` ----------------------------------------------------------------------------

# What an agent may set of the search (the game, the threads and the trees' memory are the
# match's).
AGENT_OPTIONS = (
    "selection",
    "evaluator",
    "c_init",
    "c_base",
    "uct_c",
    "max_considered",
    "gumbel_scale",
    "value_scale",
    "maxvisit_init",
    "dirichlet_fraction",
    "dirichlet_alpha",
    "temperature",
    "max_depth",
    "rollout_limit",
)


class MCTSAgent:
    """The agent ``mcts``: ``MCTS`` playing the seat to move, ``simulations`` a move, with the
    search's other settings in ``options`` (``selection="gumbel"``, ``evaluator=network``,
    ...). Its name is ``mcts`` with the default settings, ``mcts:N`` with N simulations and no
    options (both spell it on the command line), or ``name``."""

    def __init__(self, simulations=DEFAULT_SIMULATIONS, name=None, **options):
        self.simulations = positive(simulations, "the agent mcts's simulations", MAX_SIMULATIONS)
        unknown = sorted(set(options) - set(AGENT_OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown mcts options {unknown}; the agent takes {', '.join(AGENT_OPTIONS)}"
            )
        self.options = dict(options)
        if name is None:
            name = AGENT
            if options:
                name = f"{AGENT}({self.simulations}, {_describe(options)})"
            elif self.simulations != DEFAULT_SIMULATIONS:
                name = f"{AGENT}:{self.simulations}"
        self.name = self.__name__ = str(name)

    def searcher(self, engine):
        """The search this agent runs on ``engine``'s episodes."""
        return MCTS(engine, self.simulations, num_threads=engine.num_threads, **self.options)

    def _key(self):
        return (self.simulations, tuple(sorted((k, repr(v)) for k, v in self.options.items())))

    def __eq__(self, other):
        return isinstance(other, MCTSAgent) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"MCTSAgent({self.name!r})"


def _describe(options):
    return ", ".join(f"{k}={_evaluator_name(v)}" for k, v in sorted(options.items()))


def agent_spec(agent):
    """The ``MCTSAgent`` that ``agent`` names ("mcts", "mcts:N" or an ``MCTSAgent``), or None
    where it names none; a malformed "mcts:..." is a ValueError."""
    if isinstance(agent, MCTSAgent):
        return agent
    if not isinstance(agent, str) or not (agent == AGENT or agent.startswith(AGENT + ":")):
        return None
    match = _AGENT_NAME.fullmatch(agent)
    if match is None or (match.group(1) is not None and int(match.group(1)) < 1):
        raise ValueError(
            f"{agent!r}: the agent mcts is spelt 'mcts' ({DEFAULT_SIMULATIONS} simulations a "
            "move) or 'mcts:N', N simulations"
        )
    if match.group(1) is None:
        return MCTSAgent()
    return MCTSAgent(int(match.group(1)))


class SeatSearch:
    """An ``MCTSAgent`` in the seats of a two-agent engine's episodes (``selfplay.Seats``):
    where its seat is to move it searches, all such episodes at once, and plays the action the
    search chooses. Each episode's search draws from its seat's random stream (the seats'
    ``rngs``), so its moves depend on its own episode only."""

    def __init__(self, engine, agent):
        self.agent = agent
        self.mcts = agent.searcher(engine)

    def moves(self, seats, seat_of, actions):
        """The moves of the episodes where seat ``seat_of[i]`` is this agent's and to move, into
        ``actions``; where the search finds no legal move the seat is INVALID (as an agent
        answering no move is in Kaggle)."""
        engine = seats.engine
        states = engine._states
        n = engine.num_envs
        rows = np.arange(n)
        status = states["status"]
        to_move = (
            (states["done"] == 0)
            & (status[rows, seat_of] == ACTIVE)
            & (seats.kinds[rows, seat_of] < 0)
        )
        if not to_move.any():
            return
        words = np.zeros(n, dtype=AGENT_RNG)
        words["rng"] = seats.rngs["rng"][rows, seat_of]
        result = self.mcts._search(states, words, to_move, seat_of)
        seats.rngs["rng"][rows[to_move], seat_of[to_move]] = words["rng"][to_move]
        played = result.searched & (result.action >= self.mcts.low)
        actions[rows[played], seat_of[played]] = result.action[played]
        stuck = to_move & ~played
        status[rows[stuck], seat_of[stuck]] = INVALID
