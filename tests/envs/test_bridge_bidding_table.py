"""bridge_bidding's deal table (``vecenv.envs.bridge_bidding.table``): Pgx's file format, the
shipped table, and its tricks beside DDS's (endplay, a test extra). That Pgx loads the file and
decodes its deals as we encode them is tests/envs/test_bridge_bidding.py's (it plays on them)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.envs.reference import need
from vecenv.envs.bridge_bidding import table


def test_the_shipped_table_is_small_and_well_formed():
    keys, values = table.load()
    assert len(keys) >= 2000 and table.SHIPPED.stat().st_size < 1_000_000
    assert table.digest() == table.SHIPPED_SHA256
    assert len(np.unique(keys, axis=0)) == len(keys)
    owners = table.keys_to_owners(keys)
    np.testing.assert_array_equal(table.owners_to_keys(owners), keys)
    np.testing.assert_array_equal(table.tricks_to_values(table.values_to_tricks(values)), values)


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 13), min_size=20, max_size=20))
@settings(max_examples=50, deadline=None)
def test_keys_and_values_round_trip(seed, tricks):
    owners = table.deal(1, seed)
    np.testing.assert_array_equal(table.keys_to_owners(table.owners_to_keys(owners)), owners)
    assert table.check(table.owners_to_keys(owners), table.tricks_to_values([tricks])) is None
    np.testing.assert_array_equal(
        table.values_to_tricks(table.tricks_to_values([tricks]))[0], tricks
    )


def test_a_broken_table_is_refused(tmp_path):
    keys, values = table.load()
    bad = keys[:3].copy()
    bad[1, 0] ^= 1  # a card moves from one seat to another: 14 cards and 12
    for k, v, message in (
        (bad, values[:3], "not 13 cards"),
        (keys[:3], values[:3] | 0xE, "more than 13 tricks"),
        (keys[:3, :3], values[:3, :3], "(n, 4)"),
    ):
        with pytest.raises(ValueError, match=message):
            table.save(tmp_path / "t.npy", k, v)
    np.save(tmp_path / "flat.npy", keys)
    with pytest.raises(ValueError, match="a deal table is a"):
        table.load(tmp_path / "flat.npy")


def test_the_table_is_what_dds_computes():
    """Two of the shipped deals (the first and the last) solved again by DDS."""
    need("endplay", "endplay (DDS)")
    keys, values = table.load()
    rows = [0, len(keys) - 1]
    tricks = table.solve(table.keys_to_owners(keys[rows]))
    np.testing.assert_array_equal(table.tricks_to_values(tricks), values[rows])
