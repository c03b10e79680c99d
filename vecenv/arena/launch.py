"""An arena server in a subprocess (``vecenv arena serve``), for scripts, tests and benchmarks."""

import os
import signal
import subprocess
import sys
import threading

START_TIMEOUT = 120  # seconds: a cold start imports numba and may compile the games' drivers


class ServerProcess:
    """``vecenv arena serve --db DB --port 0`` on 127.0.0.1; ``url`` once ``start`` returns."""

    def __init__(self, db, threads=8, host=None):
        self.db, self.threads, self.host = db, threads, host
        self.process = None
        self.url = None

    def start(self, timeout=START_TIMEOUT):
        command = [sys.executable, "-m", "vecenv", "arena", "serve", "--db", self.db]
        command += ["--port", "0", "--threads", str(self.threads)]
        if self.host is not None:
            command += ["--host", self.host]
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
        )
        line = []
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))
        reader.start()
        reader.join(timeout)
        if not line or "http://" not in line[0]:
            self.process.kill()
            _, err = self.process.communicate(timeout=30)
            raise RuntimeError(f"the arena did not start: {line} {err[-2000:]}")
        # "vecenv arena on http://127.0.0.1:PORT (database ...)"
        self.url = next(word for word in line[0].split() if word.startswith("http://"))
        return self

    def kill(self):
        """SIGKILL: the server gets no chance to tidy up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
