"""The contract of ``vecenv.testing`` on every game: the bar a user's game meets too."""

import numpy as np
import pytest

import vecenv
from tests.test_outside_games import copy_walk
from vecenv import registry, testing

GAMES = registry.list_envs()
CHECKS = [c for c in testing.CHECKS if c != "speed"]


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("game", GAMES)
def test_every_game_meets_the_contract(game, check):
    try:
        detail = testing.CHECKS[check](game)
    except testing.Skipped as reason:
        pytest.skip(str(reason))
    assert isinstance(detail, str) and detail


def test_the_speed_check_reports_rates_at_each_size():
    rates = testing.steps_per_second("cartpole", sizes=(1, 64), seconds=0.01)
    assert set(rates) == {1, 64} and all(rate > 0 for rate in rates.values())


def test_a_broken_game_fails_the_contract_by_name(tmp_path):
    # A user's game whose observation leaves its declared space: the batch check says where.
    folder = copy_walk(tmp_path, "leaky_walk")
    rules = folder / "rules.py"
    rules.write_text(rules.read_text().replace("= s.position\n", "= s.position + 100\n"))
    results = {r.check: r for r in testing.run_checks(str(folder), ["spec", "batch", "render"])}
    assert results["spec"].status == "pass"
    assert results["batch"].status == "fail"
    assert "observation 'position'[0, 0] = 10" in results["batch"].detail
    assert "outside its space" in results["batch"].detail
    assert results["render"].status == "pass"
    with pytest.raises(testing.CheckFailed, match="batch: CheckFailed: observation"):
        testing.check_game(folder, ["batch"])
    testing.check_game("leaky_walk", ["spec", "state round trip"])  # passes: no exception


def test_different_seeds_give_different_episodes():
    a, b = (vecenv.make("cartpole", num_envs=8, seed=s) for s in (1, 2))
    assert not np.array_equal(a.obs["obs"], b.obs["obs"])
