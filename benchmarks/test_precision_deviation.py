"""``precision_deviation.py`` end to end on CartPole at a small size (its figures are in
docs/precision.md); not a benchmark: it times nothing."""

import json

import precision_deviation


def test_the_deviation_run_compares_both_precisions(tmp_path):
    code = precision_deviation.main(
        ["--games", "cartpole", "--num-envs", "64", "--steps", "300", "--no-train"]
        + ["--out", str(tmp_path)]
    )
    doc = json.loads((tmp_path / "deviation.json").read_text())
    (row,) = doc["rows"]
    length = row["episode length"]
    assert row["policy"] == "random" and min(length["n"]) > 300
    assert 0.0 <= length["ks_p"] <= 1.0 and length["same"] == (code == 0)
    assert "| cartpole | random | episode length" in (tmp_path / "deviation.md").read_text()


def test_the_ks_test_tells_apart_what_differs():
    rng = __import__("numpy").random.default_rng(0)
    a, b = rng.normal(0, 1, 2000), rng.normal(0, 1, 2000)
    assert precision_deviation.ks_two_sample(a, b)[1] > 0.01
    assert precision_deviation.ks_two_sample(a, b + 0.3)[1] < 1e-6
