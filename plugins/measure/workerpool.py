"""Persistent worker subprocesses that answer JSON-line requests under a timeout.

Protocol: the parent writes one JSON object per line to a worker's stdin; the worker
answers one JSON object per line on a private copy of its original stdout, after
pointing fd 1 at stderr (see ``worker.py``), so whatever TVM, LLVM or a schedule
function prints can never corrupt a reply. A worker's first line is ``{"ready": ...}``,
sent once its imports are done; every reply echoes the request's ``id``. Nothing is
pickled.

Each worker runs in its own session, so a timeout kills its whole process group (the C
compiler it spawned too) and a Ctrl-C in the terminal does not reach it. A worker exits
when its stdin closes and, on Linux, when the process that started it dies.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKER_MODULE = "plugins.measure.worker"
PARENT_ENV = "ORCHESTRATOR_MEASURE_PARENT"
STARTUP_TIMEOUT = 120.0
# Consecutive start-up failures after which queued requests fail instead of waiting.
MAX_START_FAILURES = 3
_TAIL_BYTES = 8192
# Traceback frames and separators, in Python's and TVM's formats.
_NOISE = re.compile(r"^(File \"|Traceback |\^+$|-+$|\d+: |#\d+ |Stack trace)")


def one_line(text: str, limit: int = 300) -> str:
    """The last meaningful line of an error text (no traceback frames), capped at ``limit``."""
    lines = [ln.strip() for ln in text.splitlines()]
    kept = [ln for ln in lines if ln and not _NOISE.match(ln)]
    line = kept[-1] if kept else ""
    line = line.removeprefix("Error message:").strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


def describe_exception(exc: BaseException, limit: int = 300) -> str:
    """``Type: last meaningful line of the message``."""
    name = type(exc).__name__
    text = one_line(str(exc), limit)
    return f"{name}: {text}" if text else name


def exit_text(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


@dataclass(frozen=True)
class Outcome:
    """What became of one request: the worker's reply, or why there is none."""

    reply: dict[str, Any] | None
    failure: str = ""  # "timeout", "died" or "no_worker" when reply is None
    error: str = ""
    seconds: float = 0.0


class Worker:
    """One worker subprocess of a given role ("build" or "run")."""

    def __init__(self, role: str, env: Mapping[str, str], log_path: Path) -> None:
        self.role = role
        self.log_path = log_path
        with open(log_path, "ab") as log:  # O_APPEND: the parent may truncate it any time
            self.proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE, role],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env=dict(env), start_new_session=True, bufsize=0,
            )
        self.started = time.monotonic()
        self.ready = False
        self.hello: dict[str, Any] = {}  # the worker's ready message
        self._buf = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def fileno(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def send(self, message: Mapping[str, Any]) -> bool:
        """Write one request line; False if the worker's stdin is already closed."""
        assert self.proc.stdin is not None
        data = memoryview((json.dumps(message) + "\n").encode())
        try:
            while data:  # an unbuffered pipe write may be partial
                data = data[self.proc.stdin.write(data) or 0:]
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def read(self) -> list[dict[str, Any]] | None:
        """The complete messages readable now; None at end of file (the worker exited)."""
        chunk = os.read(self.fileno(), 1 << 16)
        if not chunk:
            return None
        self._buf += chunk
        *lines, self._buf = self._buf.split(b"\n")
        messages = []
        for line in lines:
            try:
                value = json.loads(line)
            except ValueError:
                continue  # cannot happen with a well-behaved worker; never fatal
            if isinstance(value, dict):
                messages.append(value)
        return messages

    def clear_log(self) -> None:
        try:
            os.truncate(self.log_path, 0)
        except OSError:
            pass

    def stderr_hint(self) -> str:
        """The last meaningful line the worker wrote to stderr, or ''."""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
                return one_line(f.read().decode(errors="replace"))
        except OSError:
            return ""

    def kill(self) -> None:
        """Kill the worker's whole process group and reap it."""
        _kill_group(self.proc)
        self._close_pipes()

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self.log_path.unlink()
        except OSError:
            pass


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # The group id is the worker's pid (start_new_session) and stays valid until the
    # worker is reaped, so kill the group first and wait afterwards.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
        pass


def _kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.returncode is None:
            _kill_group(proc)


def worker_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a worker: ours, our import path, our pid, plus ``extra``."""
    env = dict(os.environ)
    # The worker imports schedule functions by name, so it needs our sys.path (pytest's
    # rootdir, a script's directory) and not only the installed packages.
    path = [p or os.getcwd() for p in sys.path]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    env[PARENT_ENV] = str(os.getpid())
    env.update(extra or {})
    return env


class WorkerPool:
    # The class of the processes this pool starts (subclasses run other entry points).
    worker_class: type[Worker] = Worker

    """Up to ``size`` persistent workers of one role, started lazily and restarted as needed."""

    _serial = itertools.count()

    def __init__(self, role: str, size: int, log_dir: Path, *,
                 env: Mapping[str, str] | None = None,
                 startup_timeout: float = STARTUP_TIMEOUT) -> None:
        self.role = role
        self.size = max(1, size)
        self.log_dir = log_dir
        self.env = worker_env(env)
        self.startup_timeout = startup_timeout
        self.workers: list[Worker] = []
        self.started = 0  # workers ever started (restarts included)
        self.startup_seconds: list[float] = []  # each worker's own import time
        self._start_failures = 0
        self._start_error = ""
        self._ids = itertools.count()
        self._procs: list[subprocess.Popen[bytes]] = []
        # Reaps the workers even if close() is never called (interpreter exit, GC).
        self._finalizer = weakref.finalize(self, _kill_all, self._procs)

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self.workers]

    def start(self, count: int | None = None) -> None:
        """Start workers (without waiting for them) until ``count`` are alive."""
        want = self.size if count is None else min(self.size, count)
        while len(self.workers) < want:
            log = self.log_dir / f"{self.role}-{next(self._serial)}.log"
            try:
                worker = self.worker_class(self.role, self.env, log)
            except OSError as exc:  # fork failed: no memory, too many processes
                self._start_failures += 1
                self._start_error = describe_exception(exc)
                return
            self.workers.append(worker)
            self._procs[:] = [w.proc for w in self.workers]
            self.started += 1

    def map(self, requests: Sequence[Mapping[str, Any]], timeout: float) -> list[Outcome]:
        """Send every request to some worker and collect one outcome per request, in order.

        ``timeout`` bounds each request from the moment it is sent; a worker that
        exceeds it, dies or misbehaves is killed and replaced before the next request.
        """
        outcomes: list[Outcome | None] = [None] * len(requests)
        queue = deque(range(len(requests)))
        busy: dict[Worker, tuple[int, int, float]] = {}  # worker -> (index, id, sent at)
        self._start_failures = 0
        try:
            while queue or busy:
                if queue and self._start_failures >= MAX_START_FAILURES:
                    error = f"{self.role} worker failed to start: {self._start_error}"
                    while queue:
                        outcomes[queue.popleft()] = Outcome(None, "no_worker", error)
                    if not busy:
                        break
                self.start(len(queue) + len(busy))
                self._dispatch(requests, queue, busy)
                self._wait(busy, outcomes, timeout)
        except BaseException:
            for worker in list(busy):  # a reply would arrive for nobody; start afresh
                self._drop(worker)
            raise
        return [o if o is not None else Outcome(None, "died", "lost") for o in outcomes]

    def _dispatch(self, requests: Sequence[Mapping[str, Any]], queue: deque[int],
                  busy: dict[Worker, tuple[int, int, float]]) -> None:
        for worker in list(self.workers):
            if not queue:
                return
            if not worker.ready or worker in busy:
                continue
            index = queue.popleft()
            rid = next(self._ids)
            worker.clear_log()
            if worker.send({**requests[index], "id": rid}):
                busy[worker] = (index, rid, time.monotonic())
            else:  # it died while idle: not this request's fault
                queue.appendleft(index)
                self._drop(worker)

    def _wait(self, busy: dict[Worker, tuple[int, int, float]],
              outcomes: list[Outcome | None], timeout: float) -> None:
        now = time.monotonic()
        deadlines = [sent + timeout for _, _, sent in busy.values()]
        deadlines += [w.started + self.startup_timeout for w in self.workers if not w.ready]
        wait = max(0.0, min(deadlines) - now) if deadlines else 0.0
        # A selector, not select.select: a long-lived parent may hold fds above 1024.
        with selectors.DefaultSelector() as selector:
            for worker in self.workers:
                selector.register(worker, selectors.EVENT_READ)
            readable = [key.fileobj for key, _ in selector.select(wait)] if self.workers else []
        for worker in readable:
            assert isinstance(worker, Worker)
            messages = worker.read()
            if messages is None:
                self._on_exit(worker, busy, outcomes)
                continue
            for message in messages:
                if message.get("ready") and not worker.ready:
                    worker.ready = True
                    worker.hello = message
                    self.startup_seconds.append(float(message.get("seconds", 0.0)))
                    self._start_failures = 0
                elif worker in busy and message.get("id") == busy[worker][1]:
                    index, _, sent = busy.pop(worker)
                    outcomes[index] = Outcome(message, seconds=time.monotonic() - sent)
        now = time.monotonic()
        for worker, (index, _, sent) in list(busy.items()):
            if now - sent > timeout:
                del busy[worker]
                self._drop(worker)
                outcomes[index] = Outcome(
                    None, "timeout",
                    f"{self.role} exceeded the {timeout:g} s timeout (worker killed)",
                    now - sent)
        for worker in list(self.workers):
            if not worker.ready and now - worker.started > self.startup_timeout:
                self._drop(worker)
                self._start_failures += 1
                self._start_error = f"not ready after {self.startup_timeout:g} s"

    def _on_exit(self, worker: Worker, busy: dict[Worker, tuple[int, int, float]],
                 outcomes: list[Outcome | None]) -> None:
        hint = worker.stderr_hint().strip("! ")  # before _drop, which deletes the log
        self._drop(worker)
        how = exit_text(worker.proc.returncode)
        detail = f"{how}; {hint}" if hint else how
        if worker in busy:
            index, _, sent = busy.pop(worker)
            outcomes[index] = Outcome(None, "died", f"{self.role} worker died ({detail})",
                                      time.monotonic() - sent)
        elif not worker.ready:
            self._start_failures += 1
            self._start_error = detail

    def _drop(self, worker: Worker) -> None:
        worker.kill()
        if worker in self.workers:
            self.workers.remove(worker)
        self._procs[:] = [w.proc for w in self.workers]

    def close(self) -> None:
        """Kill and reap every worker (they hold nothing worth a graceful exit, which
        takes a second or more once TVM is loaded)."""
        for worker in self.workers:
            worker.kill()
        self.workers.clear()
        self._procs.clear()
