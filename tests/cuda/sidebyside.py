"""The GPU engine beside the CPU engine: the checks every game passes, on the simulator or a GPU.

Each check builds both engines with the same seed and arguments, drives them with the same inputs
and compares every output. Under numba's CUDA simulator the rules run as Python on the host's C
library, so every game matches bit for bit. On a GPU, integer games (no float in their state but
rewards) match bit for bit; float games within ``TOLERANCE`` (the GPU's math library and its fused
multiply-adds differ from glibc's in the last bits).

Run by ``test_simulator.py`` in a process of its own (``python -m tests.cuda.simulated``) and by
``test_gpu.py`` in the test process on a real GPU.
"""

import pickle

import numba
import numpy as np
from numba import cuda

import vecenv
from vecenv.selfplay import Seats

# rtol, atol of float fields on a GPU, by dtype (runs of a few hundred steps). Measured on an
# H100 (2026-11-27, runs H100-1 and H100-2): Pendulum's float64 rewards deviated up to 2.3e-10
# absolute, 3.5e-8 relative on a reward near zero (libdevice's cos and the fused multiply-adds
# against glibc); float32 observations not at all.
TOLERANCE = {np.dtype(np.float32): (1e-5, 1e-6), np.dtype(np.float64): (1e-7, 1e-9)}


def float_game(engine):
    """Whether a game's state holds floats beyond its rewards (its math runs in floats)."""
    dtype = engine.state_dtype
    return any(dtype[n].base.kind == "f" for n in dtype.names if n != "reward")


def _exact(engine):
    """Whether the GPU engine must match this game bit for bit here."""
    return numba.config.ENABLE_CUDASIM or not float_game(engine)


def host(a):
    """A host copy of a numba device array, a (CUDA) torch tensor or anything numpy reads."""
    if hasattr(a, "copy_to_host"):
        return a.copy_to_host()
    return a.cpu().numpy() if hasattr(a, "cpu") else np.asarray(a)


def same(a, b, exactly, what):
    """Compare the CPU's ``a`` to the GPU's ``b``; returns the largest absolute deviation."""
    b = host(b)
    a = np.asarray(a)
    assert a.shape == b.shape and a.dtype == b.dtype, (what, a.shape, b.shape, a.dtype, b.dtype)
    if exactly or a.dtype.kind != "f":
        np.testing.assert_array_equal(a, b, err_msg=what)
        return 0.0
    rtol, atol = TOLERANCE[a.dtype]
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, err_msg=what)
    return float(np.max(np.abs(a.astype(np.float64) - b), initial=0.0))


def random_actions(engine, rng):
    shape = (engine.num_envs, engine.num_agents) + engine.action.shape
    low, high = engine.action.low, engine.action.high
    if engine.action.discrete:
        return rng.integers(np.min(low), np.max(high) + 1, size=shape)
    return rng.uniform(np.broadcast_to(low, shape), np.broadcast_to(high, shape))


def compare_outputs(cpu, gpu, exactly, what):
    worst = 0.0
    for name in cpu.obs:
        worst = max(worst, same(cpu.obs[name], gpu.obs[name], exactly, f"{what}: obs {name}"))
    if cpu.final_obs is not None:
        for name in cpu.final_obs:
            same(cpu.final_obs[name], gpu.final_obs[name], exactly, f"{what}: final {name}")
    worst = max(worst, same(cpu.rewards, gpu.rewards, exactly, f"{what}: rewards"))
    same(cpu.terminated, gpu.terminated, True, f"{what}: terminated")
    same(cpu.truncated, gpu.truncated, True, f"{what}: truncated")
    return worst


def _as_given(actions, t):
    """Actions as a caller may hand them over, by turns: a host array, a device array, a strided
    device view (a column slice of a wider device array), in another integer dtype."""
    if t % 3 == 0:
        return actions
    if t % 3 == 1:
        return cuda.to_device(actions)
    flat = actions.reshape(actions.shape[0], -1)
    if flat.dtype.kind in "iu":
        flat = flat.astype(np.int32)
    wide = cuda.to_device(np.concatenate([flat, flat], axis=1))
    return wide[:, : flat.shape[1]]


def trajectories(game, num_envs=3, steps=25, seed=7, autoreset="next_step", **config):
    """Random actions, host and device arrays in turn: the same outputs and records at every
    step. Returns the largest float deviation seen."""
    cpu = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset, **config)
    gpu = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset, device="cuda", **config)
    exactly = _exact(cpu)
    worst = compare_outputs(cpu, gpu, exactly, f"{game} reset")
    rng = np.random.default_rng(seed)
    for t in range(steps):
        actions = random_actions(cpu, rng)
        cpu.step(actions)
        gpu.step(_as_given(actions, t))
        worst = max(worst, compare_outputs(cpu, gpu, exactly, f"{game} step {t}"))
        if t == steps // 2:  # a masked reset midway, reseeding the episodes it restarts
            mask = np.arange(num_envs) % 2 == 0
            cpu.reset(seed=seed + 1, mask=mask)
            gpu.reset(seed=seed + 1, mask=mask)
            worst = max(worst, compare_outputs(cpu, gpu, exactly, f"{game} reset {t}"))
    if exactly:
        assert (cpu.get_state() == gpu.get_state()).all()
    return worst


def bad_actions(game, num_envs=3, seed=3):
    """A bad action raises ValueError naming the first bad episode, and no episode moves."""
    cpu = vecenv.make(game, num_envs, seed=seed)
    gpu = vecenv.make(game, num_envs, seed=seed, device="cuda")
    actions = random_actions(cpu, np.random.default_rng(seed))
    if cpu.action.discrete:
        actions[1, ...] = np.max(cpu.action.high) + 1
        actions[2, ...] = np.min(cpu.action.low) - 1
    else:
        actions = actions.astype(np.float64)
        actions[1, ...] = np.nan
    before = gpu.get_state()
    for given in (actions, cuda.to_device(actions)):
        try:
            gpu.step(given)
        except ValueError as exc:
            assert "env 1" in str(exc), str(exc)
        else:
            raise AssertionError(f"{game}: a bad action was taken")
        assert (gpu.get_state() == before).all(), f"{game}: an episode moved"
    good = random_actions(cpu, np.random.default_rng(seed + 1))
    cpu.step(good)
    gpu.step(good)
    compare_outputs(cpu, gpu, _exact(cpu), f"{game} after bad actions")
    for wrong in (good.astype(np.float32) + 0.5, good[:-1]):
        if wrong.dtype.kind == "f" and not cpu.action.discrete:
            continue
        try:
            gpu.step(wrong)
        except ValueError:
            pass
        else:
            raise AssertionError(f"{game}: actions of dtype {wrong.dtype} {wrong.shape} taken")


def state_round_trip(game, num_envs=3, seed=5, steps=6):
    """Records move between host and device: a GPU engine's records continue on the CPU and the
    CPU's on the GPU, the same; a record the rules cannot run is refused, changing nothing."""
    cpu = vecenv.make(game, num_envs, seed=seed)
    gpu = vecenv.make(game, num_envs, seed=seed + 1, device="cuda")
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        cpu.step(random_actions(cpu, rng))
    gpu.set_state(cpu.get_state())
    exactly = _exact(cpu)
    assert (gpu.get_state() == cpu.get_state()).all()
    for name in cpu.obs:
        same(cpu.obs[name], gpu.obs[name], exactly, f"{game} set_state obs {name}")
    for _ in range(steps):
        actions = random_actions(cpu, rng)
        cpu.step(actions)
        gpu.step(actions)
        compare_outputs(cpu, gpu, exactly, f"{game} after set_state")
    one = gpu.get_state(1)
    cpu.set_state(one, 0)
    gpu.set_state(one, 0)
    compare_outputs(cpu, gpu, exactly, f"{game} one record")
    bad = gpu.get_state()
    bad["done"][2] = 9
    before = gpu.get_state()
    try:
        gpu.set_state(bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"{game}: a bad record was taken")
    assert (gpu.get_state() == before).all()


def agents(game, num_envs=4, seed=11, plies=3, calls=6, pair=(0, -1)):
    """The built-in agents' moves in the step kernel (``vecenv.cuda.selfplay.DeviceSeats``),
    several plies a call: the same moves, records and totals as the CPU's ``Seats``. ``pair``
    picks the two agents (indices into the game's names): by default the first against the
    last."""
    from vecenv.cuda.selfplay import DeviceSeats

    cpu = vecenv.make(game, num_envs, seed=seed, autoreset="disabled")
    gpu = vecenv.make(game, num_envs, seed=seed, autoreset="disabled", device="cuda")
    table, seats = Seats(cpu), DeviceSeats(gpu)
    k = cpu.num_agents
    seat = np.arange(num_envs) % k
    # The first of the pair in seat i % k of episode i, the second in every other seat.
    for other in range(1, k):
        table.assign(table.names[pair[1]], (seat + other) % k)
        seats.assign(table.names[pair[1]], (seat + other) % k)
    table.assign(table.names[pair[0]], seat)
    seats.assign(table.names[pair[0]], seat)
    for _ in range(calls):
        table.step(plies)
        seats.step(plies)
        compare_outputs(cpu, gpu, True, f"{game} agents")
        assert (cpu.get_state() == gpu.get_state()).all()
        for name in ("actions", "returns", "ends", "memory", "rngs"):
            got = host(getattr(seats, name))
            want = getattr(table, name).reshape(got.shape)
            np.testing.assert_array_equal(want, got, err_msg=f"{game} {name}")


# The search's results, field by field (``vecenv.search.SearchResult``).
SEARCH_FIELDS = ("action", "policy", "visit_counts", "qvalues", "root_value", "searched", "seats")


def search(game, num_envs=5, simulations=12, plies=2, seed=17):
    """The GPU search (``MCTS(..., device="cuda")``) beside the CPU's on positions a few random
    plies into games (one of them over, which neither searches): the same results, by UCT with
    rollouts, Gumbel MuZero with rollouts and PUCT with uniform leaves, and the same streams
    after it; a GPU engine's game searches on the GPU; a Python evaluator is refused there."""
    from vecenv.search import MCTS

    cpu = vecenv.make(game, num_envs, seed=seed, autoreset="disabled")
    table = Seats(cpu)
    table.assign("random", np.zeros(num_envs, dtype=np.int64))
    table.assign("random", np.ones(num_envs, dtype=np.int64))
    table.step(plies)
    states = cpu.get_state()
    states["done"][-1] = 1  # an episode over: never searched
    settings = (
        dict(selection="uct"),
        dict(selection="gumbel", max_considered=4),
        dict(selection="puct", evaluator="uniform", dirichlet_fraction=0.25),
    )
    for options in settings:
        words = {}
        results = {}
        for device in ("cpu", "cuda"):
            searcher = MCTS(game, simulations, device=device, **options)
            words[device] = np.arange(num_envs, dtype=np.uint64) * np.uint64(7919) + np.uint64(1)
            results[device] = searcher.search(states, seed=words[device])
        assert type(searcher).__name__ == "DeviceMCTS", type(searcher)
        for name in SEARCH_FIELDS:
            want, got = getattr(results["cpu"], name), getattr(results["cuda"], name)
            np.testing.assert_array_equal(want, got, err_msg=f"{game} search {options} {name}")
        np.testing.assert_array_equal(words["cpu"], words["cuda"], err_msg=f"{game} streams")
        assert results["cpu"].searched[:-1].all() and not results["cpu"].searched[-1]
    # Pickled, it searches again on the GPU (its trees made anew), to the same results.
    again = pickle.loads(pickle.dumps(searcher)).search(states, seed=3)
    np.testing.assert_array_equal(searcher.search(states, seed=3).policy, again.policy)
    gpu = vecenv.make(game, 1, seed=seed, device="cuda")
    assert type(MCTS(gpu, 2)).__name__ == "DeviceMCTS"
    try:
        MCTS(game, 2, device="cuda", evaluator=lambda obs, legal: None)
    except ValueError as exc:
        assert "evaluator" in str(exc)
    else:
        raise AssertionError("the GPU search took a Python evaluator")


def vector_env(game="CartPole-v1", num_envs=3, seed=2, steps=12):
    """Gymnasium's VectorEnv with ``device="cuda"``: CUDA arrays out, the CPU's values."""
    import gymnasium

    ids = f"vecenv/{game}"
    cpu = gymnasium.make_vec(ids, num_envs=num_envs, vectorization_mode="vector_entry_point")
    gpu = gymnasium.make_vec(
        ids, num_envs=num_envs, vectorization_mode="vector_entry_point", device="cuda"
    )
    obs_c, _ = cpu.reset(seed=seed)
    obs_g, _ = gpu.reset(seed=seed)
    exactly = _exact(cpu.unwrapped.engine)
    same(obs_c, obs_g, exactly, "vector reset")
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        actions = rng.integers(0, 2, size=num_envs)
        out_c = cpu.step(actions)
        out_g = gpu.step(cuda.to_device(actions))
        for a, b in zip(out_c[:4], out_g[:4], strict=True):
            assert hasattr(b, "copy_to_host")
            same(a, b, exactly, "vector step")


CHECKS = {
    "trajectories": trajectories,
    "bad_actions": bad_actions,
    "state_round_trip": state_round_trip,
}


def any_actions(game, num_envs=3, examples=40):
    """Hypothesis: actions of any dtype, shape and values, on the host or the device: the GPU
    engine refuses exactly what the CPU engine refuses (ValueError, no episode moving) and takes
    the rest as the CPU engine does."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    cpu = vecenv.make(game, num_envs, seed=1)
    gpu = vecenv.make(game, num_envs, seed=1, device="cuda")
    width = cpu.num_agents * int(np.prod(cpu.action.shape, dtype=np.int64))
    shapes = st.sampled_from(
        [(num_envs, cpu.num_agents) + cpu.action.shape, (num_envs, width), (num_envs,)]
        + [(num_envs + 1, width), (num_envs, width + 1)]
    )
    dtypes = st.sampled_from([np.int64, np.int32, np.uint8, np.uint64, np.float64, np.float32])
    arrays = st.tuples(dtypes, shapes).flatmap(
        lambda ds: hnp.arrays(ds[0], ds[1], elements=_elements(ds[0], cpu))
    )

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(actions=arrays, on_device=st.booleans())
    def check(actions, on_device):
        before = gpu.get_state()
        try:
            cpu.step(actions)
        except ValueError:
            refused = True
        else:
            refused = False
        try:
            gpu.step(cuda.to_device(actions) if on_device else actions)
        except ValueError:
            assert refused, f"{game}: the GPU refused actions the CPU took: {actions!r}"
            assert (gpu.get_state() == before).all()
            return
        assert not refused, f"{game}: the GPU took actions the CPU refused: {actions!r}"
        compare_outputs(cpu, gpu, _exact(cpu), f"{game} any actions")

    check()


def _elements(dtype, engine):
    from hypothesis import strategies as st

    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        bits = dtype.itemsize * 8
        finite = st.floats(-3, 3, width=bits)
        return st.one_of(finite, finite, finite, st.sampled_from([np.nan, np.inf, -np.inf]))
    info = np.iinfo(dtype)
    edge = st.sampled_from([info.min, info.max, 0, 1])
    low, high = int(np.min(engine.action.low)), int(np.max(engine.action.high))
    valid = st.integers(max(info.min, low), min(info.max, high))
    near = st.integers(max(info.min, low - 1), min(info.max, high + 1))
    return st.one_of(valid, valid, valid, valid, near, edge)  # mostly rows the engines take


class DLPackOnly:
    """An array seen only through DLPack (as a JAX array is): no ``__cuda_array_interface__``,
    no ``__array__``."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def _host_consumer():
    """Under the simulator the buffers live in host memory: numpy consumes their DLPack."""
    return np.from_dlpack, lambda x: x.ctypes.data, lambda a: a.array._ary.ctypes.data


def dlpack(game="cartpole", num_envs=3, seed=4, steps=4, consumer=None, wrap=DLPackOnly):
    """Outputs exported through DLPack: the consumer's array is the engine's buffer (same
    address, shape, dtype; it shows the next step's values) and outlives the engine; actions and
    masks given through DLPack only are taken as the CPU engine takes them, and refused as it
    refuses them."""
    import gc

    from vecenv.cuda import dlpack as dl

    consume, address_of, buffer_address = consumer or _host_consumer()
    cpu = vecenv.make(game, num_envs, seed=seed, autoreset="same_step")
    gpu = vecenv.make(game, num_envs, seed=seed, autoreset="same_step", device="cuda")
    outputs = {
        **{f"obs {k}": v for k, v in gpu.obs.items()},
        **{f"final {k}": v for k, v in gpu.final_obs.items()},
        "rewards": gpu.rewards,
        "terminated": gpu.terminated,
        "truncated": gpu.truncated,
    }
    seen = {}
    for name, out in outputs.items():
        assert isinstance(out, dl.DeviceArray), name
        x = consume(out)
        assert address_of(x) == buffer_address(out), f"{name}: a copy, not the buffer"
        assert tuple(x.shape) == out.shape, (name, x.shape, out.shape)
        seen[name] = x
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        actions = random_actions(cpu, rng)
        cpu.step(actions)
        gpu.step(wrap(actions))
        compare_outputs(cpu, gpu, _exact(cpu), f"{game} DLPack actions")
        for name, x in seen.items():  # the same memory: already the new values
            np.testing.assert_array_equal(host(x), host(outputs[name]), err_msg=name)
    mask = np.arange(num_envs) % 2 == 1
    cpu.reset(seed=seed + 1, mask=mask)
    gpu.reset(seed=seed + 1, mask=wrap(mask))
    compare_outputs(cpu, gpu, _exact(cpu), f"{game} DLPack mask")
    bad = random_actions(cpu, rng)
    if cpu.action.discrete:
        bad[1, ...] = np.max(cpu.action.high) + 1
    else:
        bad = bad.astype(np.float64)
        bad[1, ...] = np.nan
    before = gpu.get_state()
    try:
        gpu.step(wrap(bad))
    except ValueError as exc:
        assert "env 1" in str(exc), str(exc)
    else:
        raise AssertionError(f"{game}: a bad action given by DLPack was taken")
    try:
        gpu.step(wrap(bad[:-1]))
    except ValueError as exc:
        assert "shape" in str(exc), str(exc)
    else:
        raise AssertionError(f"{game}: actions of the wrong shape given by DLPack were taken")
    assert (gpu.get_state() == before).all()
    # Refused exports: a copy asked for, records (a structured dtype DLPack cannot describe).
    for array, kwargs in ((gpu.rewards, {"copy": True}), (dl.dlpack(gpu.states), {})):
        try:
            array.__dlpack__(**kwargs)
        except BufferError:
            pass
        else:
            raise AssertionError("an export DLPack cannot honour was made")
    # The consumer's arrays keep the buffers alive after the engine is gone.
    want = {name: host(out).copy() for name, out in outputs.items()}
    del cpu, gpu, outputs
    gc.collect()
    for name, x in seen.items():
        np.testing.assert_array_equal(host(x), want[name], err_msg=f"{name} after the engine")


def dlpack_layout():
    """The capsule's layout read back field by field (strided and 0-d views, every dtype kind),
    and its lifetime: the producer's entry lives until the consumer's deleter runs, or until an
    unconsumed capsule is dropped."""
    import gc

    from vecenv.cuda import dlpack as dl

    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    dev = cuda.to_device(base)
    for view, want in (
        (dev, base),
        (dev[:, 1:5:2], base[:, 1:5:2]),
        (dev[2], base[2]),
        (cuda.to_device(np.array([True, False, True])), np.array([True, False, True])),
        (cuda.to_device(np.float64(2.5).reshape(())), np.float64(2.5).reshape(())),
        (cuda.to_device(np.arange(5, dtype=np.uint16)), np.arange(5, dtype=np.uint16)),
    ):
        x = np.from_dlpack(dl.dlpack(view))
        assert x.dtype == want.dtype and x.shape == want.shape and x.strides == want.strides
        np.testing.assert_array_equal(x, want)
        capsule = dl.dlpack(view).__dlpack__()
        address, shape, strides, dtype, device, release = dl.describe(capsule)
        assert (shape, strides, dtype, device) == (want.shape, want.strides, want.dtype, (1, 0))
        assert address == x.ctypes.data
        release()
    del x
    gc.collect()
    live = len(dl._LIVE)
    x = np.from_dlpack(dl.dlpack(dev))
    capsule = dl.dlpack(dev).__dlpack__()
    assert len(dl._LIVE) == live + 2
    del capsule  # never consumed: dropping it deletes its tensor
    assert len(dl._LIVE) == live + 1
    del x  # numpy's array gone: it called the deleter
    gc.collect()
    assert len(dl._LIVE) == live
    # A CUDA DLPack tensor taken as actions is seen through the CUDA array interface, and its
    # producer's deleter runs when that view goes.
    view = dev[:, ::2]
    imported = dl._Imported(dl.dlpack(view).__dlpack__())
    assert imported.__cuda_array_interface__ == {
        "shape": (4, 3),
        "strides": (24, 8),
        "typestr": "<i4",
        "data": (view._ary.ctypes.data, False),
        "version": 3,
    }
    assert len(dl._LIVE) == live + 1
    del imported
    gc.collect()
    assert len(dl._LIVE) == live


def _continue_alike(engines, step, read, steps, what):
    for t in range(steps):
        outs = [step(e, t) for e in engines]
        first = read(engines[0], outs[0])
        for e, out in zip(engines[1:], outs[1:], strict=True):
            for name, value in read(e, out).items():
                np.testing.assert_array_equal(value, first[name], err_msg=f"{what} {name} {t}")


def pickling(game="cartpole", num_envs=3, seed=9, steps=5, autoreset="same_step"):
    """Pickled (pickle, cloudpickle) or deep-copied mid-episode, a GPU engine continues exactly
    as the original: the same outputs and records at every step."""
    import copy
    import pickle

    import cloudpickle

    gpu = vecenv.make(game, num_envs, seed=seed, autoreset=autoreset, device="cuda")
    rng = np.random.default_rng(seed)
    plays = [random_actions(gpu, rng) for _ in range(2 * steps)]
    for actions in plays[:steps]:
        gpu.step(actions)
    copies = [
        pickle.loads(pickle.dumps(gpu)),
        cloudpickle.loads(cloudpickle.dumps(gpu)),
        copy.deepcopy(gpu),
    ]
    assert all(type(c) is type(gpu) and c.num_envs == num_envs for c in copies)

    def read(e, _):
        out = {f"obs {k}": host(v) for k, v in e.obs.items()}
        if e.final_obs is not None:
            out.update((f"final {k}", host(v)) for k, v in e.final_obs.items())
        out.update(rewards=host(e.rewards), terminated=host(e.terminated))
        out.update(truncated=host(e.truncated), states=e.get_state())
        return out

    def step(e, t):
        if t == steps // 2:
            e.reset(seed=seed + 1, mask=np.arange(num_envs) % 2 == 0)
        return e.step(plays[steps + t])

    _continue_alike([gpu, *copies], step, read, steps, f"{game} pickled")

    # A pickle whose record was garbled is refused on load, naming the episode, as set_state would.
    state = gpu.__getstate__()
    state["arrays"]["_states"]["step"][num_envs - 1] = -1
    loaded = object.__new__(type(gpu))
    try:
        loaded.__setstate__(pickle.loads(pickle.dumps(state)))
    except ValueError as e:
        assert f"episode {num_envs - 1}" in str(e) and "'step' must be >= 0" in str(e), e
    else:
        raise AssertionError("a garbled GPU engine pickle loaded")


def pickling_seats(game="connectx", num_envs=4, seed=13, plies=2, calls=3, pair=(0, 0)):
    """``DeviceSeats`` pickled with its engine mid-game continues as the original."""
    import copy
    import pickle

    from vecenv.cuda.selfplay import DeviceSeats

    gpu = vecenv.make(game, num_envs, seed=seed, autoreset="disabled", device="cuda")
    seats = DeviceSeats(gpu)
    seat = np.arange(num_envs) % 2
    seats.assign(seats.names[pair[0]], seat)
    seats.assign(seats.names[pair[1]], 1 - seat)
    seats.step(plies)
    copies = [pickle.loads(pickle.dumps(seats)), copy.deepcopy(seats)]

    def read(s, _):
        out = {name: host(getattr(s, name)) for name in ("returns", "ends", "memory", "rngs")}
        return dict(out, states=s.engine.get_state())

    _continue_alike([seats, *copies], lambda s, t: s.step(plies), read, calls, f"{game} seats")


def pickling_vector_env(game="CartPole-v1", num_envs=3, seed=2, steps=4):
    """Gymnasium's VectorEnv on the GPU engine pickled mid-episode continues the same."""
    import pickle

    import gymnasium

    env = gymnasium.make_vec(
        f"vecenv/{game}", num_envs=num_envs, vectorization_mode="vector_entry_point",
        device="cuda",
    )  # fmt: skip
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    plays = [rng.integers(0, 2, size=num_envs) for _ in range(2 * steps)]
    for actions in plays[:steps]:
        env.step(actions)
    loaded = pickle.loads(pickle.dumps(env))

    def read(_, out):
        return {str(k): host(v) for k, v in enumerate(out[:4])}

    _continue_alike([env, loaded], lambda e, t: e.step(plays[steps + t]), read, steps, "vector")
