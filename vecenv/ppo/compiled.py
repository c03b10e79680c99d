"""The actor-critic's rollout pass compiled: forward, sampling and values in one numba call.

A rollout asks the policy for one batch of actions per environment step. On batches of a few
hundred rows a PyTorch forward costs far more in dispatch than in arithmetic, so
``CompiledPolicy`` runs ``ActorCritic.sample``, ``best`` and ``value`` as one numba kernel over
the batch, writing into output buffers it owns.

Parameters are not copied: the policy holds numpy views of the network's weights, biases,
``log_std`` and the ``obs_norm`` statistics (``tensor.detach().numpy()`` shares storage), so the
optimizer's in-place steps and ``RunningNorm.update`` are seen by the next call. Replacing a
parameter object (rather than writing into it) is not seen: build a new ``CompiledPolicy`` then.
Only networks made of ``nn.Linear`` and ``nn.Tanh`` or ``nn.ReLU`` (one of them throughout, the last
layer a Linear) on the CPU in float32 are run; ``CompiledPolicy.supports(network)`` says whether one
is, so a caller can fall back to PyTorch.

Arithmetic. Observations are normalised as ``RunningNorm`` does (in float64, clipped, rounded to
float32); the layers run in float32 as ``nn.Linear``, ``nn.Tanh`` and ``nn.ReLU`` do
(``vecenv.ppo.dense``: each output its bias plus the products in input order, a float32 tanh within
3 ulp, ReLU exact); softmax, log-probabilities and the Gaussian run in float64 on the float32
outputs, and log-probabilities and values are returned as float32. They agree with
``ActorCritic.evaluate`` to float32 rounding (1e-6 relative is typical; PyTorch's own results move
as much between batch sizes). Every row goes through the same operations in the same order whatever
its place in the batch, so a row's results do not depend on the batch it came in. The kernel runs on
the calling thread.

Randomness is counter-based, so a row's draws depend only on ``(seed, counter, row)``: never on
the batch size, the other rows or the order of calls. With ``mix64`` splitmix64's finaliser and
``G`` its golden-ratio increment (``vecenv.kernels.rng``), row ``i`` of a call starts from

    word = mix64(mix64(mix64(seed ^ KEY) + counter * G) + i * G)

and its ``j``-th 64-bit draw is ``mix64(word + (j + 1) * G)`` (splitmix64's stream from
``word``), made a float64 uniform on [0, 1) from its top 53 bits. A Discrete row uses draw 0 by
inverse CDF: the float64 weights ``exp(logit - max)`` of the legal actions (masked actions get
weight exactly 0) are summed in order and the first action whose running sum exceeds
``u * total`` is drawn, so a masked action is never drawn. A Box row's dimensions ``2p`` and
``2p + 1`` take the Box-Muller pair of draws ``2p`` and ``2p + 1``: ``r = sqrt(-2 log(1 - u0))``,
``z = r cos(2 pi u1)`` and ``r sin(2 pi u1)``; the action is ``mean + exp(log_std) * z``
rounded to float32, and its log-probability is taken of that float32 action, as ``evaluate``
would take it. A rollout passes its seed and a counter that advances once per step.
"""

import itertools
import math
import operator

import numba as nb
import numpy as np
import torch
from torch import nn

from vecenv.kernels.rng import GOLDEN, mix64

from . import dense
from .network import RunningNorm

TILE = 4 * dense.LANES  # rows per pass through the layers: a tile's activations stay in cache

_KEY = np.uint64(0x8BB84B93962EACC9)  # keeps these streams apart from the episodes' streams
_INV53 = 1.0 / 9007199254740992.0  # 2**-53
_S11 = np.uint64(11)
_TWO_PI = 2.0 * math.pi
_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)

SAMPLE, BEST, VALUE = 0, 1, 2


@nb.njit(cache=True, inline="always", error_model="numpy")
def _uniform(word, j):
    """Row stream ``word``'s ``j``-th draw as a float64 uniform on [0, 1)."""
    return np.float64(mix64(word + np.uint64(j + 1) * GOLDEN) >> _S11) * _INV53


@nb.njit(cache=True, error_model="numpy")
def _features(x, r0, m, mean, var, clip, eps, has_norm, out):
    """Rows ``r0 .. r0+m`` of ``x`` as columns of ``out`` (one row per input), normalised as
    ``RunningNorm.forward`` normalises: float64 arithmetic, clipped, rounded to float32."""
    for k in range(x.shape[1]):
        dst = out[k]
        if has_norm:
            mu = mean[k]
            scale = 1.0 / math.sqrt(var[k] + eps)
            for r in range(m):
                v = (np.float64(x[r0 + r, k]) - mu) * scale
                v = min(max(v, -clip), clip)
                dst[r] = np.float32(v)
        else:
            for r in range(m):
                dst[r] = x[r0 + r, k]


@nb.njit(cache=True, error_model="numpy")
def _mlp(ws, bs, feat, ha, hb, m, activation):
    """The Linear/activation stack on ``feat``'s columns, alternating between ``ha`` and
    ``hb``; returns the buffer holding its output."""
    depth = len(ws)
    for i in range(depth):
        act = activation if i < depth - 1 else dense.NONE
        if i == 0:
            dense.layer(ws[i], bs[i], feat, ha, m, act)
        elif i % 2 == 1:
            dense.layer(ws[i], bs[i], ha, hb, m, act)
        else:
            dense.layer(ws[i], bs[i], hb, ha, m, act)
    return ha if depth % 2 == 1 else hb


@nb.njit(cache=True, error_model="numpy")
def _run(
    mode,
    x,
    mask,
    has_mask,
    mean,
    var,
    clip,
    eps,
    has_norm,
    aw,
    ab,
    cw,
    cb,
    log_std,
    discrete,
    activation,
    seed,
    counter,
    act_index,
    act_value,
    logp,
    values,
    feat,
    ha,
    hb,
    weights,
):
    """One pass over the batch ``x``: ``mode`` SAMPLE writes actions, log-probabilities and
    values; BEST the greedy actions; VALUE the values. Returns how many rows had no finite
    logits, means or standard deviations to act on (NaN parameters): their actions are
    meaningless."""
    n = x.shape[0]
    bad = 0
    n_act = weights.shape[0]
    call = mix64(mix64(seed ^ _KEY) + counter * GOLDEN)
    # The Gaussian's standard deviations, and the part of its log-density no draw changes.
    constant = 0.0
    spread = True  # every standard deviation finite and positive
    if not discrete:
        for d in range(n_act):
            weights[d] = math.exp(np.float64(log_std[d]))
            constant -= np.float64(log_std[d]) + _HALF_LOG_TWO_PI
            spread = spread and 0.0 < weights[d] < np.inf
    for r0 in range(0, n, TILE):
        m = min(TILE, n - r0)
        _features(x, r0, m, mean, var, clip, eps, has_norm, feat)
        if mode != BEST:
            out = _mlp(cw, cb, feat, ha, hb, m, activation)
            for r in range(m):
                values[r0 + r] = out[0, r]
        if mode == VALUE:
            continue
        out = _mlp(aw, ab, feat, ha, hb, m, activation)
        for r in range(m):
            row = r0 + r
            if discrete:
                top = -np.inf
                pick = -1
                finite = True
                for a in range(n_act):
                    if not has_mask or mask[row, a]:
                        v = np.float64(out[a, r])
                        if not math.isfinite(v):
                            finite = False
                        elif v > top:
                            top = v
                            pick = a
                if not finite or pick < 0:
                    bad += 1
                    pick = max(pick, 0)
                elif mode == SAMPLE:
                    total = 0.0
                    for a in range(n_act):
                        if not has_mask or mask[row, a]:
                            weights[a] = math.exp(np.float64(out[a, r]) - top)
                        else:
                            weights[a] = 0.0
                        total += weights[a]
                    target = _uniform(mix64(call + np.uint64(row) * GOLDEN), 0) * total
                    run = 0.0
                    for a in range(n_act):
                        if weights[a] > 0.0:
                            # Rounding can leave the last running sum at the target: the last
                            # legal action with weight is then the draw, never a masked one.
                            pick = a
                            run += weights[a]
                            if run > target:
                                break
                    logp[row] = np.float32(np.float64(out[pick, r]) - top - math.log(total))
                act_index[row] = pick
            else:
                finite = spread or mode == BEST
                for d in range(n_act):
                    finite = finite and math.isfinite(out[d, r])
                if not finite:
                    bad += 1
                if mode == BEST:
                    for d in range(n_act):
                        act_value[row, d] = out[d, r]
                    continue
                word = mix64(call + np.uint64(row) * GOLDEN)
                squares = 0.0
                radius = 0.0
                angle = 0.0
                for d in range(n_act):
                    if d % 2 == 0:
                        radius = math.sqrt(-2.0 * math.log(1.0 - _uniform(word, d)))
                        angle = _TWO_PI * _uniform(word, d + 1)
                        z = radius * math.cos(angle)
                    else:
                        z = radius * math.sin(angle)
                    mu = np.float64(out[d, r])
                    a32 = np.float32(mu + weights[d] * z)
                    act_value[row, d] = a32
                    # The density of the float32 action, as evaluate() will take it.
                    dev = (np.float64(a32) - mu) / weights[d]
                    squares += dev * dev
                logp[row] = np.float32(constant - 0.5 * squares)
    return bad


ACTIVATION_MODULES = {nn.Tanh: dense.TANH, nn.ReLU: dense.RELU}


def activation_code(network):
    """The ``dense`` code of the activation between ``network``'s layers (TANH where it has a
    single layer); ``_unsupported`` has checked that it is one kind throughout."""
    for stack in (network.actor, network.critic):
        for module in list(stack)[1::2]:
            return ACTIVATION_MODULES[type(module)]
    return dense.TANH


def _unsupported(network):
    """Why ``network`` cannot be compiled, or None where it can."""
    for name in ("actor", "critic", "discrete", "obs_norm"):
        if not hasattr(network, name):
            return f"it has no {name!r} (not an ActorCritic)"
    stacks = {"actor": network.actor, "critic": network.critic}
    width = None
    kinds = set()
    for name, stack in stacks.items():
        if type(stack) is not nn.Sequential or len(stack) == 0:
            return f"its {name} is not a non-empty nn.Sequential"
        for i, module in enumerate(stack):
            if i % 2 == 0 and type(module) is not nn.Linear:
                return f"its {name}[{i}] is {type(module).__name__}, not Linear"
            if i % 2 == 1:
                if type(module) not in ACTIVATION_MODULES:
                    return f"its {name}[{i}] is {type(module).__name__}, not Tanh or ReLU"
                kinds.add(type(module))
        if len(kinds) > 1:
            return "it mixes Tanh and ReLU activations"
        if type(stack[-1]) is not nn.Linear:
            return f"its {name} does not end in an nn.Linear"
        linears = list(stack)[::2]
        if width is None:
            width = linears[0].in_features
        if linears[0].in_features != width:
            return "its actor and critic take inputs of different widths"
        for a, b in itertools.pairwise(linears):
            if a.out_features != b.in_features:
                return f"its {name}'s layer widths do not chain"
        for layer in linears:
            for p in (layer.weight, layer.bias):
                if p is not None and not _plain(p, torch.float32):
                    return f"its {name}'s parameters are not contiguous float32 CPU tensors"
    if network.critic[-1].out_features != 1:
        return "its critic does not output one value"
    if not network.discrete:
        log_std = getattr(network, "log_std", None)
        if log_std is None or not _plain(log_std, torch.float32) or log_std.dim() != 1:
            return "it has no contiguous float32 CPU log_std vector"
        if log_std.numel() != network.actor[-1].out_features:
            return "its log_std and its actor's output differ in width"
    norm = network.obs_norm
    if norm is not None:
        if type(norm) is not RunningNorm:
            return f"its obs_norm is {type(norm).__name__}, not RunningNorm"
        for buf in (norm.mean, norm.var):
            if not _plain(buf, torch.float64) or buf.shape != (width,):
                return "its obs_norm statistics are not float64 CPU vectors of the input width"
    return None


def _plain(tensor, dtype):
    return (
        tensor.dtype == dtype
        and tensor.device.type == "cpu"
        and tensor.is_contiguous()
        and not tensor.is_conj()
        and not tensor.is_neg()
    )


def _view(tensor):
    """A numpy array sharing ``tensor``'s storage (no copy)."""
    return tensor.detach().numpy()


def _word(value, name):
    if type(value) is int and 0 <= value < 2**64:
        return np.uint64(value)
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {type(value).__name__}") from None
    if not 0 <= value < 2**64:
        raise ValueError(f"{name} must be in [0, 2**64), got {value}")
    return np.uint64(value)


class CompiledPolicy:
    """``ActorCritic.sample``/``best``/``value`` as numba kernels over numpy views of the
    network's parameters. Returned arrays are the policy's own buffers (views of the first ``n``
    rows): the next call overwrites them, so copy what must outlive it. For the same reason one
    policy serves one thread at a time."""

    @staticmethod
    def supports(network):
        """Whether ``network`` is one this class can run (else use PyTorch)."""
        return _unsupported(network) is None

    def __init__(self, network):
        reason = _unsupported(network)
        if reason is not None:
            raise ValueError(f"CompiledPolicy cannot run this network: {reason}")
        self.network = network
        self.discrete = bool(network.discrete)
        self.activation = activation_code(network)
        actor, critic = list(network.actor)[::2], list(network.critic)[::2]
        self.obs_size = actor[0].in_features
        self.action_size = actor[-1].out_features
        self._aw = tuple(_view(layer.weight) for layer in actor)
        self._ab = tuple(_bias(layer) for layer in actor)
        self._cw = tuple(_view(layer.weight) for layer in critic)
        self._cb = tuple(_bias(layer) for layer in critic)
        self._norm = network.obs_norm
        if self._norm is None:
            self._mean = self._var = np.zeros(0)
        else:
            self._mean, self._var = _view(self._norm.mean), _view(self._norm.var)
        if self.discrete:
            self._log_std = np.zeros(0, dtype=np.float32)
        else:
            self._log_std = _view(network.log_std)
        widest = max(layer.out_features for layer in actor + critic)
        # Zeros, so that the columns a short last tile computes past its rows stay finite.
        self._feat = np.zeros((self.obs_size, TILE), dtype=np.float32)
        self._ha = np.zeros((widest, TILE), dtype=np.float32)
        self._hb = np.zeros((widest, TILE), dtype=np.float32)
        self._weights = np.zeros(self.action_size)
        self._no_mask = np.zeros((0, self.action_size), dtype=np.bool_)
        self._capacity = -1
        self._reserve(0)

    def _reserve(self, n):
        """Output buffers of at least ``n`` rows (grown by doubling, so rarely)."""
        if n <= self._capacity:
            return
        size = max(n, 2 * self._capacity, 64)
        width = 0 if self.discrete else self.action_size
        self._act_index = np.zeros(size if self.discrete else 0, dtype=np.int64)
        self._act_value = np.zeros((size if width else 0, width), dtype=np.float32)
        self._logp = np.zeros(size, dtype=np.float32)
        self._values = np.zeros(size, dtype=np.float32)
        self._capacity = size

    def sample(self, x, mask=None, *, seed, counter):
        """Sampled actions (int64 indices, or raw float32 Gaussian draws of shape (n, width)),
        their float32 log-probabilities and float32 values, for the (n, obs_size) float32
        observations ``x`` (already flattened) and an optional (n, actions) bool legal mask.
        Row ``i``'s draw depends only on ``(seed, counter, i)``."""
        n = self._call(SAMPLE, x, mask, seed, counter)
        return self._actions(n), self._logp[:n], self._values[:n]

    def best(self, x, mask=None):
        """The most likely actions: the first legal argmax of the logits, or the mean."""
        n = self._call(BEST, x, mask, 0, 0)
        return self._actions(n)

    def value(self, x):
        """The critic's float32 values."""
        n = self._call(VALUE, x, None, 0, 0)
        return self._values[:n]

    def _actions(self, n):
        return self._act_index[:n] if self.discrete else self._act_value[:n]

    def _call(self, mode, x, mask, seed, counter):
        x = self._checked_obs(x)
        n = x.shape[0]
        has_mask = mask is not None
        mask = self._checked_mask(mask, n) if has_mask else self._no_mask
        seed, counter = _word(seed, "seed"), _word(counter, "counter")
        self._reserve(n)
        norm = self._norm
        has_norm = norm is not None
        bad = _run(
            mode,
            x,
            mask,
            has_mask,
            self._mean,
            self._var,
            float(norm.clip) if has_norm else 0.0,
            float(norm.eps) if has_norm else 0.0,
            has_norm,
            self._aw,
            self._ab,
            self._cw,
            self._cb,
            self._log_std,
            self.discrete,
            self.activation,
            seed,
            counter,
            self._act_index,
            self._act_value,
            self._logp,
            self._values,
            self._feat,
            self._ha,
            self._hb,
            self._weights,
        )
        if bad:
            raise ValueError(
                f"the policy's outputs are not finite on {bad} of {n} rows (NaN parameters?)"
            )
        return n

    def _checked_obs(self, x):
        if not isinstance(x, np.ndarray):
            raise ValueError(f"x must be a numpy array, got {type(x).__name__}")
        if x.dtype != np.float32:
            raise ValueError(f"x must be float32 (flattened observations), got {x.dtype}")
        if x.ndim != 2 or x.shape[1] != self.obs_size:
            raise ValueError(f"x must have shape (n, {self.obs_size}), got {x.shape}")
        x = np.ascontiguousarray(x)
        # A float64 sum is finite exactly when every float32 entry is: one pass, no temporary.
        if not math.isfinite(np.add.reduce(x, axis=None, dtype=np.float64)):
            raise ValueError("x holds NaN or infinite values")
        return x

    def _checked_mask(self, mask, n):
        if not self.discrete:
            raise ValueError("a legal-action mask applies to Discrete actions only")
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise ValueError("mask must be a numpy bool array")
        if mask.shape != (n, self.action_size):
            raise ValueError(f"mask must have shape ({n}, {self.action_size}), got {mask.shape}")
        mask = np.ascontiguousarray(mask)
        if n and not mask.any(axis=1).all():
            raise ValueError("every row of mask needs at least one legal action")
        return mask


def _bias(layer):
    if layer.bias is None:
        return np.zeros(layer.out_features, dtype=np.float32)
    return _view(layer.bias)
