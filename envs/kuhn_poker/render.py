"""Kuhn poker frames: the table as a spectator sees it, both agents' cards face up, their bets,
who acts or how it ended. A frame is the whole table, never one agent's view: an agent's view is
its observation (the faces hand each agent its own)."""

import numpy as np

from vecenv.kernels.turns import ACTIVE
from vecenv.render import draw

RANKS = "JQK"
FELT = (0x1B, 0x5E, 0x3A)
CARD = (0xFA, 0xFA, 0xF5)
INK = (0x21, 0x21, 0x21)
CHIP = (0xE0, 0x40, 0x30)
MARKER = (0xFF, 0xD5, 0x4F)


def _lines(state):
    cards, pot = np.asarray(state["cards"]), np.asarray(state["pot"])
    status, reward = np.asarray(state["status"]), np.asarray(state["reward"])
    lines = []
    for k in range(2):
        note = ""
        if status[k] == ACTIVE:
            note = "  <- to act"
        elif reward[k] != 0:
            note = f"  {reward[k]:+g}"
        lines.append(f"agent {k}: {RANKS[cards[k]]}  bet {pot[k]}{note}")
    return lines


def ansi(state, config):
    return "\n".join(_lines(state))


def rgb_array(state, config):
    width, height, unit = 160, 120, 3
    img = draw.canvas(width, height, FELT)
    cards, pot = np.asarray(state["cards"]), np.asarray(state["pot"])
    status = np.asarray(state["status"])
    for k in range(2):
        left, top = 24 + k * 72, 24
        img[top : top + 60, left : left + 42] = INK
        img[top + 1 : top + 59, left + 1 : left + 41] = CARD
        draw.text(img, RANKS[cards[k]], left + 13, top + 19, unit, INK)
        for c in range(int(pot[k])):
            draw.circle(img, left + 21, top + 74 + 8 * c, 6, CHIP)
        if status[k] == ACTIVE:
            img[top - 8 : top - 4, left : left + 42] = MARKER
    return img
