"""Policies a rollout runs inside its kernel (``CudaEngine.rollout(T, policy)``).

A policy is a function ``policy(obs, row, low, high, params, r, action)`` compiled into the
rollout's kernel as the rules are (an njit function, or a plain Python function written for the
GPU): it reads row ``row`` of the observation arrays ``obs`` (a tuple, one array a field, as the
rules' ``observe`` writes them), the action bounds ``low``/``high`` (one entry per action
component), its parameters ``params`` (an array the caller hands to ``rollout``) and draws from
its episode's stream ``r`` (a record with a ``rng`` word: ``vecenv.kernels.rng``'s functions,
imported by name, as the rules import them: a module's attributes are not retargeted),
and writes one action row into ``action``. The kernel checks the row as it checks a caller's.
"""

import functools
import math

import numba as nb
import numpy as np
from numba import cuda

from vecenv.kernels.rng import integer, uniform, uniform_range


@nb.njit
def random_discrete(obs, row, low, high, params, r, action):
    """Each component uniform over its range: the built-in ``"random"`` of discrete games."""
    for j in range(action.shape[0]):
        action[j] = low[j] + integer(r, high[j] - low[j] + 1)


@nb.njit
def random_continuous(obs, row, low, high, params, r, action):
    """Each component uniform on [low, high): the built-in ``"random"`` of continuous games."""
    for j in range(action.shape[0]):
        action[j] = uniform_range(r, low[j], high[j])


# -- a network's actor as a policy ----------------------------------------------------------------

MASKED_LOGIT = -1e9  # as ``vecenv.ppo.network``: a masked move's logit
NORM_CLIP = 10.0  # as ``vecenv.ppo.network.RunningNorm``


def mlp_layout(fields, sizes, norm):
    """Where each part of an MLP policy's parameters lies in its flat float32 vector: for the
    input features (``fields``: (obs index, shape, shared) in the order the network reads them)
    the running mean and inverse scale where ``norm``, then each layer's weights (out x in, row
    major, as ``torch.nn.Linear`` keeps them) and biases. ``sizes``: features, hidden..., actions.
    Returns ({name: offset}, total)."""
    features = sum(int(np.prod(shape, dtype=np.int64)) for _, shape, _ in fields)
    if features != sizes[0]:
        raise ValueError(f"the fields hold {features} features, the network takes {sizes[0]}")
    offsets, at = {}, 0
    if norm:
        offsets["mean"], offsets["scale"] = at, at + features
        at += 2 * features
    for k in range(len(sizes) - 1):
        offsets[f"w{k}"] = at
        at += sizes[k] * sizes[k + 1]
        offsets[f"b{k}"] = at
        at += sizes[k + 1]
    return offsets, at


@functools.cache  # one function per shape: its kernel compiles once per process
def mlp_policy(fields, sizes, norm=False, legal=None, activation="tanh"):
    """A device policy playing an MLP actor (hidden layers of ``activation``, "tanh" or "relu"; a
    categorical head over ``sizes[-1]`` actions, masked by the bool field ``legal`` = (obs
    index, shared) where given), its weights read from ``params`` (``mlp_layout``'s vector): the
    action is ``low[0]`` plus a draw from the softmax of the logits, by the episode's stream.
    Written as source for its shapes (CUDA's local arrays need constant sizes) and compiled into
    the rollout's kernel like any policy; ``act.source`` is that source. ``fields`` and
    ``sizes`` are tuples (the result is kept for each shape)."""
    if activation not in ("tanh", "relu"):
        raise ValueError(f"activation must be 'tanh' or 'relu', got {activation!r}")
    offsets, _ = mlp_layout(fields, sizes, norm)
    layers = len(sizes) - 1
    # h0 .. h{layers - 1}: each layer's outputs (the last one the logits), biases first.
    lines = ["def act(obs, row, low, high, params, r, action):"]
    for k in range(layers):
        lines += [
            f"    h{k} = cuda.local.array({sizes[k + 1]}, np.float32)",
            f"    for o in range({sizes[k + 1]}):",
            f"        h{k}[o] = params[{offsets[f'b{k}']} + o]",
        ]
    # The first layer reads the features one by one from the observation's fields.
    w0, inputs, feature = offsets["w0"], sizes[0], 0
    for index, shape, shared in fields:
        indent, names = "    ", []
        for d, extent in enumerate(shape):
            lines.append(f"{indent}for j{d} in range({extent}):")
            names.append(f"j{d}")
            indent += "    "
        strides = [int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape))]
        flat = "".join(f" + j{d} * {stride}" for d, stride in enumerate(strides))
        where = ", ".join(["row" if shared else "row, 0", *names])
        lines += [f"{indent}k = {feature}{flat}", f"{indent}x = np.float32(obs[{index}][{where}])"]
        if norm:
            mean, scale = offsets["mean"], offsets["scale"]
            lines += [
                f"{indent}x = (x - params[{mean} + k]) * params[{scale} + k]",
                f"{indent}x = min(max(x, np.float32({-NORM_CLIP})), np.float32({NORM_CLIP}))",
            ]
        lines += [
            f"{indent}for o in range({sizes[1]}):",
            f"{indent}    h0[o] += params[{w0} + o * {inputs} + k] * x",
        ]
        feature += int(np.prod(shape, dtype=np.int64))
    for k in range(1, layers):
        width, weights = sizes[k], offsets[f"w{k}"]
        h = f"h{k - 1}[i]"
        squash = f"math.tanh({h})" if activation == "tanh" else f"max({h}, np.float32(0.0))"
        lines += [
            f"    for i in range({width}):",
            f"        h{k - 1}[i] = {squash}",
            f"    for o in range({sizes[k + 1]}):",
            f"        acc = h{k}[o]",
            f"        for i in range({width}):",
            f"            acc += params[{weights} + o * {width} + i] * h{k - 1}[i]",
            f"        h{k}[o] = acc",
        ]
    n, z = sizes[-1], f"h{layers - 1}"
    if legal is not None:
        index, shared = legal
        head = "row" if shared else "row, 0"
        lines += [
            f"    for o in range({n}):",
            f"        if not obs[{index}][{head}, o]:",
            f"            {z}[o] = np.float32({MASKED_LOGIT})",
        ]
    lines += [
        f"    top = {z}[0]",
        f"    for o in range(1, {n}):",
        f"        top = max(top, {z}[o])",
        "    total = 0.0",
        f"    for o in range({n}):",
        f"        total += math.exp({z}[o] - top)",
        "    u = uniform(r) * total",
        f"    choice = {n - 1}",
        "    seen = 0.0",
        f"    for o in range({n}):",
        f"        seen += math.exp({z}[o] - top)",
        "        if u < seen:",
        "            choice = o",
        "            break",
        "    action[0] = low[0] + choice",
    ]
    namespace = {"cuda": cuda, "np": np, "math": math, "uniform": uniform}
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<vecenv mlp policy {list(sizes)}>", "exec"), namespace)  # noqa: S102
    act = namespace["act"]
    act.source = source
    return act
