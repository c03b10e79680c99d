"""``device=`` in the entry points, on any machine."""

import numba
import numpy as np
import pytest

import vecenv

from . import require_numba_cuda

require_numba_cuda()


def test_unknown_device_is_refused():
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        vecenv.make("cartpole", 2, device="tpu")


def test_bad_arguments_are_refused_before_the_gpu_is_needed():
    with pytest.raises(ValueError, match="num_envs"):
        vecenv.make("cartpole", 0, device="cuda")


def test_without_a_gpu_the_error_says_so():
    from numba import cuda

    if numba.config.ENABLE_CUDASIM or cuda.is_available():
        pytest.skip("a GPU (or the simulator) is here")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        vecenv.make("cartpole", 2, device="cuda")
    from vecenv.search import MCTS

    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):  # before any search is made
        MCTS("tictactoe", 8, device="cuda")


def test_bench_runs_on_the_cuda_simulator():
    """``vecenv bench --device cuda`` measures the GPU engine (here numba's simulator: the figure
    means nothing, the row's presence does)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    args = ["bench", "--device", "cuda", "--num-envs", "4", "--steps", "5", "--no-gym"]
    code = f"import sys; from vecenv.cli import main; sys.exit(main({args + ['--repeats', '1']!r}))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "device='cuda'" in out.stdout
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("CartPole-v1")]
    assert len(rows) == 1 and rows[0][1] == "4"


def _cli(args, env=None):
    import subprocess
    import sys

    code = f"import sys; from vecenv.cli import main; sys.exit(main({list(args)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600
    )


def test_train_ppo_on_cuda_without_a_gpu_says_so(tmp_path):
    """``vecenv train ppo --device cuda`` without a GPU: one line naming what is missing, exit 2,
    nothing written."""
    from numba import cuda

    if numba.config.ENABLE_CUDASIM or cuda.is_available():
        pytest.skip("a GPU (or the simulator) is here")
    run_dir = tmp_path / "run"
    out = _cli(["train", "ppo", "--env", "CartPole-v1", "--device", "cuda", "--run-dir",
                str(run_dir)])  # fmt: skip
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a CUDA GPU" in lines[0], out.stderr
    assert not run_dir.exists()


def test_train_ppo_on_cuda_runs_on_the_simulator(tmp_path):
    """The device path of ``vecenv train ppo`` end to end on numba's CUDA simulator (PyTorch on
    the CPU reads the rollouts through DLPack): the run's files, and a policy that loads."""
    import json
    import os

    pytest.importorskip("torch")
    run_dir = tmp_path / "run"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONWARNINGS="ignore")
    args = ["train", "ppo", "--env", "CartPole-v1", "--device", "cuda", "--num-envs", "4",
            "--num-steps", "8", "--total-steps", "64", "--hidden", "8", "--update-epochs", "1",
            "--run-dir", str(run_dir)]  # fmt: skip
    out = _cli(args, env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "GPU" in out.stdout and "did not reach 475" in out.stdout, out.stdout
    summary = json.loads((run_dir / "run.json").read_text())
    assert summary["device"] == "cuda" and 0 < summary["steps"] <= 64
    from vecenv import ppo

    policy = ppo.load(str(run_dir / "policy.pt"), game="cartpole")
    action = policy.act(np.zeros((3, 4), dtype=np.float32), 3)
    assert action.shape == (3,) and set(action.tolist()) <= {0, 1}
    for wrong in (["--env", "connectx", "--selfplay"], ["--precision", "float32"],
                  ["--env", "gym.CartPole-v1"]):  # fmt: skip
        bad = _cli([*args, *wrong], env)
        assert bad.returncode == 2 and "--device cuda" in bad.stderr, bad.stderr
