"""Sparrow mahjong frames: the table as a spectator sees it, every seat's hand face up (its red
tiles marked), its discards, the dora, who moves or how it ended. A frame is the whole table,
never one agent's view: an agent's view is its observation (the faces hand each agent its own)."""

import numpy as np

from vecenv.kernels.turns import ACTIVE
from vecenv.render import draw

from .rules import GREEN, PLAYERS, RED_DRAGON, RIVER, TYPES

FELT = (0x1B, 0x5E, 0x3A)
TILE = (0xFA, 0xFA, 0xF0)
INK = (0x21, 0x21, 0x21)
BAMBOO = (0x1E, 0x7D, 0x32)
RED = (0xD3, 0x2F, 0x2F)
MARKER = (0xFF, 0xD5, 0x4F)


def tile_name(t):
    """A tile type as Pgx writes it: 1-9, g (green dragon), r (red dragon)."""
    return "g" if t == GREEN else "r" if t == RED_DRAGON else str(int(t) + 1)


def _hand(state, seat):
    """(type, red) of each tile of a seat's hand, in type order, red ones first."""
    tiles = []
    for t in range(TYPES):
        n, red = int(state["hands"][seat, t]), int(state["reds"][seat, t])
        tiles += [(t, j < red) for j in range(n)]
    return tiles


def _river(state, seat):
    return [
        (int(state["rivers"][seat, j]), bool(state["red_rivers"][seat, j]))
        for j in range(RIVER)
        if state["rivers"][seat, j] >= 0
    ]


def _marks(tiles):
    return " ".join(tile_name(t) + ("*" if red else "") for t, red in tiles)


def ansi(state, config):
    status, reward = np.asarray(state["status"]), np.asarray(state["reward"])
    lines = [f"dora {tile_name(int(state['dora']))}   (* a red tile)"]
    for seat in range(PLAYERS):
        agent = int(state["seats"][seat])
        note = ""
        if status[agent] == ACTIVE:
            note = "  <- to discard"
        elif reward[agent] != 0:
            note = f"  {reward[agent] * 26:+g} points"
        who = f"seat {seat} agent {agent}" + (" (dealer)" if seat == 0 else "")
        lines.append(
            f"{who}: {_marks(_hand(state, seat)):<20} | {_marks(_river(state, seat))}{note}"
        )
    return "\n".join(lines)


def _tile(img, x, y, t, red, unit):
    w, h = 7 * unit, 10 * unit
    img[y : y + h, x : x + w] = INK
    img[y + 1 : y + h - 1, x + 1 : x + w - 1] = TILE
    if t == GREEN:
        img[y + 2 * unit : y + h - 2 * unit, x + 2 * unit : x + w - 2 * unit] = BAMBOO
    elif t == RED_DRAGON:
        img[y + 2 * unit : y + h - 2 * unit, x + 2 * unit : x + w - 2 * unit] = RED
    else:
        draw.text(img, str(t + 1), x + unit, y + 2 * unit, unit, RED if red else BAMBOO)


def rgb_array(state, config):
    unit = 2
    tw, th = 8 * unit, 11 * unit
    width, height = 28 + 16 * tw, 24 + PLAYERS * (th + 14) + th
    img = draw.canvas(width, height, FELT)
    status = np.asarray(state["status"])
    for seat in range(PLAYERS):
        top = 12 + seat * (th + 14)
        if status[int(state["seats"][seat])] == ACTIVE:
            img[top : top + th, 4:8] = MARKER
        for k, (t, red) in enumerate(_hand(state, seat)):
            _tile(img, 12 + k * tw, top, t, red, unit)
        for k, (t, red) in enumerate(_river(state, seat)):
            _tile(img, 12 + (6 * tw + 6) + k * (tw - unit), top, t, red, unit - 1 or 1)
    _tile(img, 12, height - th - 6, int(state["dora"]), False, unit)
    return img
