"""``precision_deviation.py`` end to end on CartPole at a small size (its figures are in
docs/precision.md); not a benchmark: it times nothing."""

import json

import precision_deviation


def test_the_deviation_run_compares_both_precisions(tmp_path):
    """Random actions and a policy trained to CartPole's target (seconds), both precisions."""
    code = precision_deviation.main(
        ["--games", "cartpole", "--num-envs", "64", "--steps", "600", "--out", str(tmp_path)]
    )
    doc = json.loads((tmp_path / "deviation.json").read_text())
    random_row, trained = doc["rows"]
    length = random_row["episode length"]
    assert random_row["policy"] == "random" and min(length["n"]) > 300
    assert 0.0 <= length["ks_p"] <= 1.0
    assert trained["policy"].startswith("trained") and min(trained["episode length"]["n"]) > 0
    # A policy trained to 475 balances far longer than random actions under both precisions.
    means = [trained["episode length"][p][0] for p in ("float64", "float32")]
    assert min(means) > 4 * max(length[p][0] for p in ("float64", "float32"))
    same = all(row[f]["same"] for row in doc["rows"] for f in row if isinstance(row[f], dict))
    assert same == (code == 0)
    table = (tmp_path / "deviation.md").read_text()
    assert "| cartpole | random | episode length" in table and "| cartpole | trained" in table


def test_the_ks_test_tells_apart_what_differs():
    rng = __import__("numpy").random.default_rng(0)
    a, b = rng.normal(0, 1, 2000), rng.normal(0, 1, 2000)
    assert precision_deviation.ks_two_sample(a, b)[1] > 0.01
    assert precision_deviation.ks_two_sample(a, b + 0.3)[1] < 1e-6
