"""Steps of the distributed ``VectorEnv``'s workers on the driver's machine, through shared memory.

The driver keeps the actions and the results of a step in arrays in shared memory
(``vecenv.ray.sharedarrays``). It wakes each worker with one byte on that worker's own Unix
socket and waits on the sockets; each worker's thread steps its slice, its engine writing the
observations straight into the shared arrays, and answers with a five-byte header (plus the
pickled infos, where there are any). Nothing polls: a waiting worker or driver sleeps in the
kernel, so an idle worker takes no CPU from a busy one. A worker whose process dies has its socket
closed by the system, so the driver sees the death at once (end of file); every wait is bounded
besides.

This is the data path only: Ray still places, starts, restarts and calls the workers, and carries
everything between machines.
"""

import contextlib
import os
import pickle
import shutil
import socket
import struct
import tempfile
import threading

_HEADER = struct.Struct("<BI")  # status, length of the pickled payload that follows
_OK, _FAILED = 0, 1
_INDEX = struct.Struct("<I")  # a worker's first message: which worker it is
_GO = b"s"


class WorkerLost(Exception):
    """The worker's process ended (its socket closed)."""


def _receive_exactly(conn, size):
    chunks, left = [], size
    while left:
        chunk = conn.recv(left)
        if not chunk:
            raise WorkerLost
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Listener:
    """The driver's Unix socket that its workers on this machine connect to."""

    def __init__(self, backlog):
        self._dir = tempfile.mkdtemp(prefix="vecenv-")
        self.address = os.path.join(self._dir, "steps")
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.address)
        self._sock.listen(backlog)

    def accept(self, timeout):
        """The next worker's ``(index, Link)``; TimeoutError after ``timeout`` seconds."""
        self._sock.settimeout(timeout)
        try:
            conn, _ = self._sock.accept()
        except TimeoutError:
            raise TimeoutError(f"no worker connected within {timeout} s") from None
        conn.settimeout(timeout)
        try:
            (index,) = _INDEX.unpack(_receive_exactly(conn, _INDEX.size))
        except (WorkerLost, OSError):  # a timeout is an OSError
            conn.close()
            raise TimeoutError("a worker connected but did not say which it is") from None
        return index, Link(conn)

    def close(self):
        self._sock.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class Link:
    """The driver's end of one worker's socket."""

    def __init__(self, conn):
        self._conn = conn

    def send(self):
        """Have the worker take a step (its actions are in the shared arrays already)."""
        try:
            self._conn.sendall(_GO)
        except OSError:
            raise WorkerLost from None

    def receive(self):
        """The worker's answer to the step: None (its results are all in the shared arrays) or
        what it pickled. Raises WorkerLost where the worker died, TimeoutError where it did not
        answer in time, and the worker's own exception where its step failed."""
        try:
            status, size = _HEADER.unpack(_receive_exactly(self._conn, _HEADER.size))
            payload = pickle.loads(_receive_exactly(self._conn, size)) if size else None
        except TimeoutError:  # before OSError, of which it is one
            raise TimeoutError("a worker did not answer its step in time") from None
        except OSError:
            raise WorkerLost from None
        if status == _FAILED:
            raise payload
        return payload

    def close(self):
        with contextlib.suppress(OSError):
            self._conn.close()


def connect(address, index, timeout):
    """A worker's socket to the driver's ``Listener`` (OSError where there is none here)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(address)
        conn.sendall(_INDEX.pack(index))
    except OSError:
        conn.close()
        raise
    conn.settimeout(None)  # a worker waits for its next step as long as the driver lives
    return conn


def serve(conn, step, lock):
    """A worker's loop (on a thread of its own): take a step at each byte the driver sends, and
    answer with what ``step()`` returns (None, or something to pickle) or the exception it
    raised. Ends when the driver closes the socket."""
    with contextlib.suppress(OSError), conn:
        while conn.recv(1):
            with lock:
                try:
                    status, extra = _OK, step()
                except Exception as exc:  # the driver raises it in the caller's process
                    status, extra = _FAILED, exc
            try:
                payload = b"" if extra is None else pickle.dumps(extra, protocol=5)
            except Exception as exc:  # it travels as its text
                status = _FAILED
                payload = pickle.dumps(RuntimeError(f"a worker's answer does not pickle: {exc!r}"))
            conn.sendall(_HEADER.pack(status, len(payload)) + payload)


def start(conn, step, lock):
    """Run ``serve`` on a daemon thread; returns the thread."""
    thread = threading.Thread(target=serve, args=(conn, step, lock), daemon=True)
    thread.start()
    return thread
