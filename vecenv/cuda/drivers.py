"""Batch drivers for the GPU: the CPU drivers' loops (``drivers.py``) as CUDA kernels.

A template like ``drivers.py``: ``vecenv.cuda.compile`` makes one copy of these functions per
game, with the names of the binding block bound to that game's rules (themselves retargeted to
the GPU from the very same Python functions), and compiles them with ``numba.cuda.jit``. Nothing
here is called from this module itself. One thread runs one episode, as one iteration of the CPU
drivers' loop does; ``_advance`` is that iteration's body, line for line, so that both engines
produce the same trajectories.

Differences from the CPU drivers, all forced by the GPU:
- One launch a step. No thread can tell whether another thread's action is bad before it steps
  its own episode, so each thread first keeps what the step will overwrite (its record, its
  rewards and end flags: ``undo``), then checks its own action row: a bad one sets ``flag[0]``
  (host memory the host reads after the launch) and ``bad[0]`` (the first bad episode, by an
  atomic min) and leaves its episode alone, while the others step. The host then launches
  ``restore``, which puts every episode back as it was and rewrites its observation: the step
  is refused as a whole, before any episode has (visibly) moved, as on the CPU. That costs a
  record's copy per step instead of a second launch and a read-back between two kernels.
- ``rollout`` runs T steps in one launch for one-agent games, the actions drawn by a policy
  compiled into the kernel (``game_policy``: the random one, or a device function of the
  observation), every step's observation, action, reward and end flags written to the rollout's
  buffers, row ``t * N + i`` for step t of episode i.
- A kernel takes no None (numba-cuda passes no such argument), so the step with the built-in
  agents is a variant of its own, ``step_agents``: this ``step`` compiled with ``WITH_AGENTS``
  bound to True (numba prunes the branches on it); the plain step is handed a tuple of stand-in
  arrays it never reads. That variant fills the agents' action rows itself (a seat that does not
  move shows the action's lowest value, as on the CPU) and checks nothing: its actions are the
  agents' own.
- The agents' seats are visited in order instead of by the bits of the seats to move (CUDA has
  no ``trailing_zeros`` intrinsic for numba, and a thread's branches cost nothing extra).
"""

from numba import cuda

from vecenv.kernels.state import ACTION_MAX, DISABLED, SAME_STEP, TERMINATED, TRUNCATED
from vecenv.kernels.turns import ACTIVE

# >>> bindings
game_reset = game_step = game_observe = game_observe_step = game_act = game_policy = None
ACTION_DISCRETE = True
WITH_AGENTS = False  # the step's variant: True for ``step_agents``
# <<< bindings

# What ``_advance`` did: stepped (the episode goes on, or ended), began a new episode (the step
# after an end, under next-step autoreset), or left a finished episode frozen (disabled autoreset).
STEPPED, ENDED, BEGAN, FROZEN = 0, 1, 2, 3


def _begin(s, cfg, obs, i):
    s.step = 0
    s.done = 0
    game_reset(s, cfg)
    game_observe(s, cfg, obs, i)


def reset(states, cfgs, obs, mask, words, reseed, rewards, terminated, truncated):
    """Start the episodes where ``mask``; with ``reseed`` their streams restart from ``words``.
    Their rewards and end flags read zero (the CPU engine clears them on the host)."""
    i = cuda.grid(1)
    if i < states.shape[0] and mask[i]:
        s = states[i]
        if reseed:
            s.rng = words[i]
        _begin(s, cfgs[0], obs, i)
        for k in range(rewards.shape[1]):
            rewards[i, k] = 0.0
        terminated[i] = False
        truncated[i] = False


def observe(states, cfgs, obs, mask):
    """Rewrite the observations of the episodes where ``mask`` (after a state was set)."""
    i = cuda.grid(1)
    if i < states.shape[0] and mask[i]:
        game_observe(states[i], cfgs[0], obs, i)


def _wrong(actions, row, low, high):
    """Whether action row ``row`` is out of range (or, for continuous actions, not finite)."""
    for j in range(actions.shape[1]):
        a = actions[row, j]
        if ACTION_DISCRETE:
            if a < low[j] or a > high[j]:
                return True
        elif not abs(a) <= ACTION_MAX:
            return True
    return False


def _keep(states, rewards, terminated, truncated, undo, i):
    """Keep what a step of episode ``i`` overwrites, for ``restore``."""
    undo_states, undo_rewards, undo_flags = undo
    undo_states[i] = states[i]
    for k in range(rewards.shape[1]):
        undo_rewards[i, k] = rewards[i, k]
    undo_flags[i, 0] = terminated[i]
    undo_flags[i, 1] = truncated[i]


def _refuse(bad, flag, key):
    cuda.atomic.min(bad, 0, key)
    flag[0] = 1  # the host's word: any thread's write says the same


def restore(states, cfgs, obs, rewards, terminated, truncated, undo):
    """Every episode as ``undo`` kept it before a refused step, its observation rewritten."""
    i = cuda.grid(1)
    if i < states.shape[0]:
        undo_states, undo_rewards, undo_flags = undo
        states[i] = undo_states[i]
        for k in range(rewards.shape[1]):
            rewards[i, k] = undo_rewards[i, k]
        terminated[i] = undo_flags[i, 0]
        truncated[i] = undo_flags[i, 1]
        game_observe(states[i], cfgs[0], obs, i)


def _advance(s, cfg, actions, rewards, terminated, truncated, obs, final_obs, row, after, mode,
             max_steps, whole, engine_final, i):  # fmt: skip
    """One step of episode ``s``: the CPU drivers' loop body. Reads action row ``row``, writes
    rewards and end flags at ``row``, the final observation (same-step autoreset) at ``row`` of
    ``final_obs`` and the observation after the step at ``after`` of ``obs``: in full where
    ``whole`` (a rollout's fresh row, where the final observation also goes to row ``i`` of
    ``engine_final``), else by ``observe_step`` (the row holds the previous one).
    Returns STEPPED, ENDED, BEGAN or FROZEN."""
    if s.done != 0:
        # The episode ended at the previous step: next-step autoreset starts a new one and
        # ignores the action; disabled autoreset leaves it frozen until a masked reset.
        for k in range(rewards.shape[1]):
            rewards[row, k] = 0.0
        if mode == DISABLED:
            terminated[row] = (s.done & TERMINATED) != 0
            truncated[row] = (s.done & TRUNCATED) != 0
            return FROZEN
        terminated[row] = False
        truncated[row] = False
        _begin(s, cfg, obs, after)
        return BEGAN
    ended = game_step(s, cfg, actions[row], rewards[row])
    s.step += 1
    term = ended != 0
    trunc = s.step >= max_steps
    terminated[row] = term
    truncated[row] = trunc
    if term or trunc:
        s.done = (TERMINATED if term else 0) | (TRUNCATED if trunc else 0)
        if mode == SAME_STEP:
            game_observe(s, cfg, final_obs, row)
            if whole:
                game_observe(s, cfg, engine_final, i)
            _begin(s, cfg, obs, after)
            return ENDED
    if whole:
        game_observe(s, cfg, obs, after)
    else:
        game_observe_step(s, cfg, obs, after)
    return ENDED if term or trunc else STEPPED


def _act(s, cfg, obs, i, kinds, memory, rngs, actions):
    """The built-in agents' moves in running episode ``i`` (see ``act_agents``)."""
    for k in range(kinds.shape[1]):
        if kinds[i, k] >= 0 and s.status[k] == ACTIVE:
            actions[i, k] = game_act(kinds[i, k], obs, i, k, s.step, cfg, memory[i, k], rngs[i, k])


def step(states, cfgs, actions, low, high, rewards, terminated, truncated, obs, final_obs, mode,
         max_steps, undo, bad, flag, plies, agents):  # fmt: skip
    """Advance episode ``cuda.grid(1)`` by a step (``plies`` of them with the agents), unless its
    action row is bad: then refuse it (``bad``, ``flag``; see the module).

    ``agents`` is ``(kinds, memory, rngs, returns, ends)`` as the CPU drivers' ``step`` takes it
    (with ``plies`` apart), read only by the ``WITH_AGENTS`` variant (``step_agents``): the
    built-in agents move first and the episode plays ``plies`` plies in a row (an episode frozen
    by disabled autoreset stops); ``returns`` and ``ends`` add up every ply's rewards and ends.
    """
    i = cuda.grid(1)
    if i >= states.shape[0]:
        return
    _keep(states, rewards, terminated, truncated, undo, i)
    if WITH_AGENTS:
        kinds, memory, rngs, returns, ends = agents
        for j in range(actions.shape[1]):
            actions[i, j] = low[0]
    elif _wrong(actions, i, low, high):
        _refuse(bad, flag, i)
        return
    s = states[i]
    cfg = cfgs[0]
    for _ in range(plies):
        if WITH_AGENTS and s.done == 0:
            _act(s, cfg, obs, i, kinds, memory, rngs, actions)
        done = _advance(s, cfg, actions, rewards, terminated, truncated, obs, final_obs, i, i,
                        mode, max_steps, False, final_obs, i)  # fmt: skip
        if done == FROZEN:
            break
        if WITH_AGENTS and done <= ENDED:
            for k in range(rewards.shape[1]):
                returns[i, k] += rewards[i, k]
            ends[i] += done == ENDED


def rollout(states, cfgs, low, high, mode, max_steps, rngs, params, steps, obs, rewards,
            terminated, truncated, final_obs, out, undo, bad, flag):  # fmt: skip
    """``steps`` steps of episode ``cuda.grid(1)``, each action drawn by ``game_policy`` from the
    observation it sees. ``out`` is the rollout's ``(obs, actions, rewards, terminated,
    truncated, final_obs)``, of ``(steps + 1) * N`` rows for the observations (row ``t * N + i``
    the one step t's action was drawn from, the last the one after the last step) and
    ``steps * N`` for the others. The engine's own buffers end as ``steps`` calls of ``step``
    would leave them. A policy's bad action refuses the rollout (``bad`` the first row, by step
    then episode; the host restores every episode from ``undo``)."""
    i = cuda.grid(1)
    n = states.shape[0]
    if i >= n:
        return
    r_obs, r_actions, r_rewards, r_terminated, r_truncated, r_final = out
    _keep(states, rewards, terminated, truncated, undo, i)
    s = states[i]
    cfg = cfgs[0]
    game_observe(s, cfg, r_obs, i)
    row = i
    for _ in range(steps):
        game_policy(r_obs, row, low, high, params, rngs[i], r_actions[row])
        if _wrong(r_actions, row, low, high):
            _refuse(bad, flag, row)
            return
        done = _advance(s, cfg, r_actions, r_rewards, r_terminated, r_truncated, r_obs, r_final,
                        row, row + n, mode, max_steps, True, final_obs, i)  # fmt: skip
        if done == FROZEN:  # the row after shows the frozen observation, as the engine's does
            game_observe(s, cfg, r_obs, row + n)
        row += n
    last = row - n
    for k in range(rewards.shape[1]):
        rewards[i, k] = r_rewards[last, k]
    terminated[i] = r_terminated[last]
    truncated[i] = r_truncated[last]
    game_observe(s, cfg, obs, i)


def act_agents(states, cfgs, obs, kinds, memory, rngs, actions):
    """The built-in agents' moves (``agents.py``'s ``act``) in every running episode, as the CPU
    drivers' ``act_agents``."""
    i = cuda.grid(1)
    if i < states.shape[0]:
        s = states[i]
        if s.done == 0:
            _act(s, cfgs[0], obs, i, kinds, memory, rngs, actions)


KERNELS = ("reset", "observe", "restore", "step", "act_agents")
