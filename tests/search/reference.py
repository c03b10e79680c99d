"""A plain-Python MCTS on plain-Python tictactoe: the reference the compiled search is held to.

It is written from the algorithms' definitions (mctx's PUCT and Gumbel MuZero, OpenSpiel's UCT,
random rollouts), one node at a time, with dicts and lists, and draws its random numbers from the
same splitmix64 stream as vecenv (``vecenv.kernels.rng``: a Weyl counter through splitmix64's
finaliser), in the same order: the root's rollout, then the root's Gumbel noise, then each
simulation's rollout, then the final tie-break. Given the same stream it must build the same
tree: the same visit counts, values and chosen action.
"""

import math

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
TINY = 2.2250738585072014e-308


class Stream:
    """splitmix64 over a 64-bit word, as a record's ``rng`` field advances."""

    def __init__(self, word):
        self.word = int(word)

    def u64(self):
        self.word = (self.word + GOLDEN) & MASK
        z = self.word
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def integer(self, n):
        return ((self.u64() >> 32) * n) >> 32

    def uniform(self):
        return (self.u64() >> 11) * 2.0**-53

    def open_uniform(self):
        return ((self.u64() >> 11) + 0.5) * 2.0**-53


class TicTacToe:
    """A position: the board (0 empty, 1 and 2 the seats' marks) and the seat to move; ``over``
    once a line or a full board ended it."""

    def __init__(self, board, mover, over=False):
        self.board, self.mover, self.over = list(board), mover, over

    def legal(self):
        return [not self.over and c == 0 for c in self.board]

    def play(self, cell):
        """The position after the mover marks ``cell``, and the mover's reward."""
        board = list(self.board)
        if board[cell] != 0:
            return TicTacToe(board, -1, True), -1.0
        board[cell] = self.mover + 1
        won = any(all(board[k] == self.mover + 1 for k in line) for line in LINES)
        if won:
            return TicTacToe(board, -1, True), 1.0
        if all(board):
            return TicTacToe(board, -1, True), 0.0
        return TicTacToe(board, 1 - self.mover), 0.0


def rollout(position, seat, stream):
    """The sum of ``seat``'s rewards over uniformly random legal moves to the end."""
    total = 0.0
    while not position.over:
        legal = position.legal()
        pick = stream.integer(sum(legal))
        cell = [c for c in range(9) if legal[c]][pick]
        mover = position.mover
        position, reward = position.play(cell)
        total += reward if mover == seat else -reward
    return total


class Node:
    def __init__(self, position, reward=0.0, discount=0.0):
        self.position = position
        self.reward = reward  # of the step into it, to the parent's mover
        self.discount = discount
        self.legal = position.legal()
        self.terminal = not any(self.legal)
        self.children = {}
        self.visits = 0
        self.value = 0.0
        self.raw = 0.0
        self.prior = [0.0] * 9

    def q(self):
        return self.reward + self.discount * self.value


def softmax_legal(logits, legal):
    top = max(x for x, ok in zip(logits, legal, strict=True) if ok)
    weights = [math.exp(x - top) if ok else 0.0 for x, ok in zip(logits, legal, strict=True)]
    total = sum(weights)
    return [w / total for w in weights]


def considered_sequence(m, simulations):
    """Sequential halving's visit counts (the Gumbel MuZero paper's schedule)."""
    if m <= 1:
        return list(range(simulations))
    halvings = math.ceil(math.log2(m))
    counts, out, considered = [0] * m, [], m
    while len(out) < simulations:
        for _ in range(max(1, int(simulations / (halvings * considered)))):
            out.extend(counts[:considered])
            counts[:considered] = [c + 1 for c in counts[:considered]]
        considered = max(2, considered // 2)
    return out[:simulations]


class Search:
    """One tree. ``evaluator(position) -> (logits, value)`` or None for random rollouts (with
    uniform priors)."""

    def __init__(
        self,
        selection,
        simulations,
        stream,
        evaluator=None,
        gumbel_scale=1.0,
        c_init=1.25,
        c_base=19652.0,
        uct_c=2.0,
        value_scale=0.1,
        maxvisit_init=50.0,
        max_considered=16,
    ):
        self.selection, self.simulations, self.stream = selection, simulations, stream
        self.evaluator, self.gumbel_scale = evaluator, gumbel_scale
        self.c_init, self.c_base, self.uct_c = c_init, c_base, uct_c
        self.value_scale, self.maxvisit_init, self.max_considered = (
            value_scale,
            maxvisit_init,
            max_considered,
        )

    def evaluate(self, node):
        if self.evaluator is None:
            count = sum(node.legal)
            node.prior = [1.0 / count if ok else 0.0 for ok in node.legal]
            return rollout(node.position, node.position.mover, self.stream)
        logits, value = self.evaluator(node.position)
        node.prior = softmax_legal(logits, node.legal)
        return value

    # -- selection -----------------------------------------------------------------------------

    def uct(self, node):
        best, chosen = -math.inf, None
        for a in range(9):
            if not node.legal[a]:
                continue
            child = node.children.get(a)
            if child is None:
                return a
            # OpenSpiel's c * sqrt(log(N) / n), computed as the search computes it
            factor = self.uct_c * math.sqrt(math.log(node.visits))
            explore = factor * (1.0 / math.sqrt(child.visits))
            score = child.q() + explore
            if score > best:
                best, chosen = score, a
        return chosen

    def puct(self, node):
        qs = [c.q() for c in node.children.values()]
        low, high = min([node.value] + qs), max([node.value] + qs)
        span = max(high - low, 1e-8)
        pb_c = self.c_init + math.log((node.visits + self.c_base + 1) / self.c_base)
        best, chosen = -math.inf, None
        for a in range(9):
            if not node.legal[a]:
                continue
            child = node.children.get(a)
            value = (child.q() - low) / span if child else 0.0
            visits = child.visits if child else 0
            score = value + math.sqrt(node.visits) * pb_c * node.prior[a] / (visits + 1)
            if score > best:
                best, chosen = score, a
        return chosen

    def completed(self, node):
        """Completed Q, mixed value for the unvisited, rescaled and scaled (over all 9)."""
        visited = {a: c for a, c in node.children.items()}
        total = sum(c.visits for c in visited.values())
        mixed = node.raw
        if total:
            probs = {a: max(TINY, node.prior[a]) for a in visited}
            weighted = sum(probs[a] * c.q() for a, c in visited.items()) / sum(probs.values())
            mixed = (node.raw + total * weighted) / (total + 1)
        q = [visited[a].q() if a in visited else mixed for a in range(9)]
        low, high = min(q), max(q)
        most = max([c.visits for c in visited.values()] + [0])
        scale = (self.maxvisit_init + most) * self.value_scale
        return [scale * (x - low) / max(high - low, 1e-8) for x in q]

    def considered_scores(self, node, considered):
        completed = self.completed(node)
        logits = [math.log(max(p, TINY)) for p in node.prior]
        top = max(logits)
        scores = []
        for a in range(9):
            child = node.children.get(a)
            visits = child.visits if child else 0
            if node.legal[a] and visits == considered:
                scores.append(max(-1e9, self.noise[a] + logits[a] - top + completed[a]))
            else:
                scores.append(-math.inf)
        return scores

    def gumbel_root(self, node):
        visits = sum(c.visits for c in node.children.values())
        m = min(self.max_considered, sum(node.legal))
        considered = considered_sequence(m, self.simulations)[visits]
        scores = self.considered_scores(node, considered)
        return scores.index(max(scores))

    def gumbel_interior(self, node):
        completed = self.completed(node)
        z = [completed[a] + math.log(max(node.prior[a], TINY)) for a in range(9)]
        top = max(z)
        e = [math.exp(x - top) for x in z]
        total_e = sum(e)
        total_visits = sum(c.visits for c in node.children.values())
        best, chosen = -math.inf, None
        for a in range(9):
            if node.legal[a]:
                child = node.children.get(a)
                score = e[a] / total_e - (child.visits if child else 0) / (1 + total_visits)
                if score > best:
                    best, chosen = score, a
        return chosen

    def select(self, node, root):
        if self.selection == "gumbel":
            return self.gumbel_root(node) if root else self.gumbel_interior(node)
        return self.uct(node) if self.selection == "uct" else self.puct(node)

    # -- the search ----------------------------------------------------------------------------

    def run(self, position):
        root = Node(position)
        value = self.evaluate(root)
        root.visits, root.value, root.raw = 1, value, value
        self.noise = [0.0] * 9
        if self.selection == "gumbel":
            self.noise = [
                self.gumbel_scale * -math.log(-math.log(self.stream.open_uniform()))
                for _ in range(9)
            ]
        for _ in range(self.simulations):
            path, node = [root], root
            while not node.terminal:
                a = self.select(node, node is root)
                child = node.children.get(a)
                if child is None:
                    after, reward = node.position.play(a)
                    child = Node(after, reward)
                    if not child.terminal:
                        child.discount = 1.0 if after.mover == node.position.mover else -1.0
                    node.children[a] = child
                    path.append(child)
                    break
                path.append(child)
                node = child
            leaf = path[-1]
            value = 0.0
            if not leaf.terminal:
                value = self.evaluate(leaf)
                leaf.raw = value
            for k in range(len(path) - 1, -1, -1):
                node = path[k]
                node.value = (node.value * node.visits + value) / (node.visits + 1)
                node.visits += 1
                value = node.reward + node.discount * value
        self.root = root
        return root

    def action(self):
        root = self.root
        visits = [root.children[a].visits if a in root.children else 0 for a in range(9)]
        if self.selection == "gumbel":
            scores = self.considered_scores(root, max(visits))
            return scores.index(max(scores))
        most = max(visits)
        tied = [a for a in range(9) if visits[a] == most and root.legal[a]]
        return tied[self.stream.integer(len(tied))]

    def policy(self):
        root = self.root
        visits = [root.children[a].visits if a in root.children else 0 for a in range(9)]
        if self.selection != "gumbel":
            return [v / sum(visits) for v in visits]
        completed = self.completed(root)
        logits = [completed[a] + math.log(max(root.prior[a], TINY)) for a in range(9)]
        return softmax_legal(logits, root.legal)
