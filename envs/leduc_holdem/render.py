"""Leduc hold'em frames: the table as a spectator sees it, both agents' cards face up, the public
card (face down until it is shown), the bets, who acts or how it ended. A frame is the whole
table, never one agent's view: an agent's view is its observation (the faces hand each agent its
own)."""

import numpy as np

from vecenv.kernels.turns import ACTIVE
from vecenv.render import draw

RANKS = "JQK"
FELT = (0x1B, 0x5E, 0x3A)
CARD = (0xFA, 0xFA, 0xF5)
BACK = (0x3A, 0x4F, 0x9C)
INK = (0x21, 0x21, 0x21)
MARKER = (0xFF, 0xD5, 0x4F)


def _public(state):
    """The public card's text: its rank once shown, else face down."""
    return RANKS[int(state["public"])] if state["street"] >= 1 else "?"


def ansi(state, config):
    cards, chips = np.asarray(state["cards"]), np.asarray(state["chips"])
    status, reward = np.asarray(state["status"]), np.asarray(state["reward"])
    lines = [f"public: {_public(state)}  round {min(int(state['street']), 1) + 1}"]
    for k in range(2):
        note = ""
        if status[k] == ACTIVE:
            note = "  <- to act"
        elif reward[k] != 0:
            note = f"  {reward[k]:+g}"
        lines.append(f"agent {k}: {RANKS[cards[k]]}  chips {chips[k]}{note}")
    return "\n".join(lines)


def _card(img, left, top, rank):
    img[top : top + 48, left : left + 34] = INK
    img[top + 1 : top + 47, left + 1 : left + 33] = CARD if rank != "?" else BACK
    if rank != "?":
        draw.text(img, rank, left + 10, top + 14, 3, INK)


def rgb_array(state, config):
    img = draw.canvas(200, 120, FELT)
    cards, chips = np.asarray(state["cards"]), np.asarray(state["chips"])
    status = np.asarray(state["status"])
    _card(img, 83, 10, _public(state))
    for k in range(2):
        left = 14 + k * 138
        _card(img, left, 48, RANKS[cards[k]])
        draw.text(img, f"{int(chips[k]):2d}", left + 5, 102, 2, MARKER)
        if status[k] == ACTIVE:
            img[40:44, left : left + 34] = MARKER
    return img
