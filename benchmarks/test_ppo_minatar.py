"""MinAtar against the published returns (``benchmarks/ppo_minatar.py``): its record and, in the
smoke run (``--benchmark-disable``) only, a quick run end to end. A real run trains 10M steps
(about 13 minutes a game on 2 cores): ``python benchmarks/ppo_minatar.py``."""

import json

import ppo_minatar
import pytest

pytest.importorskip("torch", reason="the trainers need PyTorch (vecenv[train])")


def test_a_thinned_curve_keeps_its_spacing_its_best_and_its_last():
    curve = [(k * 10, k * 0.1, 99.0 if k == 503 else k / 1000) for k in range(1000)]
    kept = ppo_minatar.thinned(curve, points=100)
    assert 100 <= len(kept) <= 102
    assert kept[0] == list(curve[0]) and kept[-1] == list(curve[-1])
    assert list(curve[503]) in kept  # the best row
    steps = [row[0] for row in kept]
    assert steps == sorted(steps)
    short = curve[:50]
    assert ppo_minatar.thinned(short, points=100) == [list(row) for row in short]


def test_a_new_record_replaces_only_the_same_name_game_and_seed(tmp_path):
    path = tmp_path / "minatar.json"
    old = [
        {"name": "A", "game": "minatar_breakout", "seed": 1, "best": 1},
        {"name": "A", "game": "minatar_breakout", "seed": 2, "best": 2},
    ]
    path.write_text(json.dumps({"runs": old}))
    new = {"name": "A", "game": "minatar_breakout", "seed": 2, "best": 3}
    runs = ppo_minatar.merged(path, [new])["runs"]
    assert [(r["seed"], r["best"]) for r in runs] == [(1, 1), (2, 3)]
    assert ppo_minatar.merged(tmp_path / "none.json", [new]) == {"runs": [new]}


def test_set_changes_fields_of_the_configuration_by_json_values():
    changed = ppo_minatar.overrides(["num_minibatches=16", "hidden=[128, 128]", "anneal_lr=true"])
    assert changed == {"num_minibatches": 16, "hidden": [128, 128], "anneal_lr": True}
    assert ppo_minatar.overrides([]) == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["--games", "cartpole"],
        ["--name", "../x"],
        ["--quick"],
        ["--seeds", "one"],
        ["--set", "num_minibatches"],
        ["--set", "no_such_field=1"],
        ["--set", "seed=2"],
        ["--set", "hidden=[256,"],
    ],
)
def test_bad_arguments_are_refused_before_training(argv, tmp_path, capsys):
    with pytest.raises(SystemExit):
        ppo_minatar.main(argv)
    assert capsys.readouterr().err


def test_quick_run_records_a_curve_on_the_game_without_sticky_actions(request, tmp_path):
    if not request.config.getoption("benchmark_disable", False):
        pytest.skip("python benchmarks/ppo_minatar.py trains 10M steps a game (minutes)")
    out = tmp_path / "minatar.json"
    argv = ["--quick", "--games", "minatar_breakout", "--name", "Q", "--out", str(out)]
    argv += ["--set", "num_minibatches=16"]
    (record,) = ppo_minatar.main(argv)
    (saved,) = json.loads(out.read_text())["runs"]
    assert saved == json.loads(json.dumps(record))
    assert saved["name"] == "Q" and saved["sticky_action_prob"] == 0.0
    assert saved["changed"] == {"num_minibatches": 16}
    assert saved["published"] == 28.0 and saved["steps"] > 0 and saved["curve"]
    assert saved["last"] == saved["curve"][-1]
