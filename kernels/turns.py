"""Agent statuses and turns, as kaggle-environments keeps them, for games of several agents (up
to ``vecenv.protocol.MAX_AGENTS``).

A game played by several agents keeps, in its state record, ``status`` (one code per agent, below)
and ``reward`` (each agent's reward as Kaggle reports it: the outcome so far, not a step's delta).
Before a step, a face may mark an agent ERROR, INVALID or TIMEOUT (its agent raised, returned an
action outside the action schema, or ran out of time); the rules then treat that agent as Kaggle's
interpreters treat it. An action past the engine's range (the Kaggle face passes one past it for
a value that passes Kaggle's action schema but names no move) is refused as Kaggle's interpreters
refuse it: the agent whose turn it is becomes INVALID, an idle agent's action is ignored.
The engine's per-step rewards are the changes of ``reward``, where an agent that ended ERROR,
INVALID or TIMEOUT (whose reward Kaggle reports as None) counts as having lost: -1.
An episode is over when no agent is ACTIVE, as Kaggle's ``Environment.done`` says.
"""

import numba as nb

# Kaggle's status enum, in its schema's order.
INACTIVE = 0
ACTIVE = 1
DONE = 2
ERROR = 3
INVALID = 4
TIMEOUT = 5
STATUS_NAMES = ("INACTIVE", "ACTIVE", "DONE", "ERROR", "INVALID", "TIMEOUT")

# The reward an agent that ended ERROR, INVALID or TIMEOUT counts in the engine's arrays.
FAILED_REWARD = -1.0


@nb.njit(cache=True, error_model="numpy", inline="always")
def failed(code):
    """Whether ``code`` is one of the statuses Kaggle reports with a None reward."""
    return code == ERROR or code == INVALID or code == TIMEOUT  # noqa: SIM109 (numba: no tuples)


@nb.njit(cache=True, error_model="numpy", inline="always")
def outcome(s, k):
    """Agent ``k``'s reward as the engine counts it: Kaggle's, or -1 where Kaggle's is None."""
    return FAILED_REWARD if failed(s.status[k]) else s.reward[k]


@nb.njit(cache=True, error_model="numpy", inline="always")
def begin_rewards(s, rewards):
    """Before a step: ``rewards`` holds minus each agent's outcome (``end_step`` adds the new
    one)."""
    for k in range(s.status.shape[0]):  # a record's shape: a constant, so the loop unrolls
        rewards[k] = -outcome(s, k)


@nb.njit(cache=True, error_model="numpy", inline="always")
def finish(s):
    """Every ACTIVE or INACTIVE agent becomes DONE; failed ones keep their status."""
    status = s.status
    for k in range(status.shape[0]):
        if status[k] == ACTIVE or status[k] == INACTIVE:
            status[k] = DONE


@nb.njit(cache=True, error_model="numpy", inline="always")
def any_active(s):
    status = s.status
    for k in range(status.shape[0]):  # noqa: SIM110 (a plain loop: numba compiles no generators)
        if status[k] == ACTIVE:
            return True
    return False


@nb.njit(cache=True, error_model="numpy", inline="always")
def end_step(s, cfg, rewards):
    """After a game's own step: Kaggle's episodeSteps limit (the step that reaches episodeSteps - 1
    finishes every running agent), the rewards' deltas; returns 1 when the episode is over."""
    if s.step + 1 >= cfg.episodeSteps - 1:
        finish(s)
    for k in range(s.status.shape[0]):
        rewards[k] += outcome(s, k)
    return 0 if any_active(s) else 1


@nb.njit(cache=True, error_model="numpy", inline="always")
def refuse(s, a):
    """Agent ``a``'s move is one the game refuses: it is INVALID, every other agent DONE."""
    for k in range(s.status.shape[0]):
        s.status[k] = DONE
    s.status[a] = INVALID


@nb.njit(cache=True, error_model="numpy", inline="always")
def settle(s, a, won, full):
    """After agent ``a``'s move in a two-agent board game (two agents only): a win scores +1/-1
    and ends the game, a full board ends it drawn, else the turn passes."""
    other = 1 - a
    if won:
        s.reward[a] = 1.0
        s.reward[other] = -1.0
    if won or full:
        s.status[a] = DONE
        s.status[other] = DONE
    else:
        s.status[a] = INACTIVE
        s.status[other] = ACTIVE


@nb.njit(cache=True, error_model="numpy", inline="always")
def to_move(s):
    """The mark (1 to the number of agents) of the agent to move in a turn-based game, the one
    ACTIVE agent while every other is INACTIVE; else 0 (the game is over, or several move at
    once)."""
    status = s.status
    mark = 0
    for k in range(status.shape[0]):
        if status[k] == ACTIVE:
            if mark != 0:
                return 0
            mark = k + 1
        elif status[k] != INACTIVE:
            return 0
    return mark


@nb.njit(cache=True, error_model="numpy", inline="always")
def mover(s):
    """The agent whose turn it is in a turn-based game, or -1 when the statuses are not one
    ACTIVE and the others INACTIVE: then, as Kaggle's turn-based interpreters do, the first
    ACTIVE agent and the first INACTIVE one (where there are) become DONE and no move is made."""
    mark = to_move(s)
    if mark > 0:
        return mark - 1
    status = s.status
    active = -1
    idle = -1
    for k in range(status.shape[0]):
        if status[k] == ACTIVE and active < 0:
            active = k
        if status[k] == INACTIVE and idle < 0:
            idle = k
    if active >= 0:
        status[active] = DONE
    if idle >= 0:
        status[idle] = DONE
    return -1
