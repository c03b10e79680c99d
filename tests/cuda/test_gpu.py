"""On a real GPU (skipped without one): every check of ``sidebyside`` for every game, for real and
on larger batches, a throughput sanity check, the zero-copy hand-off to PyTorch (its CUDA array
interface and DLPack both ways) and pickling on the device."""

import time

import numpy as np
import pytest

import vecenv
from vecenv import registry

from . import require_numba_cuda

require_numba_cuda()

from vecenv.cuda import gpu_available  # noqa: E402

from . import sidebyside  # noqa: E402

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no CUDA GPU here")

GAMES = vecenv.list_envs()


@pytest.mark.parametrize("game", GAMES)
def test_game_matches_the_cpu_engine(game):
    worst = sidebyside.trajectories(game, num_envs=257, steps=200)
    print(f"{game}: largest float deviation from the CPU engine over 200 steps: {worst:.3g}")
    sidebyside.bad_actions(game, num_envs=300)
    sidebyside.state_round_trip(game, num_envs=130)
    for mode in ("same_step", "disabled"):
        sidebyside.trajectories(game, num_envs=129, steps=60, autoreset=mode)
    if registry.game_module(game, "agents") is not None:
        sidebyside.agents(game, num_envs=130, calls=10)


@pytest.mark.parametrize("game", ["tictactoe", "connectx", "othello"])
def test_search_matches_the_cpu_search(game):
    sidebyside.search(game, num_envs=130, simulations=48)


def test_vector_env():
    sidebyside.vector_env(num_envs=300, steps=100)


def test_throughput_sanity():
    """CartPole at N = 2^20 for 20 steps: every episode moves, and the rate is printed (the
    benchmarks measure it; tests assert no timings)."""
    from numba import cuda

    n, steps = 2**20, 20
    engine = vecenv.make("cartpole", n, seed=0, device="cuda", autoreset="disabled")
    actions = cuda.to_device(np.random.default_rng(0).integers(0, 2, (n, 1)))
    engine.step(actions)
    cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        engine.step(actions)
    cuda.synchronize()
    rate = n * steps / (time.perf_counter() - start)
    print(f"CartPole N={n}: {rate:.3g} env-steps/s")
    assert np.isfinite(rate) and rate > 0
    assert (engine.get_state()["step"] > 0).all()  # every episode stepped, none reset


def test_torch_zero_copy():
    """Observations reach PyTorch without a copy (the tensor is the engine's buffer), and a
    policy's actions come back as a CUDA tensor, also without a copy."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    n = 4096
    engine = vecenv.make("cartpole", n, seed=3, device="cuda")
    cpu = vecenv.make("cartpole", n, seed=3)
    buffer = engine.obs["obs"]
    obs = torch.as_tensor(buffer, device="cuda")
    assert obs.data_ptr() == buffer.__cuda_array_interface__["data"][0]
    policy = torch.nn.Linear(4, 2).cuda()
    for _ in range(50):
        with torch.no_grad():
            actions = policy(obs.view(n, 4)).argmax(-1).view(n, 1)
        cpu.step(actions.cpu().numpy())
        engine.step(actions)  # a CUDA tensor: read where it lies
        # The same tensor now holds the new observations: it is the engine's buffer.
        np.testing.assert_allclose(obs.cpu().numpy(), cpu.obs["obs"], rtol=1e-5, atol=1e-6)


def test_pickling():
    sidebyside.pickling(num_envs=300, steps=20)
    sidebyside.pickling("connectx", num_envs=130, autoreset="next_step")
    sidebyside.pickling_seats(num_envs=130, pair=(0, -1))
    sidebyside.pickling_vector_env(num_envs=130)


def test_torch_dlpack():
    """Every output through ``torch.from_dlpack`` is the engine's buffer (same address), and
    actions and masks given as DLPack only (a CUDA tensor seen as JAX arrays are) are taken."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")

    def to_torch(a):
        return torch.from_dlpack(a)

    def wrap(a):
        return sidebyside.DLPackOnly(torch.as_tensor(a, device="cuda"))

    consumer = (
        to_torch,
        lambda x: x.data_ptr(),
        lambda a: a.__cuda_array_interface__["data"][0],
    )
    for game in ("cartpole", "pendulum", "catch"):
        sidebyside.dlpack(game, num_envs=257, steps=30, consumer=consumer, wrap=wrap)


@pytest.mark.parametrize("game", [g for g in GAMES if registry.get_spec(g).num_agents == 1])
def test_rollout_matches_steps(game):
    from . import rollouts

    rollouts.rollout_matches_steps(game, num_envs=257, steps=64)
    for mode in ("same_step", "disabled"):
        rollouts.rollout_matches_steps(game, num_envs=129, steps=40, autoreset=mode, calls=1)


def test_one_launch_and_rollout_policies():
    from . import rollouts

    for game in ("cartpole", "connectx", "pendulum"):
        rollouts.one_launch(game, num_envs=300)
    rollouts.rollout_policy(num_envs=300)


def test_rollout_to_torch():
    """The rollout's buffers through ``torch.from_dlpack``: the same memory, the right shapes."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    n, steps = 1000, 16
    engine = vecenv.make("cartpole", n, seed=1, device="cuda")
    rollout = engine.rollout(steps)
    obs = torch.from_dlpack(rollout.obs["obs"])
    assert obs.shape == (steps + 1, n, 1, 4) and obs.device.type == "cuda"
    assert obs.data_ptr() == rollout.obs["obs"].__cuda_array_interface__["data"][0]
    rewards = torch.from_dlpack(rollout.rewards)
    assert rewards.shape == (steps, n) and bool((rewards >= 0).all())
    np.testing.assert_array_equal(obs[-1].cpu().numpy(), engine.obs["obs"].copy_to_host())


def test_prepared_words_are_numba_cudas():
    """The prepared step's parameter words are those numba-cuda's own launch makes of the same
    arguments (``_Kernel._prepare_args``), and both launch paths give the same trajectories."""
    import ctypes

    from vecenv.cuda.launch import words

    engine = vecenv.make("connectx", 130, seed=2, device="cuda")
    engine.step(np.zeros((130, 2), dtype=np.int64))
    run = engine._launches["step"]
    assert run.raw
    mine, theirs = [], []
    for argtype, value in zip(run.kernel.argument_types, run.args, strict=True):
        words(argtype, value, mine)
        run.kernel._prepare_args(argtype, value, 0, [], theirs)

    def plain(word):
        return word.value if isinstance(word, ctypes._SimpleCData) else word

    assert [plain(w) for w in mine] == [plain(w) for w in theirs]


def test_both_launch_paths_agree(monkeypatch):
    actions = np.random.default_rng(0).integers(0, 2, (300, 1))
    outs = []
    for path in ("raw", "numba"):
        monkeypatch.setenv("VECENV_CUDA_LAUNCH", path)
        engine = vecenv.make("cartpole", 300, seed=4, device="cuda")
        assert engine._prepared("x", engine._k.observe, (engine._states, engine._cfg,
                                engine._obs, engine._all)).raw == (path == "raw")  # fmt: skip
        for _ in range(30):
            engine.step(actions)
        rollout = engine.rollout(20)
        outs.append((engine.get_state(), rollout.actions.copy_to_host()))
    assert (outs[0][0] == outs[1][0]).all()
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
