"""AccessControl's rules over one episode's record, as csuite's ``AccessControl``.

Each step, in csuite's order: accepting (action 1) the waiting customer while a server is free
pays the customer's priority and makes one more server busy (otherwise the reward is 0); the next
customer's priority is drawn uniformly from ``PRIORITIES``; then each busy server frees itself
independently with probability ``free_probability`` (csuite's binomial draw, here as that many
Bernoulli trials). The observation enumerates (busy servers, priority) pairs in csuite's order:
``busy * len(PRIORITIES) + index of the priority``.

``last_action`` (-1 before the first step) is what csuite's renderer colours the current cell by;
csuite keeps it outside its state, here it travels with the record.
"""

import numba as nb
import numpy as np

from vecenv.kernels.rng import integer, uniform

# csuite's default priorities (Sutton and Barto's). csuite takes them as a constructor argument;
# configurations here hold no lists, so they are fixed.
PRIORITIES = (1, 2, 4, 8)
NUM_PRIORITIES = len(PRIORITIES)
REJECT, ACCEPT = 0, 1

# Error messages, as csuite's AccessControl.set_state words them.
INVALID_BUSY_SERVERS = "Invalid state: num_busy_servers not in expectedrange [0, {})."
INVALID_PRIORITY = "Invalid state: incoming_priority not in expectedrange {}."

# ``step`` draws from the episode's stream: a search draws that chance from its own.
CHANCE = True

FIELDS = [
    ("num_busy_servers", np.int64),
    ("incoming_priority", np.int64),
    ("last_action", np.int64),
]

STATE_BOUNDS = {"last_action": (-1, 1)}


def check_state(records, config):
    """csuite's set_state checks, with its messages (their wording included: csuite's range for the
    busy servers reads [0, N) though N busy servers is a valid state, and accepted here)."""
    servers = config["num_servers"]
    busy = records["num_busy_servers"]
    if ((busy < 0) | (busy > servers)).any():
        return INVALID_BUSY_SERVERS.format(servers)
    if (~np.isin(records["incoming_priority"], PRIORITIES)).any():
        return INVALID_PRIORITY.format(PRIORITIES)
    return None


@nb.njit(cache=True, error_model="numpy")
def _draw_priority(s):
    return PRIORITIES[integer(s, NUM_PRIORITIES)]


@nb.njit(cache=True, error_model="numpy")
def reset(s, cfg):
    s.num_busy_servers = 0
    s.incoming_priority = _draw_priority(s)
    s.last_action = -1


@nb.njit(cache=True, error_model="numpy")
def step(s, cfg, actions, rewards):
    action = actions[0]
    s.last_action = action
    reward = 0.0
    if action == ACCEPT and s.num_busy_servers < cfg.num_servers:
        reward = np.float64(s.incoming_priority)
        s.num_busy_servers += 1
    new_priority = _draw_priority(s)
    busy = s.num_busy_servers
    freed = 0
    for _ in range(busy):
        if uniform(s) < cfg.free_probability:
            freed += 1
    s.num_busy_servers = busy - freed
    s.incoming_priority = new_priority
    rewards[0] = reward
    return 0


@nb.njit(cache=True, error_model="numpy")
def observe(s, cfg, obs, i):
    index = 0
    for k in range(NUM_PRIORITIES):
        if PRIORITIES[k] == s.incoming_priority:
            index = k
    obs[0][i, 0] = s.num_busy_servers * NUM_PRIORITIES + index
