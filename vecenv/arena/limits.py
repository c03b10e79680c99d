"""What one client may take of an arena server: live runs held between requests, and failed
logins.

``Limits`` gathers the bounds (``vecenv arena serve`` sets each with a flag; docs/faces/arena.md):

- the live runs every environment keeps between requests (its matches or episodes, so that a run
  played in order costs one step an action): ``live_runs`` and ``live_bytes`` in all, and per
  agent ``agent_live_runs`` and ``agent_live_bytes``; past them the least recently used run is
  dropped and played again from its state when it next acts (slower, never wrong), and a run
  that is abandoned or over is dropped at once. An agent that opens and abandons runs over and
  over on the largest board therefore holds a few runs' bytes, not the server's memory.
- failed logins: a client (by its address) whose logins as one agent failed ``auth_failures``
  times within ``auth_window`` seconds is answered 429 with ``Retry-After`` for that agent until
  the oldest of those failures leaves the window, without its credentials being checked; after
  ten times as many failures of any agents, for every agent (``Throttle``). At most
  ``TRACKED_CLIENTS`` addresses and names are remembered (the least recently failed forgotten
  first). Behind a proxy every client has the proxy's address: the per-agent count keeps one
  agent's guesser from locking out the others.
"""

import collections
import dataclasses
import math
import threading
import time

from vecenv.aisys.common import AGENT_BYTES, AGENT_RUNS, CACHE_BYTES, CACHE_SIZE
from vecenv.spec import is_integer

TRACKED_CLIENTS = 10_000


@dataclasses.dataclass(frozen=True)
class Limits:
    """The server's bounds (see the module); every one a positive number."""

    live_runs: int = CACHE_SIZE
    live_bytes: int = CACHE_BYTES
    agent_live_runs: int = AGENT_RUNS
    agent_live_bytes: int = AGENT_BYTES
    auth_failures: int = 20
    auth_window: float = 60.0

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type is int:
                ok = is_integer(value) and value >= 1
            else:
                ok = isinstance(value, (int, float)) and not isinstance(value, bool)
                ok = ok and math.isfinite(value) and value > 0
            if not ok:
                raise ValueError(f"{field.name} must be a positive number, got {value!r}")

    def live(self):
        """The live-run bounds as an environment's ``live_limits`` takes them."""
        return {
            "runs": self.live_runs,
            "nbytes": self.live_bytes,
            "agent_runs": self.agent_live_runs,
            "agent_bytes": self.agent_live_bytes,
        }


class Throttle:
    """Failed logins by client: ``retry_after(client, agent)`` is the seconds a client must wait
    before it logs in as ``agent`` again (0: none), ``failed(client, agent)`` counts one more
    failure. A client is throttled for one agent name after ``failures`` failures of it within
    ``window`` seconds, and for every name after ``ADDRESS_FACTOR`` times as many failures of
    any: several agents behind one address (a proxy, a NAT) are not locked out together by one
    of them, and a client cycling through names is still held."""

    ADDRESS_FACTOR = 10

    def __init__(self, failures, window, clock=time.monotonic):
        self.failures, self.window, self.clock = int(failures), float(window), clock
        self._times = collections.OrderedDict()  # key -> deque of failure times
        self._lock = threading.Lock()

    def _keys(self, client, agent):
        return (((client, agent), self.failures), ((client,), self.failures * self.ADDRESS_FACTOR))

    def retry_after(self, client, agent=None):
        if client is None:
            return 0
        wait = 0
        with self._lock:
            now = self.clock()
            for key, most in self._keys(client, agent):
                times = self._times.get(key)
                if times is None:
                    continue
                while times and times[0] <= now - self.window:
                    times.popleft()
                if not times:
                    del self._times[key]
                elif len(times) >= most:
                    wait = max(wait, math.ceil(times[0] + self.window - now), 1)
        return wait

    def failed(self, client, agent=None):
        if client is None:
            return
        with self._lock:
            now = self.clock()
            for key, most in self._keys(client, agent):
                times = self._times.pop(key, None) or collections.deque(maxlen=most)
                times.append(now)
                self._times[key] = times  # the most recently failed last
            while len(self._times) > TRACKED_CLIENTS:
                self._times.popitem(last=False)
