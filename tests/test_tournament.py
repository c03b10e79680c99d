"""Round-robin tournaments: the cross-table, OpenSkill ratings, the HTML page, the command."""

import numpy as np
import pytest

from tests.test_cli import run
from vecenv import selfplay, tournament

pytest.importorskip("openskill")


def first_legal(obs, legal):
    return np.argmax(legal, axis=1).astype(np.int64)


def test_round_robin_table_and_ratings():
    t = tournament.round_robin("connectx", ["negamax", "random", first_legal], 16, seed=3)
    assert t.names == ["negamax", "random", "first_legal"]
    for i in range(3):
        for j in range(3):
            if i != j:
                assert (t.table[i, j] == t.table[j, i][::-1]).all()
                assert t.table[i, j].sum() == 16
    # Each pair's matches are selfplay.play's with the pair's seed.
    pair = selfplay.play("connectx", ("random", first_legal), 16, seed=3 + 2)
    assert (t.pairs[(1, 2)].rewards == pair.rewards).all()
    assert t.ratings[0].name == "negamax" and t.ratings[-1].ordinal < t.ratings[0].ordinal
    again = tournament.round_robin("connectx", ["negamax", "random", first_legal], 16, seed=3)
    assert [(r.name, r.mu, r.sigma) for r in again.ratings] == [
        (r.name, r.mu, r.sigma) for r in t.ratings
    ]
    page = t.html()
    assert page.count("<tr>") == 1 + 3 + 1 + 3 and "negamax" in page


def test_bad_tournaments_are_refused(capsys):
    with pytest.raises(ValueError, match="at least two"):
        tournament.round_robin("connectx", ["negamax"], 4)
    with pytest.raises(ValueError, match="distinct"):
        tournament.round_robin("connectx", ["random", "random"], 4)
    code, _, err = run(capsys, "tournament", "connectx", "--agents", "negamax", "nobody")
    assert code == 2 and "unknown agent" in err


def test_tournament_command(tmp_path, capsys):
    page = tmp_path / "t.html"
    code, out, _ = run(
        capsys, "tournament", "tictactoe", "--agents", "reaction", "random",
        "--matches-per-pair", "10", "--html", str(page),
    )  # fmt: skip
    assert code == 0 and "ratings" in out and page.read_text().startswith("<!doctype html>")
