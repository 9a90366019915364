"""How every script in ``scripts/`` ends, as the ``orchestrator`` command does: an
``OrchestratorError`` (a database that is not a history database, a damaged file, an
unknown plugin) reaches the user as one ``error:`` line and its exit code (2), not a
traceback, and Ctrl-C as ``interrupted`` and 130. Nothing a script recorded before is
touched; the error says what to fix.

    if __name__ == "__main__":
        raise SystemExit(exit_status(main))
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.errors import OrchestratorError  # noqa: E402

INTERRUPTED = 130


def exit_status(main: Callable[..., int | None], argv: Sequence[str] | None = None) -> int:
    """``main(argv)``'s exit status (``main()``'s when ``argv`` is None); an
    ``OrchestratorError`` printed as one line on stderr gives its ``exit_code``."""
    try:
        status = main() if argv is None else main(list(argv))
    except OrchestratorError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    return int(status or 0)
