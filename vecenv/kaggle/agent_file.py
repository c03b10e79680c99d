"""A trained vecenv network as a Kaggle agent: one self-contained file, numpy and the standard
library alone.

This module is the source of the ``submission.py`` that ``vecenv export kaggle`` writes
(``vecenv.kaggle.submission``): the block between the ``data`` markers is replaced by the
network's weights and layout, and the rest is copied as it is. kaggle-environments runs the file's
last function, ``agent(observation, configuration)``.

- The network's input is built from Kaggle's observation exactly as vecenv builds it
  (``vecenv.alphazero.Features`` for an AlphaZero network, the PPO policy's flattening of its
  observation space for a PPO policy), and its forward pass is numpy's in float32.
- The game's rules (connectx, tictactoe) are written here: the legal moves, a move's result.
- An AlphaZero network searches ``SIMULATIONS`` simulations a move with vecenv's search as its
  checkpoint plays by default: Gumbel MuZero's root selection with its noise off, sequential
  halving over at most 16 actions, the completed-Q interior selection (mctx's, as
  ``vecenv.kernels.search`` computes it, step for step); with ``SIMULATIONS = 0`` it plays the
  legal action of its largest logit. A PPO policy plays its greedy legal action.
- The move is always legal: an observation the network was not trained for (another board
  size) is answered by a rules-only move (a win, else a block, else the most central column or
  cell).
"""

import base64
import math
import zlib

import numpy as np

# >>> data
GAME = "connectx"
KIND = "alphazero"
CONFIGURATION = {"rows": 6, "columns": 7, "inarow": 4}
LAYOUT = {}
SHAPES = []
SIMULATIONS = 0
WEIGHTS = ""
# <<< data

MAX_CONSIDERED = 16  # Gumbel MuZero's max_num_considered_actions (vecenv's and mctx's default)
VALUE_SCALE = 0.1
MAXVISIT_INIT = 50.0
EPSILON = 1e-8
TINY = np.finfo(np.float64).tiny
LOW_LOGIT = -1e9
MASKED_LOGIT = -1e9  # the PPO policy's logit of an illegal move
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

_cache = {}


# -- the rules ----------------------------------------------------------------------------------


def _field(o, key, default=None):
    """A field of Kaggle's observation or configuration (a Struct, a dict or an object)."""
    if isinstance(o, dict):
        return o.get(key, default)
    return getattr(o, key, default)


def _shape(configuration):
    """(rows, columns, inarow) of the game played (tictactoe: 3, 3, 3)."""
    if GAME == "tictactoe":
        return 3, 3, 3
    rows = int(_field(configuration, "rows", CONFIGURATION.get("rows", 6)))
    columns = int(_field(configuration, "columns", CONFIGURATION.get("columns", 7)))
    inarow = int(_field(configuration, "inarow", CONFIGURATION.get("inarow", 4)))
    return rows, columns, inarow


def legal_moves(board, shape):
    """The legal actions of ``board`` (a list of cells, row-major, top row first)."""
    rows, columns, _ = shape
    if GAME == "tictactoe":
        return [c for c in range(9) if board[c] == 0]
    return [c for c in range(columns) if board[c] == 0]


def _wins(board, shape, cell, mark):
    """Whether ``mark`` at ``cell`` completes a line."""
    rows, columns, inarow = shape
    if GAME == "tictactoe":
        return any(cell in line and all(board[k] == mark for k in line) for line in LINES)
    row, column = divmod(cell, columns)
    for dr, dc in ((1, 0), (0, 1), (1, 1), (1, -1)):
        count = 1
        for sign in (1, -1):
            r, c = row + sign * dr, column + sign * dc
            while 0 <= r < rows and 0 <= c < columns and board[r * columns + c] == mark:
                count += 1
                r, c = r + sign * dr, c + sign * dc
        if count >= inarow:
            return True
    return False


def play(board, shape, action, mark):
    """``board`` after ``mark`` plays the legal ``action``: (new board, the mover's reward,
    whether the game is over)."""
    rows, columns, _ = shape
    board = list(board)
    if GAME == "tictactoe":
        cell = action
    else:
        cell = max(r * columns + action for r in range(rows) if board[r * columns + action] == 0)
    board[cell] = mark
    if _wins(board, shape, cell, mark):
        return board, 1.0, True
    return board, 0.0, all(v != 0 for v in board)


def rules_move(board, shape, mark):
    """A move from the rules alone: a win, else a block of the other's win, else the most
    central legal action."""
    moves = legal_moves(board, shape)
    for who in (mark, 3 - mark):
        for a in moves:
            if play(board, shape, a, who)[1] > 0:
                return a
    rows, columns, _ = shape
    if GAME == "tictactoe":
        return min(moves, key=lambda c: (abs(c // 3 - 1) + abs(c % 3 - 1), c))
    return min(moves, key=lambda c: (abs(2 * c - (columns - 1)), c))


# -- the network --------------------------------------------------------------------------------


def _weights():
    """{name: float32 array} of the network, decoded once."""
    if "weights" not in _cache:
        raw = zlib.decompress(base64.b64decode(WEIGHTS))
        arrays, start = {}, 0
        for name, shape, dtype in SHAPES:
            size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            array = np.frombuffer(raw[start : start + size], dtype=dtype).reshape(shape)
            arrays[name] = array.astype(array.dtype.newbyteorder("="))
            start += size
        _cache["weights"] = arrays
    return _cache["weights"]


def _one_hot(index, categories):
    out = np.zeros((index.size, categories), dtype=np.float32)
    out[np.arange(index.size), index] = 1.0
    return out.reshape(-1)


def features(observation):
    """The network's input (float32) from an observation {field: value} of the seat to move."""
    if KIND == "alphazero":  # vecenv.alphazero.Features
        parts, indices = [], {}
        for k, (name, cells, low, categories) in enumerate(LAYOUT["fields"]):
            x = np.asarray(observation[name]).reshape(cells)
            if categories:
                index = np.clip(x.astype(np.int64) - low, 0, categories - 1)
                parts.append(_one_hot(index, categories))
                indices[k] = index
            else:
                parts.append(np.nan_to_num(x.astype(np.float32)))
        for s, o in LAYOUT["crosses"]:
            shared, own = LAYOUT["fields"][s][3], LAYOUT["fields"][o][3]
            parts.append(_one_hot(indices[s] * own + indices[o][:1], shared * own))
        return np.concatenate(parts).astype(np.float32)
    parts = [_flatten(space, observation[name]) for name, space in LAYOUT["fields"]]
    return np.concatenate(parts).astype(np.float32)


def _flatten(space, value):
    """A PPO policy's flattening of one field (vecenv.ppo.network.flatten)."""
    x = np.asarray(value)
    if space["kind"] == "box":
        return x.astype(np.float32).reshape(-1)
    if space["kind"] == "discrete":
        return _one_hot(x.reshape(1).astype(np.int64) - space["start"], space["n"])
    nvec = np.asarray(space["nvec"], dtype=np.int64)
    index = x.reshape(-1).astype(np.int64) - np.asarray(space["start"], dtype=np.int64)
    out = np.zeros(int(nvec.sum()), dtype=np.float32)
    offsets = np.concatenate(([0], np.cumsum(nvec)[:-1]))
    out[index + offsets] = 1.0
    return out


def _dense(x, w, b):
    return (x @ w.T + b).astype(np.float32)


def _conv(x, w, b):
    """Planes ``x`` (C, H, W) convolved by ``w`` (F, C, k, k) plus ``b``, zero-padded to keep H x W
    (torch's ``Conv2d`` with ``padding=k // 2``)."""
    k = w.shape[2]
    rows, columns = x.shape[1:]
    padded = np.pad(x, ((0, 0), (k // 2, k // 2), (k // 2, k // 2)))
    out = np.zeros((w.shape[0], rows, columns), dtype=np.float32) + b[:, None, None]
    for dy in range(k):
        for dx in range(k):
            window = padded[:, dy : dy + rows, dx : dx + columns]
            out += np.tensordot(w[:, :, dy, dx], window, axes=1)
    return out.astype(np.float32)


def _residual(x, w):
    """vecenv.alphazero.ResidualNetwork's forward pass on one position's features ``x``."""
    rows, columns = LAYOUT["shape"]
    planes = x[np.asarray(LAYOUT["planes"], dtype=np.int64)].reshape(rows * columns, -1)
    h = _conv(planes.T.reshape(-1, rows, columns), w["input.weight"], w["input.bias"])
    if LAYOUT["extras"]:
        extras = x[np.asarray(LAYOUT["extras"], dtype=np.int64)]
        h = h + (w["extras.weight"] @ extras).astype(np.float32)[:, None, None]
    h = np.maximum(h, 0)
    for k in range(LAYOUT["blocks"]):
        inner = np.maximum(_conv(h, w[f"blocks.{k}.first.weight"], w[f"blocks.{k}.first.bias"]), 0)
        h = np.maximum(
            h + _conv(inner, w[f"blocks.{k}.second.weight"], w[f"blocks.{k}.second.bias"]), 0
        )
    p = np.maximum(_conv(h, w["policy_conv.weight"], w["policy_conv.bias"]), 0).reshape(-1)
    v = np.maximum(_conv(h, w["value_conv.weight"], w["value_conv.bias"]), 0).reshape(-1)
    v = np.maximum(_dense(v, w["value_hidden.weight"], w["value_hidden.bias"]), 0)
    logits = _dense(p, w["policy.weight"], w["policy.bias"])
    value = np.tanh(_dense(v, w["value.weight"], w["value.bias"]))
    return logits.astype(np.float64), float(value[0])


def network(observation):
    """(logits as float64, value for the seat to move) of the network (AlphaZero's), or the PPO
    actor's logits and 0."""
    w = _weights()
    x = features(observation)
    if KIND == "alphazero" and LAYOUT.get("network") == "resnet":
        return _residual(x, w)
    if KIND == "alphazero":
        for k in range(LAYOUT["trunk"]):
            x = np.maximum(_dense(x, w[f"trunk.{2 * k}.weight"], w[f"trunk.{2 * k}.bias"]), 0)
        logits = _dense(x, w["policy.weight"], w["policy.bias"])
        value = np.tanh(_dense(x, w["value.weight"], w["value.bias"]))
        return logits.astype(np.float64), float(value[0])
    if LAYOUT["norm"]:
        scale = 1.0 / np.sqrt(w["obs_norm.var"] + 1e-8)  # vecenv.ppo.network.RunningNorm
        x = np.clip((x - w["obs_norm.mean"]) * scale, -10.0, 10.0).astype(np.float32)
    layers = LAYOUT["actor"]
    for k in range(layers):
        x = _dense(x, w[f"actor.{2 * k}.weight"], w[f"actor.{2 * k}.bias"])
        if k < layers - 1:
            x = np.tanh(x) if LAYOUT["activation"] == "tanh" else np.maximum(x, 0)
    return x.astype(np.float64), 0.0


def _observation(board, mark, shape):
    observation = {"board": board, "mark": mark}
    if KIND == "ppo" and "legal" in dict(LAYOUT["fields"]):
        legal = np.zeros(LAYOUT["actions"], dtype=bool)
        legal[legal_moves(board, shape)] = True
        observation["legal"] = legal
    return observation


def greedy(board, mark, shape):
    """The network's legal action of the largest logit (no search)."""
    logits, _ = network(_observation(board, mark, shape))
    moves = legal_moves(board, shape)
    masked = np.full(logits.shape, -np.inf)
    masked[moves] = logits[moves]
    return int(np.argmax(masked))


# -- the search ---------------------------------------------------------------------------------


def considered_visits(max_considered, simulations):
    """Sequential halving's schedule (mctx's get_table_of_considered_visits)."""
    table = []
    for m in range(max_considered + 1):
        if m <= 1:
            table.append(list(range(simulations)))
            continue
        halvings = math.ceil(math.log2(m))
        counts = [0] * m
        sequence = []
        considered = m
        while len(sequence) < simulations:
            rounds = max(1, int(simulations / (halvings * considered)))
            for _ in range(rounds):
                sequence.extend(counts[:considered])
                for k in range(considered):
                    counts[k] += 1
            considered = max(2, considered // 2)
        table.append(sequence[:simulations])
    return table


class Tree:
    """One search's nodes, as vecenv's search keeps them (node 0 the root)."""

    def __init__(self, actions):
        self.actions = actions
        self.visits, self.value, self.raw, self.reward, self.discount = [], [], [], [], []
        self.parent, self.mover, self.terminal = [], [], []
        self.children, self.prior, self.legal, self.board = [], [], [], []

    def add(self, parent, board, mover, legal, reward, discount):
        self.visits.append(0)
        self.value.append(0.0)
        self.raw.append(0.0)
        self.reward.append(reward)
        self.discount.append(discount)
        self.parent.append(parent)
        self.mover.append(mover)
        self.terminal.append(not any(legal))
        self.children.append([-1] * self.actions)
        self.prior.append([0.0] * self.actions)
        self.legal.append(legal)
        self.board.append(board)
        return len(self.visits) - 1

    def q(self, c):
        return self.reward[c] + self.discount[c] * self.value[c]

    def set_prior(self, n, logits):
        """softmax(logits) over node ``n``'s legal actions."""
        legal, prior = self.legal[n], self.prior[n]
        top = -math.inf
        for a in range(self.actions):
            if legal[a] and logits[a] > top:
                top = float(logits[a])
        total = 0.0
        for a in range(self.actions):
            p = math.exp(float(logits[a]) - top) if legal[a] else 0.0
            prior[a] = p
            total += p
        for a in range(self.actions):
            prior[a] /= total

    def backward(self, leaf, value):
        """A visit of ``value`` (the leaf mover's) at ``leaf`` and every node above it."""
        self.value[leaf] = (self.value[leaf] * self.visits[leaf] + value) / (self.visits[leaf] + 1)
        self.visits[leaf] += 1
        index = leaf
        while index != 0:
            value = self.reward[index] + self.discount[index] * value
            above = self.parent[index]
            self.value[above] = (self.value[above] * self.visits[above] + value) / (
                self.visits[above] + 1
            )
            self.visits[above] += 1
            index = above

    def child_visits(self, n, a):
        c = self.children[n][a]
        return self.visits[c] if c >= 0 else 0

    def completed(self, n):
        """mctx's qtransform_completed_by_mix_value at node ``n``."""
        children, prior = self.children[n], self.prior[n]
        total_visits, most, prior_sum, weighted = 0, 0, 0.0, 0.0
        for a in range(self.actions):
            c = children[a]
            if c >= 0:
                k = self.visits[c]
                total_visits += k
                most = max(most, k)
                p = max(TINY, prior[a])
                prior_sum += p
                weighted += p * self.q(c)
        mixed = self.raw[n]
        if total_visits > 0:
            mixed = (self.raw[n] + total_visits * (weighted / prior_sum)) / (total_visits + 1)
        out = [self.q(c) if c >= 0 else mixed for c in children]
        low, high = min(out), max(out)
        span = max(high - low, EPSILON)
        scale = (MAXVISIT_INIT + most) * VALUE_SCALE
        return [scale * (q - low) / span for q in out]

    def scores(self, completed, considered):
        """The root's score of each action visited ``considered`` times (else -inf)."""
        logs = [math.log(max(p, TINY)) for p in self.prior[0]]
        top = max(logs)
        out = []
        for a in range(self.actions):
            if self.legal[0][a] and self.child_visits(0, a) == considered:
                out.append(max(LOW_LOGIT, 0.0 + (logs[a] - top) + completed[a]))
            else:
                out.append(-math.inf)
        return out

    def select(self, n, table):
        if n == 0:
            legal = sum(self.legal[0])
            visited = sum(self.child_visits(0, a) for a in range(self.actions))
            considered = table[min(MAX_CONSIDERED, legal)][visited]
            return _argmax_first(self.scores(self.completed(0), considered))
        completed = self.completed(n)
        for a in range(self.actions):
            completed[a] += math.log(max(self.prior[n][a], TINY))
        top = max(completed)
        total, visits = 0.0, 0
        for a in range(self.actions):
            completed[a] = math.exp(completed[a] - top)
            total += completed[a]
            visits += self.child_visits(n, a)
        best, chosen = -math.inf, -1
        for a in range(self.actions):
            if self.legal[n][a]:
                score = completed[a] / total - self.child_visits(n, a) / (1.0 + visits)
                if score > best:
                    best, chosen = score, a
        return chosen


def _argmax_first(values):
    best = 0
    for a in range(1, len(values)):
        if values[a] > values[best]:
            best = a
    return best


def _legal_mask(board, shape, actions):
    mask = [False] * actions
    for a in legal_moves(board, shape):
        mask[a] = True
    return mask


def search(board, mark, shape, simulations):
    """The action vecenv's Gumbel search (noise off) plays from ``board`` for ``mark``."""
    actions = LAYOUT["actions"]
    tree = Tree(actions)
    seat = mark - 1
    tree.add(-1, list(board), seat, _legal_mask(board, shape, actions), 0.0, 0.0)
    logits, value = network(_observation(tree.board[0], mark, shape))
    tree.set_prior(0, logits)
    tree.visits[0], tree.value[0], tree.raw[0] = 1, value, value
    key = ("table", min(MAX_CONSIDERED, actions), simulations)
    if key not in _cache:
        _cache[key] = considered_visits(key[1], simulations)
    table = _cache[key]
    for _ in range(simulations):
        n = 0
        leaf = -1
        while not tree.terminal[n]:
            a = tree.select(n, table)
            if a < 0:
                break
            c = tree.children[n][a]
            if c < 0:
                mover = tree.mover[n]
                after, reward, over = play(tree.board[n], shape, a, mover + 1)
                legal = [False] * actions if over else _legal_mask(after, shape, actions)
                nxt = -1 if over else 1 - mover
                discount = 0.0 if not any(legal) else (1.0 if nxt == mover else -1.0)
                leaf = tree.add(n, after, nxt if any(legal) else -1, legal, reward, discount)
                tree.children[n][a] = leaf
                break
            n = c
        if leaf < 0 or tree.terminal[leaf]:  # a terminal node: a visit of 0
            tree.backward(n if leaf < 0 else leaf, 0.0)
            continue
        logits, value = network(_observation(tree.board[leaf], tree.mover[leaf] + 1, shape))
        tree.set_prior(leaf, logits)
        tree.raw[leaf] = value
        tree.backward(leaf, value)
    most = max(tree.child_visits(0, a) for a in range(actions))
    return _argmax_first(tree.scores(tree.completed(0), most))


def choose(board, mark, shape):
    """The move for ``mark`` on ``board``: the network's (searching where it does), or the
    rules' where the game is not the one the network was trained for."""
    trained = GAME == "tictactoe" or all(
        CONFIGURATION.get(key, value) == value
        for key, value in zip(("rows", "columns", "inarow"), shape, strict=True)
    )
    if not trained:
        return rules_move(board, shape, mark)
    if KIND == "alphazero" and SIMULATIONS > 0:
        return search(board, mark, shape, SIMULATIONS)
    return greedy(board, mark, shape)


def agent(observation, configuration):
    """Kaggle's agent: the move for the observation's board and mark."""
    shape = _shape(configuration)
    board = [int(v) for v in _field(observation, "board")]
    mark = int(_field(observation, "mark"))
    try:
        move = choose(board, mark, shape)
    except Exception:  # never an ERROR status: a legal move from the rules instead
        move = -1
    if move not in legal_moves(board, shape):
        move = rules_move(board, shape, mark)
    return int(move)
