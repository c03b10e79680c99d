"""Batch drivers for the GPU: the CPU drivers' loops (``drivers.py``) as CUDA kernels.

A template like ``drivers.py``: ``vecenv.cuda.compile`` makes one copy of these functions per
game, with the names of the binding block bound to that game's rules (themselves retargeted to
the GPU from the very same Python functions), and compiles them with ``numba.cuda.jit``. Nothing
here is called from this module itself. One thread runs one episode, as one iteration of the CPU
drivers' loop does; the bodies follow ``drivers.py`` line for line, so that both engines produce
the same trajectories.

Differences from the CPU drivers, all forced by the GPU:
- No thread can tell whether another thread's action is bad before it steps its own episode, so
  the range check is a kernel of its own (``check_actions``) that writes the first bad episode
  into ``bad[0]`` (``bad[0]`` starts at N); ``step`` then does nothing if it is below N. Both
  are queued back to back, the host reads ``bad`` once.
- A kernel takes no None (numba-cuda passes no such argument), so the step with the built-in
  agents is a variant of its own, ``step_agents``: this ``step`` compiled with ``WITH_AGENTS``
  bound to True (numba prunes the branches on it); the plain step is handed a tuple of stand-in
  arrays it never reads.
- The agents' seats are visited in order instead of by the bits of the seats to move (CUDA has
  no ``trailing_zeros`` intrinsic for numba, and a thread's branches cost nothing extra).
"""

from numba import cuda

from vecenv.kernels.state import ACTION_MAX, DISABLED, SAME_STEP, TERMINATED, TRUNCATED
from vecenv.kernels.turns import ACTIVE

# >>> bindings
game_reset = game_step = game_observe = game_observe_step = game_act = None
ACTION_DISCRETE = True
WITH_AGENTS = False  # the step's variant: True for ``step_agents``
# <<< bindings


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


def check_actions(actions, low, high, bad):
    """``bad[0]`` becomes the index of the first episode whose action row is out of range (or
    not finite), if it is below ``bad[0]``."""
    i = cuda.grid(1)
    if i < actions.shape[0]:
        for j in range(actions.shape[1]):
            a = actions[i, j]
            wrong = a < low[j] or a > high[j] if ACTION_DISCRETE else not abs(a) <= ACTION_MAX
            if wrong:
                cuda.atomic.min(bad, 0, i)


def _act(s, cfg, obs, i, kinds, memory, rngs, actions):
    """The built-in agents' moves in running episode ``i`` (see ``act_agents``)."""
    for k in range(kinds.shape[1]):
        if kinds[i, k] >= 0 and s.status[k] == ACTIVE:
            actions[i, k] = game_act(kinds[i, k], obs, i, k, s.step, cfg, memory[i, k], rngs[i, k])


def step(
    states,
    cfgs,
    actions,
    rewards,
    terminated,
    truncated,
    obs,
    final_obs,
    mode,
    max_steps,
    bad,
    agents,
):
    """Advance episode ``cuda.grid(1)`` unless ``check_actions`` found a bad action.

    ``agents`` is ``(kinds, memory, rngs, plies, returns, ends)`` as the CPU drivers' ``step``
    takes it, read only by the ``WITH_AGENTS`` variant (``step_agents``): the built-in agents
    move first and the episode plays ``plies`` plies in a
    row (an episode frozen by disabled autoreset stops); ``returns`` and ``ends`` add up every
    ply's rewards and episode ends.
    """
    i = cuda.grid(1)
    if i >= states.shape[0] or bad[0] < states.shape[0]:
        return
    s = states[i]
    cfg = cfgs[0]
    plies = 1
    if WITH_AGENTS:
        kinds, memory, rngs, plies, returns, ends = agents
    for _ in range(plies):
        if WITH_AGENTS and s.done == 0:
            _act(s, cfg, obs, i, kinds, memory, rngs, actions)
        if s.done != 0:
            # The episode ended at the previous step: next-step autoreset starts a new one and
            # ignores the action; disabled autoreset leaves it frozen until a masked reset.
            for k in range(rewards.shape[1]):
                rewards[i, k] = 0.0
            if mode == DISABLED:
                terminated[i] = (s.done & TERMINATED) != 0
                truncated[i] = (s.done & TRUNCATED) != 0
                break
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
        if WITH_AGENTS:
            for k in range(rewards.shape[1]):
                returns[i, k] += rewards[i, k]
            ends[i] += term or trunc
        if term or trunc:
            s.done = (TERMINATED if term else 0) | (TRUNCATED if trunc else 0)
            if mode == SAME_STEP:
                game_observe(s, cfg, final_obs, i)
                _begin(s, cfg, obs, i)
                continue
        game_observe_step(s, cfg, obs, i)


def act_agents(states, cfgs, obs, kinds, memory, rngs, actions):
    """The built-in agents' moves (``agents.py``'s ``act``) in every running episode, as the CPU
    drivers' ``act_agents``."""
    i = cuda.grid(1)
    if i < states.shape[0]:
        s = states[i]
        if s.done == 0:
            _act(s, cfgs[0], obs, i, kinds, memory, rngs, actions)


KERNELS = ("reset", "observe", "check_actions", "step", "act_agents")
