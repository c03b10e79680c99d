"""Saved networks read as data from anywhere: checked against bounds and against the weights they
carry before any network is built.

A checkpoint (``vecenv train ppo``'s policy, ``vecenv train alphazero``'s network) declares the
sizes of the network it holds (its hidden layers, its spaces) beside the weights. Building the
network from those sizes first and comparing the weights afterwards lets a file of a few KB ask
for a 30000 x 30000 layer (3.6 GB) before it is refused; here every size is checked against a
bound, the layer shapes they imply are compared with the weights' shapes, and only then is the
network made, so a crafted file is refused in milliseconds with its name. The bounds:

- a hidden layer has at most ``MAX_LAYER`` units and a network at most ``MAX_LAYERS`` of them
  (``PPOConfig`` and ``AlphaZeroConfig`` take the same);
- a network's parameters, with the gradients and Adam's two moments a trainer keeps beside them,
  fit in vecenv's memory budget (``VECENV_MEMORY_BUDGET``), and so does a checkpoint file.
"""

import contextlib
import math
import os

from . import memory
from .spec import is_integer

MAX_LAYER = 2**16
KEEP_CHECKPOINTS = 5  # a run's periodic checkpoints kept on disk (the latest); 0: every one
MAX_LAYERS = 64
# A trainer's bytes per float32 parameter: the weight, its gradient and Adam's two moments.
TRAINING_BYTES = 16
_MESSAGE = 200  # the most characters of a foreign error quoted in ours


def check_hidden(hidden, what="hidden"):
    """``hidden`` as a tuple of layer sizes, or ValueError naming ``what`` unless it is a list of
    at most ``MAX_LAYERS`` integers in [1, ``MAX_LAYER``] (empty: no hidden layer)."""
    ok = isinstance(hidden, (list, tuple)) and len(hidden) <= MAX_LAYERS
    ok = ok and all(is_integer(h) and 1 <= h <= MAX_LAYER for h in hidden)
    if not ok:
        shown = repr(hidden)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise ValueError(
            f"{what} must be a list of at most {MAX_LAYERS} layer sizes, each an integer in "
            f"[1, {MAX_LAYER}], got {shown}"
        )
    return tuple(int(h) for h in hidden)


def mlp_shapes(prefix, sizes, step=2):
    """The weight and bias shapes of an ``nn.Sequential`` of ``nn.Linear`` layers through
    ``sizes`` (inputs, hidden..., outputs), each followed by one activation (the Linear layers
    at indices 0, ``step``, 2 ``step``, ...)."""
    shapes = {}
    for i in range(len(sizes) - 1):
        shapes[f"{prefix}.{step * i}.weight"] = (sizes[i + 1], sizes[i])
        shapes[f"{prefix}.{step * i}.bias"] = (sizes[i + 1],)
    return shapes


def parameters(shapes):
    return sum(math.prod(shape) for shape in shapes.values())


def check_budget(shapes, what, factor=TRAINING_BYTES):
    """ValueError unless a network of these parameter ``shapes`` (``factor`` bytes a
    parameter) fits in the memory budget."""
    need = parameters(shapes) * factor
    limit = memory.budget()
    if need > limit:
        raise ValueError(
            f"{what}: a network of {parameters(shapes):,} parameters needs {memory.show(need)} "
            f"to train, over the memory budget of {memory.show(limit)}; use smaller hidden "
            f"layers, or raise the budget with {memory.ENV_VAR} (e.g. {memory.ENV_VAR}=16G)"
        )
    return need


def read(path, kind=None):
    """The plain data a checkpoint file holds (``torch.load(weights_only=True)``), or a
    ValueError naming ``path`` for a missing, oversized or unreadable file or one that is not a
    dict; ``kind`` says what it should be ("PPO", "AlphaZero"; None: either)."""
    import torch

    what = f"vecenv {kind} checkpoint" if kind else "vecenv checkpoint"
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a {what}: no such file ({_short(e)})") from None
    if not os.path.isfile(path):
        raise ValueError(f"{path}: not a file, so no {what}")
    if size > memory.budget():
        raise ValueError(
            f"{path}: {memory.show(size)}, over the memory budget of "
            f"{memory.show(memory.budget())} ({memory.ENV_VAR} raises it)"
        )
    try:
        data = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as e:  # a foreign file fails in many ways (IndexError, RecursionError, ...)
        raise ValueError(f"{path}: not a {what} ({_short(e)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a {what} (no dict of its fields)")
    return data


def check_weights(path, weights, expected):
    """ValueError naming ``path`` unless ``weights`` is a dict of exactly the tensors
    ``expected`` names (key -> shape), each a floating-point tensor of that shape."""
    import torch

    if not isinstance(weights, dict) or not all(isinstance(k, str) for k in weights):
        raise ValueError(f"{path}: its weights are not a dict of named tensors")
    missing = sorted(set(expected) - set(weights))
    extra = sorted(set(weights) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing[:4])}")
        if extra:
            parts.append(f"unexpected {', '.join(extra[:4])}")
        raise ValueError(
            f"{path}: its weights do not fit the network it declares ({'; '.join(parts)})"
        )
    for key, shape in expected.items():
        tensor = weights[key]
        if not isinstance(tensor, torch.Tensor) or not tensor.is_floating_point():
            raise ValueError(f"{path}: its weight {key} is not a floating-point tensor")
        if tuple(tensor.shape) != tuple(shape):
            raise ValueError(
                f"{path}: its weight {key} has shape {tuple(tensor.shape)}, but the network it "
                f"declares needs {tuple(shape)}"
            )


def check_format(path, data, expected, kind):
    """ValueError naming ``path`` unless ``data`` (``read``'s) says it is format ``expected``."""
    if data.get("format") != expected:
        raise ValueError(f"{path}: not a vecenv {kind} checkpoint (format {expected})")


def field(path, data, key, kind, types):
    """``data[key]``, or ValueError naming ``path`` unless it is there and of ``types``."""
    value = data.get(key)
    if not isinstance(value, types):
        raise ValueError(f"{path}: a damaged {kind} checkpoint (its {key!r} is missing)")
    return value


def _short(error):
    text = f"{type(error).__name__}: {error}".replace("\n", " ")
    return text if len(text) <= _MESSAGE else text[: _MESSAGE - 3] + "..."


class Rotation:
    """The periodic checkpoints of one run on disk: ``wrote(path)`` after each, and the oldest
    beyond the latest ``keep`` (0: none removed) are removed. Only files this run wrote are
    ever removed (``checkpoint_every 2`` once wrote 6,197 files in 6 minutes)."""

    def __init__(self, keep=KEEP_CHECKPOINTS):
        if not is_integer(keep) or keep < 0:
            raise ValueError(f"keep_checkpoints must be a non-negative integer, got {keep!r}")
        self.keep, self.paths = int(keep), []

    def wrote(self, path):
        if path in self.paths:
            self.paths.remove(path)
        self.paths.append(path)
        while self.keep and len(self.paths) > self.keep:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.paths.pop(0))
