"""AlphaZero's network and what it reads: the features of an observation, the game's board (its
shape and symmetries, from the game's ``board.py``), the MLP and the residual CNN, the evaluator.

``Features`` flattens the observation seen by the seat to move into one float32 row (see its
docstring). Where the game has a ``board.py`` (``FIELD``, ``shape(config)``, ``symmetries(config)``:
docs/own-game/protocol.md), the board's blocks of that row are also planes over its rows and
columns (``Features.planes``), which the residual network convolves, and each of the board's
symmetries is a permutation of the row's columns and of the actions (``Board.tables``), which
the replay buffer applies to the positions it samples (a mirrored connect four position is as
true as the one played).
"""

import functools

import numpy as np
import torch
from torch import nn

from vecenv import checkpoints, protocol, registry
from vecenv.spec import is_integer

ONE_HOT_LIMIT = 16  # integer fields with at most this many values are one-hot encoded
NETWORKS = ("mlp", "resnet")
MAX_BLOCKS = 64
MAX_SYMMETRIES = 64  # a square board has 7 besides the identity
VALUE_HIDDEN = 64  # the residual network's value head: a hidden layer of this many units


def flush_subnormals(tensors):
    """Set every subnormal value of ``tensors`` (floating point, changed in place) to zero.

    Weights that stop receiving gradients decay under weight decay through the subnormal range,
    and so do Adam's moments of them; x86 CPUs take a slow path for every arithmetic operation
    on a subnormal operand. A connect four residual network holding 718 subnormal weights of
    43,191 ran its forward pass in 23.9 ms instead of 5.2 ms (batch 128, one thread), and its
    self-play iterations from 7 s to 30 s. Zero is what they are worth; flushing them here rather
    than switching the CPU's flush-to-zero mode leaves the rest of the process's arithmetic (the
    engine's kernels, other threads) as it was."""
    with torch.no_grad():
        for tensor in tensors:
            if tensor.is_floating_point() and tensor.dim():
                tensor.masked_fill_(tensor.abs() < torch.finfo(tensor.dtype).tiny, 0.0)


def optimizer_tensors(optimizer):
    """The tensors an optimizer keeps for its parameters (Adam's moments)."""
    for state in optimizer.state.values():
        for value in state.values():
            if torch.is_tensor(value):
                yield value


class Features:
    """The network's input from a batch of observations seen by the seat to move: every field
    but ``legal`` flattened, an integer field of at most ``ONE_HOT_LIMIT`` values one-hot (a
    board's cells are categories, not magnitudes).

    With ``cross``, also every shared categorical field's one-hot crossed with each categorical
    scalar of the seat's own (a board's cells as seen by each ``mark``): "a stone of the seat to
    move" is then one input, not a product of two the network must learn to form, and the
    board reads the same for either seat.

    ``blocks`` says where each part lies in the row: (field name, first column, cells, columns
    per cell), the crossed blocks under their shared field's name."""

    def __init__(self, engine, cross=False):
        self.fields = []
        self.crosses = []  # (shared field index, own scalar field index)
        self.blocks = []
        size = 0
        shared, own = [], []
        for f in engine.observation:
            if f.name == "legal":
                continue
            cells = int(np.prod(f.shape, dtype=np.int64))
            low, high = np.min(f.low), np.max(f.high)
            categories = 0
            integer = np.issubdtype(f.dtype, np.integer) and np.isfinite([low, high]).all()
            if integer and 0 < high - low + 1 <= ONE_HOT_LIMIT:
                categories = int(high - low + 1)
            if categories and f.shared:
                shared.append(len(self.fields))
            elif categories and cells == 1:
                own.append(len(self.fields))
            self.fields.append((f.name, cells, int(low) if categories else 0, categories))
            self.blocks.append((f.name, size, cells, max(categories, 1)))
            size += cells * max(categories, 1)
        if cross:
            for s in shared:
                for o in own:
                    self.crosses.append((s, o))
                    name, cells, _, categories = self.fields[s]
                    width = categories * self.fields[o][3]
                    self.blocks.append((name, size, cells, width))
                    size += cells * width
        self.cross = bool(cross)
        self.size = size

    def __call__(self, obs):
        # Written into one array, block by block (``fields``' then ``crosses``'); a one-hot block
        # is rows of an identity matrix taken by index, and a crossed block, the product of two
        # one-hots, is the one-hot of the pair of indices.
        rows = np.asarray(obs[self.fields[0][0]]).reshape(-1, self.fields[0][1]).shape[0]
        out = np.empty((rows, self.size), dtype=np.float32)
        indices, col = {}, 0
        for k, (name, cells, low, categories) in enumerate(self.fields):
            x = np.asarray(obs[name]).reshape(rows, cells)
            if categories:
                index = np.clip(x.astype(np.int64) - low, 0, categories - 1)
                block = out[:, col : col + cells * categories].reshape(rows, cells, categories)
                np.take(_identity(categories), index, axis=0, out=block)
                indices[k] = index
                col += cells * categories
            else:
                out[:, col : col + cells] = np.nan_to_num(x.astype(np.float32))
                col += cells
        for s, o in self.crosses:
            _, cells, _, shared = self.fields[s]
            own = self.fields[o][3]
            pair = indices[s] * own + indices[o][:, :1]  # (T, cells): the (cell value, own) pair
            block = out[:, col : col + cells * shared * own].reshape(rows, cells, shared * own)
            np.take(_identity(shared * own), pair, axis=0, out=block)
            col += cells * shared * own
        return out

    def _board_blocks(self, field):
        return [(start, cells, width) for name, start, cells, width in self.blocks if name == field]

    def permutation(self, field, cells):
        """The columns of the row permuted as ``field``'s cells are by ``cells`` (the image's
        cell i is the original's ``cells[i]``): ``row[permutation]`` is the image's row."""
        index = np.arange(self.size)
        cells = np.asarray(cells, dtype=np.int64)
        for start, count, width in self._board_blocks(field):
            block = np.arange(start, start + count * width).reshape(count, width)
            index[start : start + count * width] = block[cells].ravel()
        return index

    def planes(self, field):
        """(planes, extras): the columns of ``field``'s blocks as (cells, channels) (the one-hot
        block's channels, then the crossed blocks'), and the columns of everything else."""
        blocks = self._board_blocks(field)
        if not blocks:
            raise ValueError(
                f"the observation has no categorical field {field!r} to make planes of"
            )
        columns = [np.arange(s, s + c * w).reshape(c, w) for s, c, w in blocks]
        planes = np.concatenate(columns, axis=1)
        extras = np.setdiff1d(np.arange(self.size), planes.ravel())
        return planes, extras


@functools.cache
def _identity(n):
    return np.eye(n, dtype=np.float32)


class Board:
    """The game's board as its ``board.py`` declares it for ``config`` (its resolved
        configuration): ``field`` (the observation field of the cells), ``shape`` (rows, columns)
        and ``symmetries`` (besides the identity, each ``(cells, actions)``: the image's cell i is
        the original's ``cells[i]``, its action j the original's action ``actions[j]``, actions
        counted from the game's lowest). ``Board.of(game, config, num_actions)`` reads and checks it
    (a ValueError naming what is wrong), None for a game without one."""

    def __init__(self, field, shape, symmetries):
        self.field, self.shape, self.symmetries = field, shape, symmetries

    @classmethod
    def of(cls, game, config, num_actions):
        module = registry.game_module(game, protocol.BOARD)
        if module is None:
            return None
        missing = [name for name in protocol.REQUIRED_BOARD if not hasattr(module, name)]
        if missing:
            raise ValueError(f"{game}'s board.py lacks {', '.join(missing)}")
        field = module.FIELD
        try:
            shape = tuple(int(n) for n in module.shape(config))
            declared = list(module.symmetries(config))
        except Exception as e:  # a game's own code, read as data
            raise ValueError(f"{game}'s board.py failed: {type(e).__name__}: {e}"[:300]) from None
        if len(shape) != 2 or min(shape) < 1:
            raise ValueError(f"{game}'s board.py: shape must be (rows, columns), got {shape}")
        cells = int(np.prod(shape))
        if len(declared) > MAX_SYMMETRIES:
            raise ValueError(
                f"{game}'s board.py: {len(declared)} symmetries, more than {MAX_SYMMETRIES}"
            )
        symmetries = []
        for k, pair in enumerate(declared):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"{game}'s board.py: symmetry {k} is not a (cells, actions) pair")
            try:
                cell_order, action_order = (np.asarray(p, dtype=np.int64) for p in pair)
            except (TypeError, ValueError, OverflowError):
                cell_order = action_order = np.zeros(0, dtype=np.int64)
            orders = (("cells", cell_order, cells), ("actions", action_order, num_actions))
            for what, order, n in orders:
                if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
                    raise ValueError(
                        f"{game}'s board.py: symmetry {k}'s {what} are not a permutation of "
                        f"{n} indices"
                    )
            symmetries.append((cell_order, action_order))
        return cls(field, shape, symmetries)

    def tables(self, features, num_actions):
        """(columns, actions): (S, features) and (S, actions) index tables, the identity first
        and then each symmetry, for ``Buffer.sample``."""
        columns = [np.arange(features.size)]
        actions = [np.arange(num_actions)]
        for cells, order in self.symmetries:
            columns.append(features.permutation(self.field, cells))
            actions.append(order)
        return np.stack(columns), np.stack(actions)


# -- the networks ----------------------------------------------------------------------------


def check_network(network, blocks, filters):
    if network not in NETWORKS:
        raise ValueError(f"network must be one of {NETWORKS}, got {network!r}")
    for name, value, high in (("blocks", blocks, MAX_BLOCKS), ("filters", filters, 1024)):
        if not is_integer(value) or not 1 <= value <= high:
            raise ValueError(f"{name} must be an integer in [1, {high}], got {value!r}")
    return network, int(blocks), int(filters)


def network_shapes(inputs, actions, hidden):
    """``Network``'s state dict shapes (key -> shape), without making it."""
    shapes = checkpoints.mlp_shapes("trunk", [inputs, *hidden])
    width = hidden[-1] if hidden else inputs
    shapes.update({"policy.weight": (actions, width), "policy.bias": (actions,)})
    shapes.update({"value.weight": (1, width), "value.bias": (1,)})
    return shapes


class Network(nn.Module):
    """An MLP trunk with a policy head (one logit per action) and a value head in [-1, 1]."""

    def __init__(self, inputs, actions, hidden):
        super().__init__()
        layers, width = [], inputs
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, actions)
        self.value = nn.Linear(width, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.policy(h), torch.tanh(self.value(h)).squeeze(-1)


def residual_shapes(channels, extras, cells, actions, blocks, filters):
    """``ResidualNetwork``'s state dict shapes (key -> shape), without making it."""
    shapes = {"input.weight": (filters, channels, 3, 3), "input.bias": (filters,)}
    if extras:
        shapes["extras.weight"] = (filters, extras)
    for k in range(blocks):
        for conv in ("first", "second"):
            shapes[f"blocks.{k}.{conv}.weight"] = (filters, filters, 3, 3)
            shapes[f"blocks.{k}.{conv}.bias"] = (filters,)
    shapes.update({"policy_conv.weight": (2, filters, 1, 1), "policy_conv.bias": (2,)})
    shapes.update({"policy.weight": (actions, 2 * cells), "policy.bias": (actions,)})
    shapes.update({"value_conv.weight": (1, filters, 1, 1), "value_conv.bias": (1,)})
    shapes.update(
        {"value_hidden.weight": (VALUE_HIDDEN, cells), "value_hidden.bias": (VALUE_HIDDEN,)}
    )
    shapes.update({"value.weight": (1, VALUE_HIDDEN), "value.bias": (1,)})
    return shapes


class Block(nn.Module):
    """Two 3x3 convolutions and the skip around them (no normalisation: the batches of the
    search's leaves and of the buffer's samples differ, and numpy plays the same network)."""

    def __init__(self, filters):
        super().__init__()
        self.first = nn.Conv2d(filters, filters, 3, padding=1)
        self.second = nn.Conv2d(filters, filters, 3, padding=1)

    def forward(self, h):
        return torch.relu(h + self.second(torch.relu(self.first(h))))


class ResidualNetwork(nn.Module):
    """AlphaZero's residual tower over the board's planes (``Features.planes``), smaller: a 3x3
    convolution of the planes (plus a linear map of the other features, added to each cell),
    ``blocks`` residual blocks of ``filters`` channels, a policy head (a 1x1 convolution to two
    planes, then a linear map to the logits) and a value head (a 1x1 convolution to one plane,
    a hidden layer of ``VALUE_HIDDEN``, tanh)."""

    def __init__(self, planes, extras, shape, actions, blocks, filters):
        super().__init__()
        self.shape = tuple(shape)
        cells, channels = planes.shape
        self.register_buffer("planes_index", torch.from_numpy(planes.ravel()), persistent=False)
        self.register_buffer("extras_index", torch.from_numpy(extras), persistent=False)
        self.input = nn.Conv2d(channels, filters, 3, padding=1)
        self.extras = nn.Linear(len(extras), filters, bias=False) if len(extras) else None
        self.blocks = nn.Sequential(*[Block(filters) for _ in range(blocks)])
        self.policy_conv = nn.Conv2d(filters, 2, 1)
        self.policy = nn.Linear(2 * cells, actions)
        self.value_conv = nn.Conv2d(filters, 1, 1)
        self.value_hidden = nn.Linear(cells, VALUE_HIDDEN)
        self.value = nn.Linear(VALUE_HIDDEN, 1)
        self.channels = channels

    def forward(self, x):
        n = x.shape[0]
        rows, columns = self.shape
        planes = x[:, self.planes_index].reshape(n, rows * columns, self.channels)
        planes = planes.transpose(1, 2).reshape(n, self.channels, rows, columns)
        h = self.input(planes)
        if self.extras is not None:
            h = h + self.extras(x[:, self.extras_index])[:, :, None, None]
        h = self.blocks(torch.relu(h))
        p = torch.relu(self.policy_conv(h)).flatten(1)
        v = torch.relu(self.value_conv(h)).flatten(1)
        v = torch.relu(self.value_hidden(v))
        return self.policy(p), torch.tanh(self.value(v)).squeeze(-1)


class Evaluator:
    """The network as the search's batched evaluator: ``(obs, legal) -> (logits, values)``."""

    def __init__(self, network, features):
        self.network, self.features = network, features
        self.__name__ = "alphazero"

    def __call__(self, obs, legal):
        with torch.no_grad():
            logits, values = self.network(torch.from_numpy(self.features(obs)))
        return logits.double().numpy(), values.double().numpy()

    def policy(self, obs, legal):
        """The network alone: the legal action of its largest logit (a Python policy)."""
        logits, _ = self(obs, legal)
        if legal is not None:
            logits = np.where(legal, logits, -np.inf)
        return np.argmax(logits, axis=1).astype(np.int64)
