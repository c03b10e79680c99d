"""vecenv on a GPU (``device="cuda"``) against the JAX engines on the same GPU and against vecenv's
own CPU engine on the same machine's cores, measured in one run. Skipped without a CUDA GPU (the
smoke run included: there is nothing to run it on in CI).

- Classic control (CartPole, Acrobot, Pendulum), env-steps/s at N = 2^12 .. 2^22 (even powers):
  vecenv's ``CudaEngine.step`` T = 32 times a round, actions already on the GPU (one of a few
  pre-made device rows each step, as gymnax's scan reads a pre-made row each step); gymnax's
  ``jax.jit(vmap(step))`` in a ``lax.scan`` of T = 32 steps (``harness.gymnax_round``, every
  step's observation kept); vecenv's CPU engine on every core of the machine.
- Connect Four random self-play, plies/s: vecenv's ``DeviceSeats.step(T)`` (both seats the
  built-in random agent, same-step autoreset, T = 32 plies in one launch); Pgx's
  ``connect_four`` under ``jax.jit(vmap)`` in a ``lax.scan`` with ``auto_reset``
  (``harness.pgx_round``); vecenv's CPU ``Seats.step(T)`` on every core.
- Connect Four search, simulations/s: ``MCTS(..., device="cuda")`` (one thread a tree, random
  playouts, UCT) against the CPU search on every core, N = 2^10 .. 2^14 positions, S = 64.
- The end-to-end hand-off: a PyTorch policy's forward pass on the engine's observation buffer (a
  tensor over the same GPU memory) and its argmax stepped as actions, no host copy; against the
  CPU engine whose observations are copied to the GPU and actions back.

Targets (the issue's): CartPole >= 10^9 env-steps/s on an H100-class GPU; >= 10x gymnax and Pgx
on the same GPU. JAX must run on the GPU in this process: run this module on its own
(``pytest benchmarks/test_bench_cuda.py``) so no other module has started jax on the CPU first.
"""

import os
import sys

import numba
import numpy as np
import pytest
import report
from harness import gymnax_round, pgx_round, timed

import vecenv
from vecenv.cuda import gpu_available
from vecenv.seats import Seats

T = 32  # steps (or plies) a round
EXPONENTS = (12, 14, 16, 18, 20, 22)
GAMES = {"cartpole": "CartPole-v1", "acrobot": "Acrobot-v1", "pendulum": "Pendulum-v1"}
SELFPLAY_N = (2**14, 2**18, 2**20)
SEARCH_N = (2**10, 2**12, 2**14)
SEARCH_S = 64
ROUNDS = 5
ACTION_ROWS = 4  # distinct device action rows cycled through a round (memory at N = 2^22)


pytestmark = pytest.mark.skipif(
    not gpu_available(), reason="no CUDA GPU here (GPU figures unmeasured)"
)
CPU_THREADS = numba.config.NUMBA_NUM_THREADS
SECTION = "GPU (CUDA): vecenv's CudaEngine vs the JAX engines on the same GPU and its CPU engine"


def _jax_on_gpu():
    if "jax" not in sys.modules:  # the harness would hold jax to the CPU, for the CPU suites
        os.environ["JAX_PLATFORMS"] = "cuda"
    import jax

    if jax.default_backend() != "gpu":
        pytest.skip("jax runs on the CPU in this process: run benchmarks/test_bench_cuda.py alone")


def _declare():
    for game, gym_id in GAMES.items():
        for e in EXPONENTS:
            key = ("cuda", game, 2**e)
            report.label(key + ("vecenv-cuda",), f"vecenv CUDA {gym_id} N=2^{e}")
            report.label(key + ("gymnax",), f"gymnax scan T={T} N=2^{e}")
            report.label(key + ("vecenv-cpu",), f"vecenv CPU {CPU_THREADS} threads N=2^{e}")
            title = f"{gym_id} N=2^{e}"
            report.compare(SECTION, title + " vs gymnax", key + ("vecenv-cuda",), key + ("gymnax",),
                           target=10.0, target_text="target >= 10x")  # fmt: skip
            report.compare(
                SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",)
            )
    for n in SELFPLAY_N:
        key = ("cuda", "connect_four", n)
        report.label(key + ("vecenv-cuda",), f"vecenv CUDA random self-play N={n}")
        report.label(key + ("pgx",), f"pgx connect_four scan T={T} N={n}")
        report.label(key + ("vecenv-cpu",), f"vecenv CPU Seats.step, {CPU_THREADS} threads")
        title = f"Connect Four random self-play N={n}"
        report.compare(SECTION, title + " vs Pgx", key + ("vecenv-cuda",), key + ("pgx",),
                       target=10.0, target_text="target >= 10x")  # fmt: skip
        report.compare(SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",))
    for n in SEARCH_N:
        key = ("cuda", "search", n)
        report.label(key + ("vecenv-cuda",), f"vecenv CUDA search N={n} S={SEARCH_S}")
        report.label(key + ("vecenv-cpu",), f"vecenv CPU search, {CPU_THREADS} threads")
        title = f"Connect Four search N={n}"
        report.compare(SECTION, title + " vs CPU", key + ("vecenv-cuda",), key + ("vecenv-cpu",))
    for n in (2**16, 2**20):
        key = ("cuda", "torch-handoff", n)
        report.label(key + ("zero-copy",), f"CartPole + torch policy on GPU obs, N={n}")
        report.label(key + ("host-copies",), f"CPU engine, obs to GPU and actions back, N={n}")
        report.compare(SECTION, f"PyTorch hand-off N={n}", key + ("zero-copy",),
                       key + ("host-copies",))  # fmt: skip


_declare()


def _action_rows(engine, rows, seed=0):
    rng = np.random.default_rng(seed)
    n = engine.num_envs
    low, high = engine.action.low, engine.action.high
    if engine.action.discrete:
        return [rng.integers(low[0], high[0] + 1, size=(n, 1)) for _ in range(rows)]
    return [rng.uniform(low[0], high[0], size=(n, 1)) for _ in range(rows)]


def _cuda_round(game, n):
    from numba import cuda

    engine = vecenv.make(game, n, seed=0, device="cuda")
    rows = [cuda.to_device(a) for a in _action_rows(engine, ACTION_ROWS)]

    def round_fn():
        for t in range(T):
            engine.step(rows[t % ACTION_ROWS])
        cuda.synchronize()

    round_fn()  # compiles the kernels
    return round_fn


def _cpu_round(game, n):
    engine = vecenv.make(game, n, seed=0, num_threads=CPU_THREADS)
    rows = _action_rows(engine, ACTION_ROWS)

    def round_fn():
        for t in range(T):
            engine.step(rows[t % ACTION_ROWS])

    round_fn()
    return round_fn


@pytest.mark.parametrize("impl", ["vecenv-cuda", "gymnax", "vecenv-cpu"])
@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("game", list(GAMES))
def test_classic_control(benchmark, game, exponent, impl):
    n = 2**exponent
    benchmark.group = f"CUDA {GAMES[game]} N=2^{exponent}"
    if impl == "vecenv-cuda":
        round_fn = _cuda_round(game, n)
    elif impl == "vecenv-cpu":
        round_fn = _cpu_round(game, n)
    else:
        _jax_on_gpu()
        rows = [a[:, 0] for a in _action_rows(vecenv.make(game, n), T)]
        round_fn, _ = gymnax_round(GAMES[game], "gymnax-scan", rows, T)
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", game, n, impl), T, n, impl=impl)


def _selfplay_cuda(n):
    from numba import cuda

    from vecenv.cuda.selfplay import DeviceSeats

    engine = vecenv.make("connectx", n, seed=0, autoreset="same_step", device="cuda")
    seats = DeviceSeats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))

    def round_fn():
        seats.step(T)
        cuda.synchronize()

    round_fn()
    return round_fn


def _selfplay_cpu(n):
    engine = vecenv.make("connectx", n, seed=0, autoreset="same_step", num_threads=CPU_THREADS,
                         parallel=True)  # fmt: skip
    seats = Seats(engine)
    seats.assign("random", np.zeros(n, dtype=np.int64))
    seats.assign("random", np.ones(n, dtype=np.int64))

    def round_fn():
        seats.step(T)

    round_fn()
    return round_fn


@pytest.mark.parametrize("impl", ["vecenv-cuda", "pgx", "vecenv-cpu"])
@pytest.mark.parametrize("n", SELFPLAY_N)
def test_random_selfplay(benchmark, n, impl):
    benchmark.group = f"CUDA Connect Four random self-play N={n}"
    if impl == "vecenv-cuda":
        round_fn = _selfplay_cuda(n)
    elif impl == "vecenv-cpu":
        round_fn = _selfplay_cpu(n)
    else:
        _jax_on_gpu()
        round_fn, _ = pgx_round(n, T)
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "connect_four", n, impl), T, n, unit="plies", impl=impl)


@pytest.mark.parametrize("impl", ["vecenv-cuda", "vecenv-cpu"])
@pytest.mark.parametrize("n", SEARCH_N)
def test_search(benchmark, n, impl):
    from vecenv.search import MCTS

    benchmark.group = f"CUDA Connect Four search N={n}"
    engine = vecenv.make("connectx", n, seed=0, autoreset="disabled")
    table = Seats(engine)
    table.assign("random", np.zeros(n, dtype=np.int64))
    table.assign("random", np.ones(n, dtype=np.int64))
    table.step(4)  # positions four plies in
    states = engine.get_state()
    device = "cuda" if impl == "vecenv-cuda" else "cpu"
    threads = {} if device == "cuda" else {"num_threads": CPU_THREADS}
    searcher = MCTS("connectx", SEARCH_S, device=device, **threads)

    def round_fn():
        searcher.search(states, seed=1)

    round_fn()
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "search", n, impl), SEARCH_S, n, unit="simulations",
                  impl=impl)  # fmt: skip


@pytest.mark.parametrize("impl", ["zero-copy", "host-copies"])
@pytest.mark.parametrize("n", [2**16, 2**20])
def test_torch_handoff(benchmark, n, impl):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch here has no CUDA")
    from numba import cuda

    benchmark.group = f"CUDA PyTorch hand-off N={n}"
    policy = torch.nn.Sequential(
        torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2)
    ).cuda()
    if impl == "zero-copy":
        engine = vecenv.make("cartpole", n, seed=0, device="cuda")
        obs = torch.as_tensor(engine.obs["obs"], device="cuda").view(n, 4)  # the engine's buffer

        def round_fn():
            with torch.no_grad():
                for _ in range(T):
                    engine.step(policy(obs).argmax(-1).view(n, 1))
            cuda.synchronize()

    else:
        engine = vecenv.make("cartpole", n, seed=0, num_threads=CPU_THREADS)

        def round_fn():
            with torch.no_grad():
                for _ in range(T):
                    obs = torch.from_numpy(engine.obs["obs"].reshape(n, 4)).cuda()
                    engine.step(policy(obs).argmax(-1).view(n, 1).cpu().numpy())

    round_fn()
    timed(benchmark, round_fn, ROUNDS)
    report.record(benchmark, ("cuda", "torch-handoff", n, impl), T, n, impl=impl)
