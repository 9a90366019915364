"""In-place upgrades of history databases written by older versions of the schema.

Each step adds what a newer schema needs and removes nothing, so a history survives
every upgrade whole. ``upgrade`` runs when the store opens a database of an older
version; each step commits together with the new version number, or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import Connection, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError

from history.models import SCHEMA_VERSION, SchemaInfo
from history.transactions import begin_writing
from orchestrator.errors import HistoryError

log = logging.getLogger(__name__)


def _add_measurement_template(conn: Connection) -> None:
    """1 -> 2: measurements record the template that built them; older ones get the
    legacy mark (the empty string), which the first version of every template accepts
    as its own."""
    # SQLAlchemy Core has no ADD COLUMN construct: fixed DDL text, nothing glued into it
    # (tests/history/test_migrate.py checks that the default is LEGACY_TEMPLATE).
    conn.execute(text("""ALTER TABLE measurements ADD COLUMN "template" VARCHAR NOT NULL
                         DEFAULT ''"""))


# from version -> the step to the next one
STEPS: dict[int, Callable[[Connection], None]] = {1: _add_measurement_template}


def _version(conn: Connection) -> int | None:
    row = conn.execute(select(SchemaInfo.version).order_by(SchemaInfo.id).limit(1)).first()
    return None if row is None else int(row[0])


def can_upgrade(found: int) -> bool:
    """Whether a step is known from schema ``found`` to each later one up to SCHEMA_VERSION
    (the store refuses the database, saying what to do, where one is not)."""
    return found < SCHEMA_VERSION and all(v in STEPS for v in range(found, SCHEMA_VERSION))


def upgrade(engine: Engine, url: str, found: int) -> None:
    """Bring a database of schema ``found`` up to date (``can_upgrade(found)`` holds), one
    step per transaction. Another process upgrading the same database at the same time
    is fine: a step that finds its work done moves on."""
    for v in range(found, SCHEMA_VERSION):
        try:
            with engine.begin() as conn:
                begin_writing(conn)  # the step's DDL commits with its version, or neither
                if (_version(conn) or 0) > v:
                    continue  # upgraded by another process meanwhile
                STEPS[v](conn)
                conn.execute(update(SchemaInfo).values(version=v + 1))
        except DBAPIError as exc:
            with engine.connect() as conn:
                if (_version(conn) or 0) > v:
                    continue
            raise HistoryError(f"cannot upgrade history database {url} from schema {v} to "
                               f"{v + 1}: {str(exc.orig).splitlines()[0]}; nothing was "
                               "changed, the database is as it was") from None
        log.warning("upgraded history database %s from schema %d to %d", url, v, v + 1)
