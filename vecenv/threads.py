"""How many threads a batch's step uses: as many as pay for themselves, never a slower step.

A threaded step wakes the engine's sleeping OpenMP workers (vecenv lets them sleep between calls:
see ``vecenv/__init__.py``), which costs tens of microseconds on a quiet machine and hundreds on
a busy one, then splits the episodes between the threads. Whether that pays depends on what a
step costs (20-fold between games), on the batch, and on what else the machine runs, which
changes while an engine lives. So the engine measures rather than guesses:

- a batch too small to give each thread ``MIN_SECONDS_PER_THREAD`` of work (from a serial step's
  time) uses fewer threads, down to one: the serial loop;
- otherwise steps are timed in pairs, serial and threaded alternately (``PROBES`` of each, every
  step still a real step of the same episodes: the two loops give the same bits), and the
  threaded loop is kept only if its median step is faster than the serial one's by ``MARGIN``;
- the choice is taken again every ``RECHECK`` steps, so that a machine that got busier (or
  quieter) gets the loop that pays now.

Below ``PARALLEL_MIN_ENVS`` episodes a step never takes threads (a step there costs a few
microseconds: less than waking one). ``OMP_WAIT_POLICY=ACTIVE`` (spinning workers, for a machine
that does nothing else) makes threads pay for smaller batches; the measurements see it.
"""

import statistics

PARALLEL_MIN_ENVS = 1024
MIN_SECONDS_PER_THREAD = 25e-6  # the least work worth waking a thread for (a wake costs about it)
PROBES = 4  # timed steps of each loop per decision
MARGIN = 0.05  # the threaded loop must be this much faster than the serial one
RECHECK = 2048  # steps between decisions


class Threads:
    """The thread count of each step of one engine: ``next()`` says how many threads the coming
    step uses (1: the serial loop); a step that ``timing`` asks to time reports its seconds with
    ``record``.

    Args:
        num_threads: the engine's threads (the most a step may use).
        num_envs: its episodes.
        forced: None to decide by measurement, True for every thread always, False for one.
    """

    def __init__(self, num_threads, num_envs, forced=None):
        self.num_threads = num_threads
        self.possible = num_threads > 1 and num_envs >= PARALLEL_MIN_ENVS
        self.forced = forced if self.possible else False
        self._plan, self._times, self._left, self.timing = [], {}, RECHECK, False
        self.chosen = None  # not decided yet
        if self.forced is not None:
            self.chosen = num_threads if self.forced else 1
        else:
            self._start(num_threads)

    def _start(self, k):
        """Plan the timed steps of a decision between one thread and ``k``: the serial loop
        first (its time says how many threads the work can feed), then the two alternately."""
        self._plan = [1] + [k, 1] * PROBES + [k]
        self._times = {}
        self._skip = True  # the first threaded step wakes (or starts) the pool: not timed
        self.timing = True

    @property
    def deciding(self):
        """Whether steps are still being timed for the next decision."""
        return bool(self._plan)

    def next(self):
        """Threads for the coming step (1: serial); sets ``timing`` when its time is wanted."""
        if not self._plan and self.forced is None:
            self._left -= 1
            if self._left <= 0:
                self._start(self.num_threads)
        if self._plan:
            self.timing = True
            return self._plan[0]
        self.timing = False
        return self.chosen

    def record(self, k, seconds):
        """The time of a step that ``next`` asked to time (``k`` threads)."""
        if not self._plan or self._plan[0] != k:
            return
        self._plan.pop(0)
        if k > 1 and self._skip:
            self._skip = False
        else:
            self._times.setdefault(k, []).append(seconds)
        if k == 1 and len(self._times[1]) == 1:
            # A batch whose work cannot give every thread its share gets fewer threads (one:
            # nothing left to measure).
            least = MIN_SECONDS_PER_THREAD
            fed = min(self.num_threads, int(seconds / least) if least > 0 else self.num_threads)
            if fed < 2:
                self._decide(1)
                return
            self._plan = [fed if p > 1 else 1 for p in self._plan]
        if not self._plan:
            serial = statistics.median(self._times.get(1, [float("inf")]))
            threaded = [(statistics.median(t), p) for p, t in self._times.items() if p > 1]
            best = min(threaded, default=(float("inf"), 1))
            self._decide(best[1] if best[0] < (1.0 - MARGIN) * serial else 1)

    def _decide(self, k):
        self.chosen = k
        self._plan = []
        self._times = {}
        self._left = RECHECK
        self.timing = False

    @property
    def uses_threads(self):
        """Whether steps run the threaded loop (None before the first decision)."""
        return None if self.chosen is None else self.chosen > 1

    def state(self):
        """What a pickled engine keeps: the decision (measurements start over where it loads)."""
        return {"chosen": self.chosen}

    def restore(self, state):
        if self.forced is None and state.get("chosen") is not None:
            self._decide(min(state["chosen"], self.num_threads))
