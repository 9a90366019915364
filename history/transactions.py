"""Transactions that hold schema changes (DDL) and look-ups before inserts, on every
backend, when several processes write one history."""

from __future__ import annotations

import zlib

from sqlalchemy import Connection, text


def begin_writing(conn: Connection, lock: str = "") -> None:
    """Call first in an ``engine.begin()`` block that changes the schema, or that looks
    a row up and inserts it when absent. pysqlite begins a transaction only before
    INSERT, UPDATE or DELETE, so on SQLite a CREATE or ALTER would commit on its own,
    whatever happens after it, and a look-up would see no lock; this begins the
    transaction at once and takes the write lock, so that the block commits whole or not
    at all and writers wait for each other. On PostgreSQL (transactional DDL) a ``lock``
    name takes a transaction-scoped advisory lock of that name: blocks holding the same
    name run one at a time, across processes."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif lock and conn.dialect.name == "postgresql":
        key = zlib.crc32(f"orchestrator:{lock}".encode())
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
