"""AccessControl frames as csuite draws them: one pixel per (priority, busy servers) pair, rows in
the order of the priorities and columns for 0 to num_servers busy servers. Every pixel is white but
the current state's, which is black, with its green channel set to 1 after an accept and its red
channel set to 1 after a reject (csuite writes 1, not 255, there)."""

import numpy as np

from .rules import ACCEPT, PRIORITIES, REJECT


def rgb_array(state, config):
    frame = np.full((len(PRIORITIES), config["num_servers"] + 1, 3), 255, dtype=np.uint8)
    row = PRIORITIES.index(int(state["incoming_priority"]))
    column = int(state["num_busy_servers"])
    frame[row, column] = 0
    last = int(state["last_action"])
    if last == ACCEPT:
        frame[row, column, 1] = 1
    elif last == REJECT:
        frame[row, column, 0] = 1
    return frame


def ansi(state, config):
    """One line: busy servers, the waiting customer's priority and the last action."""
    last = {ACCEPT: "accept", REJECT: "reject"}.get(int(state["last_action"]), "none")
    return (
        f"busy {int(state['num_busy_servers'])}/{config['num_servers']} "
        f"priority {int(state['incoming_priority'])} last action {last}"
    )
