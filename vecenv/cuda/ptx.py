"""A game's GPU kernels compiled to PTX, on any machine (no GPU or driver needed).

``ptx(game, cc)`` compiles every kernel ``CudaEngine`` launches for ``game`` (the step with and
without the built-in agents, reset, observe, the restore of a refused step, the agents' moves,
the rollout with the random policy for one-agent games) for compute
capability ``cc``, with the argument types the engine gives them; ``search_ptx(game, cc)`` the
GPU search's kernel (``vecenv.cuda.search``). It is how a game is checked for CUDA without a GPU:
a construct CUDA cannot compile raises ``UnsupportedConstruct`` naming the game, the rules'
function and the construct.
"""

import numba
import numpy as np
from numba import types

from vecenv.engine import Engine
from vecenv.kernels.agents import AGENT_RNG
from vecenv.kernels.build import _agents_module

from . import policies
from .compile import describe_error, kernels, rollout_kernel, search_kernel, target_capability
from .tables import global_tables


def signatures(engine):
    """{label: (kernel name, argument types)} of the launches of a ``CudaEngine`` made like the
    CPU ``engine`` (its dtypes and configuration); ``rollout`` with the random policy, for
    one-agent games."""
    states = numba.typeof(engine._states)
    cfgs = numba.typeof(engine._cfg)
    obs = numba.typeof(engine._obs)
    flat = types.Array(numba.from_dtype(engine._act_dtype), 2, "C")
    bounds = numba.typeof(engine._act_low)
    rewards = types.float64[:, ::1]
    flags = types.boolean[::1]
    bad = types.int64[::1]
    flag = types.int32[::1]
    undo = types.Tuple((states, rewards, types.boolean[:, ::1]))
    kinds = types.int64[:, ::1]
    memory = types.int64[:, :, ::1]
    rngs = types.Array(numba.from_dtype(AGENT_RNG), 2, "C")
    agents = types.Tuple((kinds, memory, rngs, rewards, types.int64[::1]))
    step = (states, cfgs, flat, bounds, bounds, rewards, flags, flags, obs, obs, types.int64,
            types.int64, undo, bad, flag, types.int64, agents)  # fmt: skip
    found = {
        "reset": ("reset", (states, cfgs, obs, flags, types.uint64[::1], types.boolean)
                  + (rewards, flags, flags)),
        "observe": ("observe", (states, cfgs, obs, flags)),
        "restore": ("restore", (states, cfgs, obs, rewards, flags, flags, undo)),
        "step": ("step", step),
    }  # fmt: skip
    if _agents_module(engine.rules) is not None:
        found["step_agents"] = ("step_agents", step)
        found["act_agents"] = ("act_agents", (states, cfgs, obs, kinds, memory, rngs, flat))
    if engine.num_agents == 1:
        out = types.Tuple((obs, flat, rewards, flags, flags, obs))  # rows of the same types
        found["rollout"] = ("rollout", (
            states, cfgs, bounds, bounds, types.int64, types.int64,
            types.Array(numba.from_dtype(AGENT_RNG), 1, "C"), types.float32[::1], types.int64,
            obs, rewards, flags, flags, obs, out, undo, bad, flag,
        ))  # fmt: skip
    return found


def _engine_kernels(game, configuration):
    """A CPU engine of ``game`` (its types are the launches' types) and its GPU kernels, the
    rollout with the random policy included for one-agent games."""
    engine = Engine(game, 1, seed=0, **configuration)
    discrete = engine.action.discrete
    compiled = kernels(engine.rules, _agents_module(engine.rules), discrete)
    if engine.num_agents == 1:
        policy = policies.random_discrete if discrete else policies.random_continuous
        compiled.rollout = rollout_kernel(engine.rules, discrete, policy, compiled.shared)
    return engine, compiled


def ptx(game, ccs=((9, 0),), only=None, **configuration):
    """{(label, cc): PTX text} of ``game``'s kernels (those labelled in ``only``, else all) for
    each compute capability of ``ccs``. The device functions compile once, for the first
    capability (see ``target_capability``); NVVM compiles each kernel for each."""
    from numba import cuda

    engine, compiled = _engine_kernels(game, configuration)
    out = {}
    for cc in ccs:
        for label, (name, argtypes) in signatures(engine).items():
            if only is not None and label not in only:
                continue
            try:
                with target_capability(ccs[0]), global_tables():
                    kernel = getattr(compiled, name).py_func
                    out[label, tuple(cc)], _ = cuda.compile_ptx(kernel, argtypes, cc=tuple(cc))
            except numba.core.errors.NumbaError as exc:
                raise describe_error(engine.name, exc) from None
    return out


def search_signature(mcts):
    """The argument types of the GPU search's kernel for the searches of ``mcts`` (an ``MCTS``:
    its game, configuration and settings), as ``DeviceMCTS`` launches it."""
    tree, game, obs = mcts._layout(1)
    game = mcts._with_legal_view(game, obs)
    e = mcts.engine
    index = np.zeros(1, dtype=np.int64)
    states, words = np.zeros(1, dtype=e.state_dtype), np.zeros(1, dtype=AGENT_RNG)
    out = mcts._results(1)
    args = (states, index, index, e._cfg, tree, game, obs, words, mcts._params, out)
    return tuple(numba.typeof(arg) for arg in args)


def search_ptx(game, cc=(9, 0), **configuration):
    """The PTX text of ``game``'s GPU search kernel for compute capability ``cc``."""
    from numba import cuda

    from vecenv.search import MCTS

    mcts = MCTS(game, 2, **configuration)
    kernel = search_kernel(mcts.engine.rules, True).py_func
    try:
        with target_capability(cc), global_tables():
            return cuda.compile_ptx(kernel, search_signature(mcts), cc=tuple(cc))[0]
    except numba.core.errors.NumbaError as exc:
        raise describe_error(mcts.name, exc) from None


def link(game, **configuration):
    """Compile, link and load every kernel of ``game`` on this machine's GPU (as ``ptx`` lists
    them); returns {label: the constant memory the loaded kernel uses, in bytes}. A kernel that
    does not fit the device raises here, as it would at its first launch."""
    engine, compiled = _engine_kernels(game, configuration)
    out = {}
    for label, (name, argtypes) in signatures(engine).items():
        try:
            with global_tables():
                kernel = getattr(compiled, name).compile(argtypes)
        except numba.core.errors.NumbaError as exc:
            raise describe_error(engine.name, exc) from None
        out[label] = int(kernel._codelibrary.get_cufunc().attrs.const)
    return out


def mlp_ptx(game, cc=(9, 0), hidden=(8, 8), norm=True, **configuration):
    """The PTX text of ``game``'s rollout kernel with an MLP actor as its policy
    (``policies.mlp_policy``, as the GPU trainer compiles it: every observation field a feature,
    a ``legal`` field masking the actions), for compute capability ``cc``."""
    from numba import cuda

    engine = Engine(game, 1, seed=0, **configuration)
    if engine.num_agents != 1 or not engine.action.discrete:
        raise ValueError(f"{game}: the MLP policy plays one-agent games of discrete actions")
    fields = tuple((k, tuple(f.shape), f.shared) for k, f in enumerate(engine.observation))
    legal = next(
        ((k, f.shared) for k, f in enumerate(engine.observation) if f.name == "legal"), None
    )
    features = sum(int(np.prod(shape, dtype=np.int64)) for _, shape, _ in fields)
    actions = int(engine.action.high[0] - engine.action.low[0] + 1)
    act = policies.mlp_policy(fields, (features, *hidden, actions), norm, legal)
    compiled = kernels(engine.rules, _agents_module(engine.rules), True)
    kernel = rollout_kernel(engine.rules, True, act, compiled.shared).py_func
    _, argtypes = signatures(engine)["rollout"]
    try:
        with target_capability(cc), global_tables():
            return cuda.compile_ptx(kernel, argtypes, cc=tuple(cc))[0]
    except numba.core.errors.NumbaError as exc:
        raise describe_error(engine.name, exc) from None
