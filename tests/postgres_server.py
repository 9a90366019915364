"""A throwaway PostgreSQL server for the tests: a new cluster in a temporary directory,
reachable only through a Unix socket there (nothing listens on the network), stopped and
removed at the end. Started where ``initdb`` and ``pg_ctl`` are on PATH and psycopg is
installed; as root it runs as ``nobody``, since PostgreSQL refuses to run as root."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PORT = 55433
USER = "orchestrator"


def unavailable() -> str:
    """Why no server can be started here ('' when one can)."""
    missing = [tool for tool in ("initdb", "pg_ctl") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not on PATH"
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return ""


def _as_server_user(args: list[str]) -> list[str]:
    return ["runuser", "-u", "nobody", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def throwaway_server() -> Iterator[str]:
    """Start a server and yield a SQLAlchemy URL of its ``postgres`` database."""
    root = Path(tempfile.mkdtemp(prefix="orchestrator-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "nobody")
    data, log = root / "data", root / "server.log"
    run = dict(check=True, capture_output=True, text=True, timeout=120)
    try:
        subprocess.run(_as_server_user(["initdb", "-D", str(data), "-A", "trust", "-U", USER,
                                        "--no-instructions"]), **run)
        subprocess.run(_as_server_user(
            ["pg_ctl", "-D", str(data), "-l", str(log), "-w", "-o",
             f"-k {root} -c listen_addresses='' -p {PORT}", "start"]), **run)
        try:
            yield f"postgresql+psycopg://{USER}@/postgres?host={root}&port={PORT}"
        finally:
            subprocess.run(_as_server_user(["pg_ctl", "-D", str(data), "-m", "immediate",
                                            "stop"]), capture_output=True, timeout=120)
    finally:
        shutil.rmtree(root, ignore_errors=True)
