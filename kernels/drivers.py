"""Batch drivers: the only loops over episodes.

This file is a template. ``build.py`` writes one copy per game with the binding block below replaced
by imports of that game's rules, so numba compiles (and caches, keyed by the copy's own file) one
set of drivers per game with the rules inlined. Nothing here is called from this module itself.

The configuration reaches the drivers as a one-element record array ``cfgs``.
Rules protocol (one episode's record ``s``, configuration record ``cfg``; compile rules with
``error_model="numpy"`` as the drivers are, so divisions carry no zero-divisor branch and follow
numpy's inf/nan semantics, as the reference implementations do):
- ``reset(s, cfg)``: start an episode, drawing from ``s.rng`` only;
- ``step(s, cfg, actions, rewards) -> int``: apply this episode's flat action row, write one reward
  per agent, return 0 while running and non-zero when the episode terminates;
- ``observe(s, cfg, obs, i)``: write episode ``i``'s observation into the arrays of tuple ``obs``;
- optionally ``observe_step(s, cfg, obs, i)``: the same after a step that continued the episode,
  when ``obs`` still holds its observation from before the step (every other write is a full
  ``observe``): a game whose step changes a few cells of a large observation writes only those.
  The engine hands out its observation arrays read-only, so nothing else writes into them.
Beside them ``rules.py`` declares ``FIELDS`` (the state's fields after the engine's header, or a
function of the configuration returning them) and may declare ``STATE_BOUNDS`` ({field: (lo, hi)})
and ``check_state(records, config) -> message or None``, which ``set_state`` uses to refuse
records the rules cannot run.
"""

import numba as nb
import numpy as np
from numba.core import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

# The action checks, shared by every game: the bindings rebind them for continuous actions.
from vecenv.kernels.actions import count_bad_discrete as count_bad_actions
from vecenv.kernels.actions import first_bad_discrete as first_bad_action
from vecenv.kernels.state import ACTION_MAX, DISABLED, SAME_STEP, TERMINATED, TRUNCATED
from vecenv.kernels.turns import ACTIVE
from vecenv.kernels.views import borrowed, pointer

# >>> bindings
game_reset = game_step = game_observe = game_observe_step = game_act = None
ACTION_DISCRETE = True
# <<< bindings


@nb.njit(cache=True, error_model="numpy", inline="always")
def _begin(s, cfg, obs, i):
    s.step = 0
    s.done = 0
    game_reset(s, cfg)
    game_observe(s, cfg, obs, i)


@nb.njit(cache=True, error_model="numpy")
def reset(states, cfgs, obs, mask, words, reseed):
    """Start the episodes where ``mask``; with ``reseed`` their streams restart from ``words``."""
    for i in range(states.shape[0]):
        if mask[i]:
            s = states[i]
            if reseed:
                s.rng = words[i]
            _begin(s, cfgs[0], obs, i)


@nb.njit(cache=True, error_model="numpy")
def observe(states, cfgs, obs, mask):
    """Rewrite the observations of the episodes where ``mask`` (after a state was set)."""
    for i in range(states.shape[0]):
        if mask[i]:
            s = states[i]
            game_observe(s, cfgs[0], obs, i)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _act(s, cfg, obs, i, kinds, memory, rngs, actions):
    """The built-in agents' moves in running episode ``i`` (see ``act_agents``)."""
    # The seats to move, as bits: in a turn-based game which seat moves is a coin flip from one
    # episode to the next, a branch per seat mispredicted half the time, while the loop over the
    # bits runs once per episode.
    to_move = 0
    for k in range(kinds.shape[1]):
        to_move |= np.int64((kinds[i, k] >= 0) & (s.status[k] == ACTIVE)) << k
    while to_move != 0:
        k = trailing_zeros(to_move)
        to_move &= to_move - 1
        actions[i, k] = game_act(kinds[i, k], obs, i, k, s.step, cfg, memory[i, k], rngs[i, k])


@nb.njit(cache=True, error_model="numpy", inline="always")
def _flat(a):
    """C-contiguous ``a`` as one dimension, uncounted (see ``borrowed``): numba's reshape of a
    counted array costs two atomic operations and a call of its reshape helper, a small batch's
    step."""
    return nb.carray(pointer(a.ctypes.data), (a.size,), a.dtype)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _take_actions(src, actions, low, high):
    """Copy ``src`` (a face's actions, of its own integer or float dtype, as many values as
    ``actions``) into ``actions`` (the kernels' dtype, a scratch array of the face's), checking
    them in the same vectorised pass (as ``count_bad_actions``). Returns -1, or the first bad
    episode (then only that scratch array changed)."""
    values = _flat(src)
    out = _flat(actions)
    lo = low[0]
    hi = high[0]
    bad = 0
    for k in range(values.size):
        a = values[k]
        out[k] = a
        if ACTION_DISCRETE:
            bad += np.int64(a < lo) + np.int64(a > hi)
        else:
            bad += np.int64(not abs(a) <= ACTION_MAX)
    if bad > 0:
        return first_bad_action(src.reshape(actions.shape), low, high)
    return -1


@nb.njit(cache=True, error_model="numpy", inline="always")
def _publish(s, i, rewards, terminated, truncated, out):
    """Episode ``i``'s step results into a face's own buffers (PufferLib's): ``out`` is
    ``(src, rewards32, terminals, truncations, masks, copies, running, ended)``, arrays (N,
    agents, ...): float32 rewards; bool flags per agent, or None where the engine's own flags are
    the face's (one agent); ``masks`` (or None) whether each agent is ACTIVE; ``copies`` (or None)
    pairs of byte views (observation field, its place in the face's rows); ``running`` float64,
    each agent's return so far in its episode; ``ended`` (N, agents, 2) float64, the episodes
    ended and the sum of their returns, until the face reads and clears them (``_publish_end``
    counts an episode that ends, in the step's branch that ends it)."""
    _, out_rewards, out_terminals, out_truncations, masks, copies, running, _ = out
    for k in range(rewards.shape[1]):
        r = rewards[i, k]
        out_rewards[i, k] = r
        running[i, k] += r
    _publish_flags(i, terminated, out_terminals)
    _publish_flags(i, truncated, out_truncations)
    _publish_masks(s, i, masks)
    _publish_copies(i, copies)


@nb.njit(cache=True, error_model="numpy", inline="always")
def _publish_end(i, rewards, out):
    """Episode ``i`` ended at this step: count it, with its return (this step's reward
    included), and leave its running return at minus that reward, which ``_publish`` then adds."""
    running = out[6]
    ended = out[7]
    for k in range(rewards.shape[1]):
        r = rewards[i, k]
        ended[i, k, 0] += 1.0
        ended[i, k, 1] += running[i, k] + r
        running[i, k] = -r


def _publish_flags(i, flags, out):
    """Episode ``i``'s flag into each of its agents' rows of ``out`` (nothing when None)."""


@overload(_publish_flags, inline="always")
def _publish_flags_impl(i, flags, out):
    if isinstance(out, types.NoneType):
        return lambda i, flags, out: None

    def impl(i, flags, out):
        for k in range(out.shape[1]):
            out[i, k] = flags[i]

    return impl


def _publish_masks(s, i, masks):
    """Whether each agent of episode ``i`` is ACTIVE, into ``masks`` (nothing when None)."""


@overload(_publish_masks, inline="always")
def _publish_masks_impl(s, i, masks):
    # Chosen by type, so that a game without agent statuses never types ``s.status``.
    if isinstance(masks, types.NoneType):
        return lambda s, i, masks: None

    def impl(s, i, masks):
        for k in range(masks.shape[1]):
            masks[i, k] = s.status[k] == ACTIVE

    return impl


def _publish_copies(i, copies):
    """Episode ``i``'s observation fields into their places (nothing when None): ``copies`` is
    ``(sources, targets)``, byte views (N, 1 or agents, bytes) of each field and (N, agents,
    bytes) of its place; a shared field (one row) goes to every agent."""


@overload(_publish_copies, inline="always")
def _publish_copies_impl(i, copies):
    if isinstance(copies, types.NoneType):
        return lambda i, copies: None

    def impl(i, copies):
        sources, targets = copies
        for f in range(len(sources)):
            src = sources[f]
            dst = targets[f]
            for k in range(dst.shape[1]):
                row = k if src.shape[1] > 1 else 0
                for b in range(dst.shape[2]):
                    dst[i, k, b] = src[i, row, b]

    return impl


@nb.njit(cache=True, error_model="numpy", inline="always")
def _c_contiguous(a):
    """Whether ``a`` (typed of any layout) is C-contiguous."""
    expected = a.itemsize
    for d in range(a.ndim - 1, -1, -1):
        if a.shape[d] != 1 and a.strides[d] != expected:
            return False
        expected *= a.shape[d]
    return True


TABLE_SLOTS = 21


@nb.njit(cache=True, error_model="numpy", inline="always")
def _tabled(addrs, state_t, cfg_t, action_t, obs_t, obs_shape):
    """The engine's arrays from their addresses in ``addrs`` (see ``step_bound``): states,
    configuration, flat actions, low, high, rewards, terminated, truncated, observations and final
    observations (one-field tuples), as a tuple in ``step``'s order."""
    n = addrs[14]
    a = 1  # a constant: every per-agent loop of the inlined step is one pass
    w = addrs[16]
    return (
        nb.carray(pointer(addrs[0]), (n,), state_t),
        nb.carray(pointer(addrs[1]), (1,), cfg_t),
        nb.carray(pointer(addrs[2]), (n, a * w), action_t),
        nb.carray(pointer(addrs[3]), (a * w,), action_t),
        nb.carray(pointer(addrs[4]), (a * w,), action_t),
        nb.carray(pointer(addrs[5]), (n, a), np.float64),
        nb.carray(pointer(addrs[6]), (n,), np.bool_),
        nb.carray(pointer(addrs[7]), (n,), np.bool_),
        (nb.carray(pointer(addrs[8]), (n, a) + obs_shape, obs_t),),
        (nb.carray(pointer(addrs[9]), (n, a) + obs_shape, obs_t),),
    )


@nb.njit(cache=True, error_model="numpy", inline="always")
def _fits(src, n, w):
    """Whether ``src`` (typed of any layout) holds n rows of w action values, C-contiguous."""
    return src.shape[0] == n and src.size == n * w and _c_contiguous(src)


@nb.njit(cache=True, error_model="numpy")
def step_bound(table, state_t, cfg_t, action_t, obs_t, obs_shape, src):
    """``step`` with ``out`` (a face's buffers, no masks or copies) for an engine of one
    observation field, over arrays given by their addresses: numba unboxes one int and one array
    per call instead of about fifteen arrays (each costs tens of nanoseconds: a small batch's
    whole step).

    ``table`` is the address of an int64 array holding the addresses of the engine's states,
    configuration, flat actions, low, high and rewards, of the terminated and truncated flags
    (the face's own, one agent: the engine's step writes them), the engine's observation and
    final observation, then of the face's rewards and statistics (``running``, ``ended``), then
    N, agents (1, which the kernel takes as a constant), action width, the autoreset mode and the
    time limit (slots 14 to 18), then the face's steps since its last report and the steps
    between reports (slots 19 and 20). The dtypes and the field's shape come as arguments (their
    types are the arrays' types). The caller keeps every array alive and C-contiguous.

    ``src``, the face's actions, is typed of any layout: the caller checks its class, dtype and
    number of dimensions (what its type rests on); its rows and layout are checked here.
    Returns -1, or the first episode with a bad action (nothing moved), or -2: stepped, and
    slot 19 reached slot 20 (the face reports and clears it), or -3: ``src`` has not N * agents
    rows of the action's size, or is not C-contiguous (nothing moved)."""
    addrs = nb.carray(pointer(table), (TABLE_SLOTS,), np.int64)
    n = addrs[14]
    if not _fits(src, n, addrs[16]):
        return -3
    arrays = _tabled(addrs, state_t, cfg_t, action_t, obs_t, obs_shape)
    out = (
        nb.carray(pointer(src.ctypes.data), (src.size,), src.dtype),
        nb.carray(pointer(addrs[10]), (n, 1), np.float32),
        None,
        None,
        None,
        None,
        nb.carray(pointer(addrs[11]), (n, 1), np.float64),
        nb.carray(pointer(addrs[12]), (n, 1, 2), np.float64),
    )
    states, cfgs, flat, low, high, rewards, terminated, truncated, obs, final_obs = arrays
    bad = step(
        states,
        cfgs,
        flat,
        low,
        high,
        rewards,
        terminated,
        truncated,
        obs,
        final_obs,
        addrs[17],
        addrs[18],
        None,
        out,
    )
    if bad >= 0:
        return bad
    addrs[19] += 1
    if addrs[19] == addrs[20]:
        return -2
    return -1


@nb.njit(cache=True, error_model="numpy")
def step_own(table, state_t, cfg_t, action_t, obs_t, obs_shape, src):
    """``step`` of an engine of one agent and one observation field into its own buffers, over
    arrays given by their addresses as for ``step_bound`` (slots 10 to 13, 19 and 20 unused),
    the actions read where they lie: ``src``, of the kernels' action dtype and typed of any
    layout (the caller checks its class, dtype and number of dimensions; its rows and layout
    are checked here). Returns what ``step`` returns, or -3 where ``src`` has not N rows of the
    action's size or is not C-contiguous (nothing moved)."""
    addrs = nb.carray(pointer(table), (TABLE_SLOTS,), np.int64)
    n = addrs[14]
    w = addrs[16]
    if not _fits(src, n, w):
        return -3
    arrays = _tabled(addrs, state_t, cfg_t, action_t, obs_t, obs_shape)
    states, cfgs, _, low, high, rewards, terminated, truncated, obs, final_obs = arrays
    flat = nb.carray(pointer(src.ctypes.data), (n, w), action_t)
    return step(
        states,
        cfgs,
        flat,
        low,
        high,
        rewards,
        terminated,
        truncated,
        obs,
        final_obs,
        addrs[17],
        addrs[18],
        None,
        None,
    )


# >>> parallel variants
# Inlined where a compiled function calls it (``step_bound``): there the one agent is a
# constant, so every per-agent loop is one iteration and the loop over the episodes runs as
# tight as the engine's own; a call would also count each of its sixteen arrays in and out.
@nb.njit(cache=True, inline="always", error_model="numpy")
def step(
    states,
    cfgs,
    actions,
    low,
    high,
    rewards,
    terminated,
    truncated,
    obs,
    final_obs,
    mode,
    max_steps,
    agents=None,
    out=None,
):
    """Validate every action row, then advance every episode; returns -1 or the first bad index.

    ``agents``, when given, is ``(kinds, memory, rngs, plies, returns, ends)``: the built-in
    agents (``kinds``, ``memory`` and ``rngs`` as ``act_agents`` takes them) move first in the same
    pass over the episodes, each episode's record read once a ply instead of twice, and each
    episode plays ``plies`` plies in a row, as that many calls would (an episode frozen by
    disabled autoreset stops), its record staying in cache. The outputs are the last ply's;
    ``returns`` (N, agents) and ``ends`` (N,) add up every ply's rewards and episode ends.
    Without it (numba compiles those branches away) the step is the caller's actions alone.

    ``out``, when given, is a face's own buffers (see ``_publish``): the actions are read from its
    first element (validated, then copied into ``actions``) and every episode's results are also
    written into them in the same pass, so that the face needs no copy of its own.

    The generated module also holds ``step_parallel``: this function with ``parallel=True`` and
    ``nb.prange`` on the loop marked "parallel". The action count stays serial: it vectorises, and
    waking the threads for a second parallel loop would cost more than it saves. The body stays
    inline in the loop on purpose: moving it into a helper taking the record (even with
    inline="always") makes numba's code 1.5-2x slower.
    """
    if out is not None:
        bad = _take_actions(out[0], actions, low, high)
        if bad >= 0:
            return bad
    elif count_bad_actions(actions, low, high) > 0:
        return first_bad_action(actions, low, high)
    # The rows handed to the rules: read, or written inside the rules' call (see ``borrowed``).
    actions = borrowed(actions)
    rewards = borrowed(rewards)
    plies = 1
    if agents is not None:
        kinds, memory, rngs, plies, returns, ends = agents
        seen = borrowed(obs)  # what the agents read: written only through ``obs``
    for i in range(states.shape[0]):  # parallel
        s = states[i]
        cfg = cfgs[0]  # read per episode: numba's parallel loops cannot take a record argument
        for _ in range(plies):
            if agents is not None and s.done == 0:
                _act(s, cfg, seen, i, kinds, memory, rngs, actions)
            if s.done != 0:
                # The episode ended at the previous step: next-step autoreset starts a new one
                # and ignores the action; disabled autoreset leaves it frozen until a masked
                # reset. (Under same-step autoreset only a restored state can be finished here;
                # it restarts.)
                rewards[i, :] = 0.0
                if mode == DISABLED:
                    terminated[i] = (s.done & TERMINATED) != 0
                    truncated[i] = (s.done & TRUNCATED) != 0
                    break  # the plies left would change nothing
                terminated[i] = False
                truncated[i] = False
                _begin(s, cfg, obs, i)
                continue
            ended = game_step(s, cfg, actions[i], rewards[i])
            s.step += 1
            term = ended != 0
            trunc = s.step >= max_steps
            terminated[i] = term
            truncated[i] = trunc
            if agents is not None:
                for k in range(rewards.shape[1]):
                    returns[i, k] += rewards[i, k]
                ends[i] += term or trunc
            if term or trunc:
                s.done = (TERMINATED if term else 0) | (TRUNCATED if trunc else 0)
                if out is not None:
                    _publish_end(i, rewards, out)
                if mode == SAME_STEP:
                    game_observe(s, cfg, final_obs, i)
                    _begin(s, cfg, obs, i)
                    continue
            game_observe_step(s, cfg, obs, i)
        if out is not None:
            _publish(s, i, rewards, terminated, truncated, out)
    return -1


@nb.njit(cache=True, error_model="numpy")
def act_agents(states, cfgs, obs, kinds, memory, rngs, actions):
    """The built-in agents' moves (``agents.py``'s ``act``): for every running episode ``i`` and
    ACTIVE seat ``k`` with ``kinds[i, k] >= 0``, ``actions[i, k]`` becomes that agent's action;
    other entries are left as they are. ``memory[i, k]`` and ``rngs[i, k]`` are that agent's."""
    obs = borrowed(obs)
    for i in range(states.shape[0]):  # parallel
        s = states[i]
        if s.done == 0:
            _act(s, cfgs[0], obs, i, kinds, memory, rngs, actions)


# <<< parallel variants
