"""Training throughput: the same PPO on vecenv's VectorEnv and on the vector env users have today.

Env-steps per second of ``vecenv.ppo.Trainer`` (PyTorch on one thread, N = 64, the same
hyper-parameters and seed on both sides) over a fixed number of steps: CartPole-v1 against
gymnasium's numpy ``CartPoleVectorEnv``, Acrobot-v1 against ``SyncVectorEnv``. Targets: CartPole
no slower (ratio >= 1.0), Acrobot >= 1.5x. Time to a return threshold, the env's share of wall
time and the ConnectX comparison with kaggle-environments take minutes: ``python
benchmarks/training.py`` (see its docstring) measures those and draws the learning curves. With
``--benchmark-disable`` (the CI smoke run) every side trains a few updates, untimed.

Keys: ("train", env_id, side) with side "vecenv" or "gymnasium".
"""

import pytest
import report
import training

pytest.importorskip("torch", reason="the trainer needs PyTorch (vecenv[train])")

N = training.N
STEPS = N * 32 * 10
PEERS = {"CartPole-v1": ("gymnasium CartPoleVectorEnv", 1.0), "Acrobot-v1": ("SyncVectorEnv", 1.5)}
SECTION = f"PPO training, N={N}, 1 thread: env-steps/s of the whole training loop"

for env_id, (peer, target) in PEERS.items():
    report.label(("train", env_id, "vecenv"), f"PPO on vecenv {env_id}")
    report.label(("train", env_id, "gymnasium"), f"PPO on {peer} {env_id}")
    report.compare(
        SECTION,
        f"{env_id} vs {peer}",
        ("train", env_id, "vecenv"),
        ("train", env_id, "gymnasium"),
        target=target,
        target_text=f">= {target}x",
    )


@pytest.mark.parametrize("side", ["vecenv", "gymnasium"])
@pytest.mark.parametrize("env_id", list(PEERS))
def test_ppo_training_throughput(benchmark, env_id, side):
    from vecenv.ppo import vector_env

    benchmark.group = f"PPO training {env_id} N={N}"
    steps = N * 32 * 2 if benchmark.disabled else STEPS
    runs = []

    def train():
        env = vector_env(env_id, N, backend=side)
        runs.append(training.train_once(env, training._config(steps, 1)))

    benchmark.pedantic(train, rounds=1, iterations=1)
    run = runs[-1]
    assert run.steps > 0 and 0 < run.env_fraction < 1
    report.record(
        benchmark, ("train", env_id, side), steps / N, N, env_fraction=round(run.env_fraction, 4)
    )


def test_the_full_comparison_runs_in_quick_mode(benchmark, tmp_path):
    if not benchmark.disabled:
        pytest.skip("python benchmarks/training.py runs the full comparison (minutes)")
    pytest.importorskip("kaggle_environments", reason="the ConnectX peer is kaggle-environments")
    result = training.main(["--quick", "--out", str(tmp_path)])
    assert result["CartPole-v1"]["median_steps_per_second"]["vecenv"] > 0
    assert result["ConnectX vs random"]["ratio"] > 1
    assert (tmp_path / "CartPole-v1.png").exists() and (tmp_path / "training.json").exists()
