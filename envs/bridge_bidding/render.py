"""Bridge bidding frames: the table as a spectator sees it, the four hands face up, the
vulnerability, the auction and how it ended. A frame is the whole table, never one agent's view:
an agent's view is its observation (the faces hand each agent its own)."""

import numpy as np

from vecenv.kernels.turns import ACTIVE, INVALID
from vecenv.render import draw

from .rules import BID, DOUBLE, PASS

SEATS = "NESW"
SUITS = "SHDC"  # Pgx's card order: spades first
RANKS = "A23456789TJQK"
HIGH_FIRST = "AKQJT98765432"
DENOMINATIONS = ("C", "D", "H", "S", "NT")
FELT = (0x1B, 0x5E, 0x3A)
CARD = (0xFA, 0xFA, 0xF5)
EMPTY = (0x2E, 0x74, 0x4E)
RED = (0xC6, 0x28, 0x28)
INK = (0x21, 0x21, 0x21)
MARKER = (0xFF, 0xD5, 0x4F)


def call_name(action):
    """A call's usual name: "P", "X", "XX" or a bid such as "3NT"."""
    action = int(action)
    if action == PASS:
        return "P"
    if action == DOUBLE:
        return "X"
    if action < BID:
        return "XX"
    bid = action - BID
    return f"{bid // 5 + 1}{DENOMINATIONS[bid % 5]}"


def hand(state, seat):
    """The seat's cards as "S:AK4 H:... D:... C:...", high cards first."""
    owners = np.asarray(state["owners"])
    suits = []
    for s, name in enumerate(SUITS):
        held = [RANKS[c % 13] for c in range(s * 13, s * 13 + 13) if owners[c] == seat]
        suits.append(f"{name}:{''.join(sorted(held, key=HIGH_FIRST.index)) or '-'}")
    return " ".join(suits)


def auction(state):
    """The calls made, from the dealer on, each with its seat."""
    calls = np.asarray(state["calls"])
    dealer = int(state["dealer"])
    made = [int(a) for a in calls if a >= 0]
    return " ".join(f"{SEATS[(dealer + t) % 4]}:{call_name(a)}" for t, a in enumerate(made))


def ansi(state, config):
    seats = np.asarray(state["seats"])
    status, reward = np.asarray(state["status"]), np.asarray(state["reward"])
    vul = np.asarray(state["vul"])
    lines = [
        f"dealer {SEATS[int(state['dealer'])]}, vulnerable: "
        + ("N-S " if vul[0] else "")
        + ("E-W" if vul[1] else "")
        + ("none" if not vul.any() else "")
    ]
    for seat in range(4):
        player = int(seats[seat])
        note = ""
        if status[player] == ACTIVE:
            note = "  <- to call"
        elif status[player] == INVALID:
            note = f"  illegal call, {reward[player]:+g}"
        elif reward[player] != 0:
            note = f"  {reward[player]:+g}"
        lines.append(f"{SEATS[seat]} (agent {player}): {hand(state, seat)}{note}")
    lines.append("auction: " + (auction(state) or "-"))
    return "\n".join(lines)


def rgb_array(state, config):
    """Each seat's 4 x 13 grid of cards (a suit a row, aces first; held cards light, hearts and
    diamonds red), N at the top, E right, S below, W left; a bar beside the seat to call and
    the current contract's level in the middle."""
    width, height, cell = 232, 200, 4
    img = draw.canvas(width, height, FELT)
    owners = np.asarray(state["owners"])
    status = np.asarray(state["status"])
    seats = np.asarray(state["seats"])
    corners = ((88, 8), (172, 80), (88, 152), (4, 80))
    for seat, (left, top) in enumerate(corners):
        for c in range(52):
            suit, rank = divmod(c, 13)
            color = (RED if suit in (1, 2) else CARD) if owners[c] == seat else EMPTY
            x, y = left + rank * cell, top + suit * (cell + 2)
            img[y : y + cell, x : x + cell - 1] = color
        if status[int(seats[seat])] == ACTIVE:
            img[top + 26 : top + 29, left : left + 13 * cell] = MARKER
    last = int(state["last_bid"])
    if last >= 0:
        draw.text(img, str(last // 5 + 1), 110, 92, 3, MARKER)
    return img
