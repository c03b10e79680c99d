"""The deal table: bridge deals with their double-dummy results, in Pgx's file format.

Pgx's ``BridgeBidding(dds_results_table_path=...)`` loads one ``.npy`` array of shape (2, n, 4),
int32: ``keys`` (``[0]``) and ``values`` (``[1]``), one row per deal.

- A key holds the deal: one word per suit (spades, hearts, diamonds, clubs), each the 13 cards of
  the suit from the ace to the king as base-4 digits, the ace's the most significant; a digit is
  the seat holding the card (0 N, 1 E, 2 S, 3 W). Pgx numbers the cards the same way: card c is
  suit c // 13 (spades first) and rank c % 13 (ace, 2, ..., king).
- A value holds the double-dummy results: one word per declarer's seat (N, E, S, W), five hex
  digits, the most significant first, the tricks the declarer takes in clubs, diamonds, hearts,
  spades and no trump (Pgx's denominations, a bid's ``bid % 5``).

The shipped table (``deals.npy``, beside this module) was made here by ``make`` (below), Bo
Haglund's DDS computing each deal's results through ``endplay``; ``python -m
vecenv.envs.bridge_bidding.table --deals N --seed S --out FILE`` makes another; ``load`` reads
any file of the format (Pgx's published ones, ``dds_results_10M.npy``..., are a download not
tried here).
"""

import argparse
import hashlib
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).with_name("deals.npy")
# The shipped file's digest: the kernels hold its deals as constants, compiled from the sources
# (and cached by their digest), so a changed file must come with a changed source.
SHIPPED_SHA256 = "bd9f1f7b1e3beb1f8ba05d6f67ec8f8a13c4d0301d85b8c79597c97d8f009ed8"
SEATS = 4
CARDS = 52
DENOMINATIONS = 5  # Pgx's order: clubs, diamonds, hearts, spades, no trump
TRICKS = SEATS * DENOMINATIONS  # a deal's results: [seat * 5 + denomination]
_DIGITS = np.arange(12, -1, -1, dtype=np.int64)  # base-4 digits of a key word, the ace's first
_HEX = np.arange(DENOMINATIONS - 1, -1, -1, dtype=np.int64)  # hex digits of a value word
_ENDPLAY_DENOMINATIONS = (3, 2, 1, 0, 4)  # endplay's rows (S, H, D, C, NT) in Pgx's order


def owners_to_keys(owners):
    """Deals as the seat holding each card, (n, 52) in 0..3, to Pgx's keys, (n, 4) int32."""
    owners = np.asarray(owners, dtype=np.int64).reshape(-1, SEATS, 13)
    return (owners << (2 * _DIGITS)).sum(axis=2).astype(np.int32)


def keys_to_owners(keys):
    """Pgx's keys, (n, 4), to the seat holding each card, (n, 52) int8."""
    keys = np.asarray(keys, dtype=np.int64).reshape(-1, SEATS)
    return ((keys[:, :, None] >> (2 * _DIGITS)) & 3).reshape(-1, CARDS).astype(np.int8)


def tricks_to_values(tricks):
    """Double-dummy tricks, (n, 20) as [seat * 5 + denomination], to Pgx's values, (n, 4)."""
    tricks = np.asarray(tricks, dtype=np.int64).reshape(-1, SEATS, DENOMINATIONS)
    return (tricks << (4 * _HEX)).sum(axis=2).astype(np.int32)


def values_to_tricks(values):
    """Pgx's values, (n, 4), to the tricks, (n, 20) int8 as [seat * 5 + denomination]."""
    values = np.asarray(values, dtype=np.int64).reshape(-1, SEATS)
    return ((values[:, :, None] >> (4 * _HEX)) & 0xF).reshape(-1, TRICKS).astype(np.int8)


def check(keys, values):
    """A message naming what is wrong with a table, or None: every key a deal of 13 cards to each
    seat, every value tricks of 0 to 13."""
    keys = np.asarray(keys)
    values = np.asarray(values)
    if keys.ndim != 2 or keys.shape[1:] != (SEATS,) or values.shape != keys.shape:
        return f"keys and values must both be (n, 4), got {keys.shape} and {values.shape}"
    if len(keys) == 0:
        return "the table holds no deal"
    if not (np.issubdtype(keys.dtype, np.integer) and np.issubdtype(values.dtype, np.integer)):
        return "keys and values must be integers"
    if ((keys < 0) | (keys >= 4**13)).any() or ((values < 0) | (values >= 16**5)).any():
        return "a key word lies outside 0..4**13 - 1 or a value word outside 0..16**5 - 1"
    owners = keys_to_owners(keys)
    counts = np.stack([(owners == seat).sum(axis=1) for seat in range(SEATS)], axis=1)
    if (counts != 13).any():
        return (
            f"deal {int(np.flatnonzero((counts != 13).any(axis=1))[0])} gives a seat not 13 cards"
        )
    tricks = values_to_tricks(values).reshape(-1, SEATS, DENOMINATIONS).astype(np.int64)
    if (tricks > 13).any():
        return "a value holds more than 13 tricks"
    return None


def load(path=SHIPPED):
    """A table file in Pgx's format as (keys, values), (n, 4) int32 each; a ValueError names what
    is wrong with it."""
    table = np.load(path, allow_pickle=False)
    if table.ndim != 3 or table.shape[0] != 2:
        raise ValueError(f"{path}: a deal table is a (2, n, 4) array, got {table.shape}")
    keys, values = table[0], table[1]
    problem = check(keys, values)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    return keys.astype(np.int32), values.astype(np.int32)


def save(path, keys, values):
    """Write a table in Pgx's format (what ``BridgeBidding(dds_results_table_path=path)`` loads)."""
    problem = check(keys, values)
    if problem is not None:
        raise ValueError(problem)
    np.save(path, np.stack([np.asarray(keys), np.asarray(values)]).astype(np.int32))


def deal(n, seed):
    """``n`` deals, (n, 52) seats per card, each a uniform shuffle of a numpy Generator seeded
    ``seed`` (13 cards to each seat)."""
    rng = np.random.default_rng(seed)
    owners = np.empty((n, CARDS), dtype=np.int8)
    seats = np.repeat(np.arange(SEATS, dtype=np.int8), 13)
    for row in owners:
        row[rng.permutation(CARDS)] = seats
    return owners


def pbn(owners):
    """One deal (52 seats per card) in PBN, North's hand first ("N:AKQ.JT9... ...")."""
    ranks = "A23456789TJQK"
    order = "AKQJT98765432"
    owners = np.asarray(owners)
    hands = []
    for seat in range(SEATS):
        suits = []
        for suit in range(4):
            held = [ranks[c % 13] for c in range(suit * 13, suit * 13 + 13) if owners[c] == seat]
            suits.append("".join(sorted(held, key=order.index)))
        hands.append(".".join(suits))
    return "N:" + " ".join(hands)


def solve(owners, batch=32):
    """The double-dummy tricks of deals (n, 52), (n, 20) int8 as [seat * 5 + denomination],
    computed by Bo Haglund's DDS through ``endplay`` (a test extra: ``pip install endplay``)."""
    from endplay.dds import calc_all_tables
    from endplay.types import Deal

    owners = np.asarray(owners).reshape(-1, CARDS)
    tricks = np.empty((len(owners), SEATS, DENOMINATIONS), dtype=np.int8)
    for start in range(0, len(owners), batch):  # DDS solves at most 32 tables a call
        deals = [Deal.from_pbn(pbn(o)) for o in owners[start : start + batch]]
        for k, table in enumerate(calc_all_tables(deals)):
            rows = table.to_list()  # [endplay's denomination][seat]
            for d, row in enumerate(_ENDPLAY_DENOMINATIONS):
                tricks[start + k, :, d] = rows[row]
    return tricks.reshape(-1, TRICKS)


def make(n, seed):
    """A table of ``n`` deals drawn with ``seed`` and solved by DDS: (keys, values)."""
    owners = deal(n, seed)
    return owners_to_keys(owners), tricks_to_values(solve(owners))


def digest(path=SHIPPED):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m vecenv.envs.bridge_bidding.table",
        description="Make a bridge deal table with DDS (endplay) in Pgx's format.",
    )
    parser.add_argument("--deals", type=int, default=4096, help="how many deals")
    parser.add_argument("--seed", type=int, default=0, help="the deals' numpy seed")
    parser.add_argument("--out", required=True, help="the .npy file to write")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    keys, values = make(args.deals, args.seed)
    save(args.out, keys, values)
    print(f"{args.out}: {args.deals} deals, seed {args.seed}, sha256 {digest(args.out)}")


if __name__ == "__main__":
    main()
