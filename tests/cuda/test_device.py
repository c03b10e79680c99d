"""``device=`` in the entry points, on any machine."""

import numba
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
