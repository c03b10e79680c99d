"""Time one PPO update: PyTorch's ``trainer.update`` (on one thread) against
``vecenv.ppo.compiled_update.CompiledUpdate``, on the tuned CartPole shape (4 observations,
(64, 64) tanh MLPs, Discrete(2), 1024 rows in 2 minibatches) at 20 and 10 epochs.

Both run warm (one untimed update first, so compilation and allocation are excluded) on the same
batch; the two alternate round by round so that a busy machine slows both alike, and the best
round of each is reported.

    python benchmarks/ppo_update.py                # 7 rounds
    python benchmarks/ppo_update.py --rounds 15 --rows 2048
"""

import argparse
import platform
import time

import numpy as np


def setup(rows, seed=0):
    import torch
    from gymnasium import spaces

    from vecenv.ppo.network import ActorCritic

    torch.manual_seed(seed)
    net = ActorCritic(spaces.Box(-np.inf, np.inf, (4,)), spaces.Discrete(2), (64, 64))
    rng = np.random.default_rng(seed)
    obs = rng.normal(0, 1, (rows, 4)).astype(np.float32)
    actions = rng.integers(0, 2, rows)
    logp = np.full(rows, np.log(0.5), dtype=np.float32)
    adv, returns, values = (rng.normal(0, 1, rows).astype(np.float32) for _ in range(3))
    return net, (obs, actions, logp, adv, returns, values)


def measure(epochs, minibatches, rows, rounds, lr=2.5e-4):
    """(best seconds of PyTorch's update, best seconds of the compiled one)."""
    import torch

    from vecenv.ppo.compiled_update import CompiledUpdate
    from vecenv.ppo.trainer import PPOConfig, update

    torch.set_num_threads(1)
    cfg = PPOConfig(update_epochs=epochs, num_minibatches=minibatches, learning_rate=lr)
    net, batch = setup(rows)
    twin, _ = setup(rows)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    generator = torch.Generator().manual_seed(0)
    tensors = [torch.from_numpy(a) for a in batch]
    runner = CompiledUpdate(twin, cfg)

    def with_torch():
        update(net, optimizer, cfg, generator, *tensors)

    def compiled():
        runner.update(*batch, lr=lr)

    best = {with_torch: np.inf, compiled: np.inf}
    for fn in best:
        fn()  # warm: compilation, allocation, first-touch
    for _ in range(rounds):
        for fn in best:
            start = time.perf_counter()
            fn()
            best[fn] = min(best[fn], time.perf_counter() - start)
    return best[with_torch], best[compiled]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", type=int, default=1024)
    args = parser.parse_args(argv)
    print(f"{platform.processor() or platform.machine()}, {args.rows} rows, best of {args.rounds}")
    print("| epochs x minibatches | steps | PyTorch ms | compiled ms | speed-up |")
    print("|---|---|---|---|---|")
    for epochs, minibatches in ((20, 2), (10, 2)):
        torch_s, compiled_s = measure(epochs, minibatches, args.rows, args.rounds)
        steps = epochs * minibatches
        print(
            f"| {epochs} x {minibatches} | {steps} | {torch_s * 1e3:.1f} | {compiled_s * 1e3:.1f} "
            f"| {torch_s / compiled_s:.1f}x |"
        )


if __name__ == "__main__":
    main()
