"""The shared transport's parts on their own (no Ray): arrays in shared memory whose mapping
outlives every explicit close while a view lives, and the socket that wakes a worker and carries
its answer, its failure, its death or its silence."""

import gc
import socket
import threading

import numpy as np
import pytest

from vecenv.ray import sharedarrays, sharedsteps


def test_views_outlive_the_segment_and_its_maker():
    made = sharedarrays.SharedArrays({"a": np.zeros(1000), "b": np.zeros((10, 3), np.int8)})
    a, b = made.arrays["a"][10:20], made.arrays["b"]
    a[:] = 2.5
    b[4] = [1, 2, 3]
    layout = made.layout
    made.close()
    del made
    gc.collect()
    # A caller's arrays (returned with copy=False) stay readable and writable after the env
    # closed: the memory goes with the last view, not at close.
    a[0] = 7.0
    assert a.sum() == 7.0 + 9 * 2.5 and b[4].tolist() == [1, 2, 3]
    assert sharedarrays.attach(layout) is None  # the name is gone


def test_attach_finds_only_the_makers_segment():
    name, token, size, fields = ("vecenv-no-such-segment", b"0" * 16, 8, (("a", 16, (1,), "<f8"),))
    assert sharedarrays.attach((name, token, size, fields)) is None


class Worker:
    """A worker's end: ``serve`` on a thread, stepping by ``step``."""

    def __init__(self, listener, index, step):
        self.conn = sharedsteps.connect(listener.address, index, timeout=5)
        self.thread = sharedsteps.start(self.conn, step, threading.Lock())


@pytest.fixture
def listener():
    listener = sharedsteps.Listener(backlog=4)
    yield listener
    listener.close()


def test_a_linked_step_answers_and_fails_in_the_callers_process(listener):
    answers = iter([None, (False, {"x": np.arange(3)}), ValueError("bad step")])

    def step():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    worker = Worker(listener, 3, step)
    index, link = listener.accept(timeout=5)
    assert index == 3
    link.send()
    assert link.receive() is None
    link.send()
    withheld, infos = link.receive()
    assert withheld is False and infos["x"].tolist() == [0, 1, 2]
    link.send()
    with pytest.raises(ValueError, match="bad step"):
        link.receive()
    link.close()
    worker.thread.join(timeout=5)
    assert not worker.thread.is_alive()  # the driver closed: the worker's loop ended


def test_an_answer_that_does_not_pickle_fails_clearly(listener):
    Worker(listener, 0, lambda: (False, {"lock": threading.Lock()}))
    _, link = listener.accept(timeout=5)
    link.send()
    with pytest.raises(RuntimeError, match="does not pickle"):
        link.receive()
    link.close()


def test_a_dead_worker_is_seen_at_once_and_a_silent_one_times_out(listener):
    # A dead worker: its end of the socket closed by the system (here, by hand).
    conn = sharedsteps.connect(listener.address, 1, timeout=5)
    _, link = listener.accept(timeout=5)
    conn.close()
    with pytest.raises(sharedsteps.WorkerLost):
        link.send()
        link.receive()
    # A worker that never answers: the wait is bounded by the socket's timeout.
    release = threading.Event()
    Worker(listener, 2, lambda: release.wait())
    _, link = listener.accept(timeout=5)
    link._conn.settimeout(0.2)
    link.send()
    with pytest.raises(TimeoutError):
        link.receive()
    release.set()
    link.close()


def test_a_listener_waits_a_bounded_time_for_a_worker(listener):
    with pytest.raises(TimeoutError, match="no worker connected"):
        listener.accept(timeout=0.1)
    # A connection that never says which worker it is is refused, not waited on forever.
    stranger = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stranger.connect(listener.address)
    with pytest.raises(TimeoutError, match="did not say"):
        listener.accept(timeout=0.2)
    stranger.close()
