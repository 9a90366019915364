"""The history store: opens the database, checks its schema, and reads and writes rows.

Every write commits before returning, so a killed process loses nothing it recorded.
Callers get frozen dataclasses, never ORM rows or sessions.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from sqlalchemy import Row, event, func, insert, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlmodel import Session, SQLModel, create_engine, select

from history.migrate import can_upgrade, upgrade
from history.models import (
    SCHEMA_VERSION,
    ConfigRow,
    MeasurementRow,
    PlanRow,
    RunRow,
    SchemaInfo,
    TargetRow,
    TaskRow,
    utcnow,
)
from history.transactions import begin_writing
from orchestrator.errors import HistoryError, SchemaVersionError
from orchestrator.jsonkey import key_hash
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import LEGACY_TEMPLATE, Config
from orchestrator.target import TargetInfo
from orchestrator.task import Task

DEFAULT_DB = "tuning-history.db"
DB_ENV = "ORCHESTRATOR_DB"


def _pkg_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


TOOL_VERSION = _pkg_version("tuning-orchestrator") or "source"
TVM_VERSION = _pkg_version("apache-tvm")


def database_url(db: str | os.PathLike[str] | None) -> str:
    """A SQLAlchemy URL from ``--db``: a URL as is, a plain path as a SQLite file."""
    text = str(db) if db else os.environ.get(DB_ENV) or DEFAULT_DB
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser()}"


@dataclass(frozen=True)
class RunView:
    """A tuning run as history knows it."""

    id: int
    task: Task
    target_key: str
    searcher: str
    measurer: str
    space_generator: str
    pruners: tuple[str, ...]
    cost_model: str | None
    seed: int
    max_trials: int
    status: str
    stop_reason: str
    measured: int
    reused: int
    best_latency: float | None
    started_at: str
    finished_at: str | None

    @property
    def trials(self) -> int:
        return self.measured + self.reused


@dataclass(frozen=True)
class Record:
    """One stored measurement with the task and target it belongs to."""

    id: int
    run_id: int | None
    task: Task
    target_key: str
    result: MeasureResult
    created_at: str
    tool_version: str = ""
    tvm_version: str = ""
    template: str = LEGACY_TEMPLATE


@dataclass(frozen=True)
class Provenance:
    """When a measurement was made, with which versions of this tool and TVM ('' when
    not known) and by which template (``Space.template``), as an import keeps them
    rather than stamping its own."""

    created_at: datetime
    tool_version: str = ""
    tvm_version: str = ""
    template: str = LEGACY_TEMPLATE


@dataclass(frozen=True)
class ImportGroup:
    """Measurements of one task on one target read from a file, with their provenance."""

    task_id: int
    target_id: int
    measurements: tuple[tuple[MeasureResult, Provenance], ...]


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=30000")
    _set_wal(cur)
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _row_id(conn: Any, table: Any, hashed: str, key: str) -> int | None:
    """The id of ``table``'s row (tasks, targets) of ``key``, found by its hash; equal
    hashes are not enough, the keys are compared."""
    for row_id, row_key in conn.execute(select(table.id, table.key)
                                        .where(table.key_hash == hashed)):
        if row_key == key:
            return int(row_id)
    return None


def _set_wal(cur: Any, tries: int = 100) -> None:
    """WAL mode. Switching a new file to it answers "database is locked" at once, without
    waiting, while another process opening the same file holds it: try again a while."""
    for attempt in range(tries):
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == tries - 1:
                raise
            time.sleep(0.05)


# What _to_result reads of a measurement, with its config's key: the columns of the
# queries that return results only (plain columns, not ORM objects).
_RESULT_COLUMNS = (ConfigRow.key, MeasurementRow.status, MeasurementRow.latencies,
                   MeasurementRow.build_seconds, MeasurementRow.run_seconds,
                   MeasurementRow.error, MeasurementRow.measurer)


class HistoryStore:
    """The tuning-history database (SQLite by default, any SQLAlchemy URL otherwise)."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url

    # -- opening -------------------------------------------------------------------
    @classmethod
    def open(cls, db: str | os.PathLike[str] | None = None, *, create: bool = True) -> HistoryStore:
        """Open (and create, if empty) the database; refuse another schema version."""
        url = database_url(db)
        try:
            if url.startswith("sqlite"):
                path = url.split("///", 1)[-1]
                if path and path != ":memory:" and not create and not Path(path).exists():
                    raise HistoryError(f"no history database at {path}; tune something first or pass --db")
                if path and path != ":memory:":
                    parent = Path(path).expanduser().parent
                    if not parent.is_dir():
                        raise HistoryError(f"cannot create history database {path}: "
                                           f"directory {parent} does not exist")
                engine = create_engine(url, connect_args={"timeout": 30})
                event.listen(engine, "connect", _sqlite_pragmas)
            else:
                engine = create_engine(url, pool_pre_ping=True)
            store = cls(engine, url)
            store._check_schema(create)
        except HistoryError:
            raise
        except (ArgumentError, NoSuchModuleError, ImportError, ValueError) as exc:
            if isinstance(exc, ImportError) and str(url).startswith("postgresql"):
                raise HistoryError(f"cannot use database URL {url!r}: {_one_line(exc)}; "
                                   "install the PostgreSQL driver with pip install "
                                   "'tuning-orchestrator[postgres]'") from None
            raise HistoryError(f"cannot use database URL {url!r}: {_one_line(exc)}; "
                               "pass a file path or a URL such as sqlite:///tuning.db") from None
        except (DBAPIError, SQLAlchemyError) as exc:
            hint = ("if the file is damaged, move it aside and pass another --db"
                    if url.startswith("sqlite") else
                    "check that the server is running and the URL, user and database are right")
            raise HistoryError(f"cannot open history database {url}: {_one_line(exc)}; "
                               f"{hint}") from None
        return store

    def _check_schema(self, create: bool) -> None:
        tables = set(inspect(self.engine).get_table_names())
        if "schema_info" not in tables:
            if tables - {"sqlite_sequence"}:
                raise HistoryError(f"{self.url} is not an orchestrator history database "
                                   f"(it has tables {', '.join(sorted(tables)[:5])}); pass another --db")
            if not create:
                raise HistoryError(f"{self.url} holds no tuning history yet")
            # One transaction: a crash here leaves either no tables or a complete schema.
            try:
                with self.engine.begin() as conn:
                    begin_writing(conn)  # the schema commits whole; creators wait in turn
                    SQLModel.metadata.create_all(conn)  # the tables no one made meanwhile
                    # Another command may have committed the schema, with its version,
                    # while this one waited: then that version is checked below.
                    made_here = not conn.execute(
                        select(func.count()).select_from(SchemaInfo)).scalar_one()
                    if made_here:
                        conn.execute(insert(SchemaInfo).values(
                            version=SCHEMA_VERSION, created_at=utcnow(),
                            tool_version=TOOL_VERSION))
                if made_here:
                    return
            except DBAPIError:
                # Two commands started on a new database at once: the one that lost the
                # race finds the schema the other committed, and checks it as any.
                if "schema_info" not in inspect(self.engine).get_table_names():
                    raise
        with Session(self.engine) as s:
            info = s.exec(select(SchemaInfo)).first()
        found = info.version if info else None
        if found is not None and can_upgrade(found):
            upgrade(self.engine, self.url, found)
            return
        if found != SCHEMA_VERSION:
            if found is not None and found > SCHEMA_VERSION:
                hint = "upgrade tuning-orchestrator to read it"
            else:
                hint = "export it with the version that wrote it and import it here"
            raise SchemaVersionError(
                f"history database {self.url} has schema version {found}, this orchestrator "
                f"uses {SCHEMA_VERSION}; {hint}, or pass another --db"
            )

    def close(self) -> None:
        self.engine.dispose()

    # -- targets and tasks ---------------------------------------------------------
    def ensure_target(self, target: TargetInfo) -> int:
        found = self.find_target(target)
        if found is not None:
            return found
        return self._insert_once(TargetRow, target.key_hash, target.key, {
            "kind": target.kind, "description": json.dumps(target.to_dict())})

    def ensure_task(self, task: Task) -> int:
        found = self.find_task(task)
        if found is not None:
            return found
        return self._insert_once(TaskRow, task.key_hash, task.key, {
            "op": task.op, "shape": json.dumps(task.params), "dtype": task.dtype,
            "layout": task.layout, "name": task.name, "flops": task.flops})

    def _insert_once(self, table: Any, hashed: str, key: str, fields: dict[str, Any]) -> int:
        """The id of ``table``'s row of ``key``, inserted unless another process inserted
        it meanwhile: two commands starting on a new task at once must not make two rows
        of it (later queries find the first, and the other's measurements would be lost
        to them)."""
        with self.engine.begin() as conn:
            begin_writing(conn, lock=table.__tablename__)
            found = _row_id(conn, table, hashed, key)
            if found is not None:
                return found
            made = conn.execute(insert(table).values(key_hash=hashed, key=key, **fields))
            return int(made.inserted_primary_key[0])

    def find_task(self, task: Task) -> int | None:
        with self.engine.connect() as conn:
            return _row_id(conn, TaskRow, task.key_hash, task.key)

    def find_target(self, target: TargetInfo) -> int | None:
        with self.engine.connect() as conn:
            return _row_id(conn, TargetRow, target.key_hash, target.key)

    # -- runs ------------------------------------------------------------------------
    def start_run(self, *, task_id: int, target_id: int, resume_key: str, searcher: str,
                  measurer: str, space_generator: str, pruners: Sequence[str],
                  cost_model: str | None, seed: int, max_trials: int,
                  max_seconds: float | None, space_size: int) -> int:
        with Session(self.engine) as s:
            row = _run_row(task_id=task_id, target_id=target_id, resume_key=resume_key,
                           searcher=searcher, measurer=measurer,
                           space_generator=space_generator, pruners=pruners,
                           cost_model=cost_model, seed=seed, max_trials=max_trials,
                           max_seconds=max_seconds, space_size=space_size)
            s.add(row)
            s.commit()
            return int(row.id)  # type: ignore[arg-type]

    def find_run(self, resume_key: str, *, status: str | None = None) -> int | None:
        """The newest run started with the same settings (any status, or only ``status``),
        if any: a rerun of the same command continues it instead of starting over."""
        stmt = (select(RunRow)
                .where(RunRow.resume_hash == key_hash(resume_key))
                .order_by(RunRow.id.desc()))  # type: ignore[union-attr]
        with Session(self.engine) as s:
            for row in s.exec(stmt):
                if row.resume_key == resume_key and status in (None, row.status):
                    return int(row.id)  # type: ignore[arg-type]
        return None

    def update_run(self, run_id: int, **fields: Any) -> None:
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise HistoryError(f"run {run_id} does not exist")
            for k, v in fields.items():
                setattr(row, k, v)
            if fields.get("status") in ("finished", "interrupted", "failed"):
                row.finished_at = utcnow()
            s.add(row)
            s.commit()

    def add_reused(self, run_id: int, count: int) -> None:
        if count:
            with Session(self.engine) as s:
                row = s.get(RunRow, run_id)
                row.reused += count  # type: ignore[union-attr]
                s.add(row)
                s.commit()

    def run_state(self, run_id: int) -> tuple[str | None, int]:
        """The run's status ("running", "finished", "interrupted", "failed") and how many
        of its trials were answered from history, read from its row once; (None, 0) if
        there is no such run."""
        with Session(self.engine) as s:
            row = s.get(RunRow, run_id)
            return (row.status, row.reused) if row else (None, 0)

    # -- measurements ----------------------------------------------------------------
    def _config_ids(self, s: Session, task_id: int, configs: Sequence[Config]) -> list[int]:
        """Row ids of ``configs`` for a task, inserting the new ones (bulk, one round trip
        each). Its callers begin with ``begin_writing(..., lock="configs")``, so that two
        processes recording the same new config do not both insert it."""
        keys = [c.key for c in configs]
        hashes = {key_hash(k) for k in keys}
        found: dict[str, int] = {}

        def load() -> None:
            for chunk in _chunks(sorted(hashes), 500):
                rows = s.exec(select(ConfigRow.id, ConfigRow.key).where(
                    ConfigRow.task_id == task_id, ConfigRow.key_hash.in_(chunk)))  # type: ignore[attr-defined]
                found.update((k, int(i)) for i, k in rows if k in wanted)  # type: ignore[arg-type]

        wanted = set(keys)
        load()
        missing = sorted(wanted - found.keys())
        if missing:
            s.execute(insert(ConfigRow), [{"task_id": task_id, "key_hash": key_hash(k), "key": k}
                                          for k in missing])
            load()
        return [found[k] for k in keys]

    def record(self, *, run_id: int | None, task_id: int, target_id: int,
               results: Iterable[MeasureResult], template: str = LEGACY_TEMPLATE) -> int:
        """Store results of ``template`` (the ``Space.template`` that built them) in one
        transaction and commit; returns how many were stored."""
        results = list(results)
        if not results:
            return 0
        made = Provenance(utcnow(), TOOL_VERSION, TVM_VERSION, template)
        with Session(self.engine) as s:
            begin_writing(s.connection(), lock="configs")  # see _config_ids
            self._insert_measurements(s, run_id, task_id, target_id,
                                      [(r, made) for r in results])
            s.commit()
        return len(results)

    def _insert_measurements(self, s: Session, run_id: int | None, task_id: int,
                             target_id: int,
                             measurements: Sequence[tuple[MeasureResult, Provenance]]) -> None:
        """Insert measurement rows (and their new configs) in ``s``, not committed."""
        config_ids = self._config_ids(s, task_id, [r.config for r, _ in measurements])
        s.execute(insert(MeasurementRow), [{
            "run_id": run_id, "task_id": task_id, "target_id": target_id,
            "config_id": cid, "status": r.status.value,
            "latency": r.latency if r.ok else None,
            "latencies": json.dumps(list(r.latencies)), "build_seconds": r.build_seconds,
            "run_seconds": r.run_seconds, "error": r.error[:4000], "measurer": r.measurer,
            "created_at": made.created_at, "tool_version": made.tool_version,
            "tvm_version": made.tvm_version, "template": made.template,
        } for (r, made), cid in zip(measurements, config_ids)])

    def record_import(self, groups: Sequence[ImportGroup], source: str) -> list[int]:
        """Store imported measurements in one transaction: each group under a new finished
        run (searcher ``import``, its stop reason naming ``source``), every measurement with
        its own provenance. Returns the new runs' ids; nothing is written if any part fails."""
        run_ids = []
        now = utcnow()
        with Session(self.engine) as s:
            begin_writing(s.connection(), lock="configs")  # see _config_ids
            for g in groups:
                if not g.measurements:
                    continue
                resume_key = json.dumps({"import": source, "task_id": g.task_id,
                                         "target_id": g.target_id, "at": now.isoformat()})
                run = _run_row(task_id=g.task_id, target_id=g.target_id, resume_key=resume_key,
                               searcher="import", measurer="import", space_generator="",
                               pruners=(), cost_model=None, seed=0,
                               max_trials=len(g.measurements), max_seconds=None, space_size=0,
                               status="finished", stop_reason=f"imported from {source}",
                               started_at=now, finished_at=now)
                s.add(run)
                s.flush()
                self._insert_measurements(s, run.id, g.task_id, g.target_id, g.measurements)
                run_ids.append(int(run.id))  # type: ignore[arg-type]
            s.commit()
        return run_ids

    def record_finished_run(self, *, task_id: int, target_id: int, resume_key: str,
                            searcher: str, measurer: str, space_generator: str,
                            pruners: Sequence[str], seed: int, max_trials: int,
                            space_size: int, stop_reason: str,
                            results: Sequence[MeasureResult],
                            template: str = LEGACY_TEMPLATE) -> int:
        """Store a run measured all at once (a run-off, a remeasure) as one finished run
        with its measurements (built by ``template``), in one transaction: a finished run
        of its key is whole, and an interrupted one leaves nothing. Returns the run's id."""
        now = utcnow()
        made = Provenance(now, TOOL_VERSION, TVM_VERSION, template)
        with Session(self.engine) as s:
            begin_writing(s.connection(), lock="configs")  # see _config_ids
            run = _run_row(task_id=task_id, target_id=target_id, resume_key=resume_key,
                           searcher=searcher, measurer=measurer,
                           space_generator=space_generator, pruners=pruners, cost_model=None,
                           seed=seed, max_trials=max_trials, max_seconds=None,
                           space_size=space_size, status="finished", stop_reason=stop_reason,
                           started_at=now, finished_at=now)
            s.add(run)
            s.flush()
            self._insert_measurements(s, run.id, task_id, target_id,
                                      [(r, made) for r in results])
            s.commit()
            return int(run.id)  # type: ignore[arg-type]

    def results(self, task_id: int, target_id: int | None, *, run_id: int | None = None,
                ok_only: bool = False,
                templates: Sequence[str] | None = None) -> list[MeasureResult]:
        """Stored results of a task on a target (on any, for None), oldest first (one
        run's, if given; only those built by one of ``templates``, if given)."""
        # Plain columns, not ORM objects: a searcher's start reads every earlier task's
        # results, and the loop's start this task's.
        m = MeasurementRow
        stmt = (select(*_RESULT_COLUMNS)  # type: ignore[call-overload]
                .join(ConfigRow, ConfigRow.id == m.config_id)
                .where(m.task_id == task_id))
        if target_id is not None:
            stmt = stmt.where(m.target_id == target_id)
        if run_id is not None:
            stmt = stmt.where(m.run_id == run_id)
        if ok_only:
            stmt = stmt.where(m.status == MeasureStatus.OK.value)
        if templates is not None:
            stmt = stmt.where(m.template.in_(list(templates)))  # type: ignore[attr-defined]
        stmt = stmt.order_by(m.id)
        with Session(self.engine) as s:
            return [_to_result(row, row.key) for row in s.exec(stmt)]

    def fastest(self, task_id: int, target_id: int | None = None, *, offset: int = 0,
                limit: int | None = None) -> list[MeasureResult]:
        """A task's configs at their fastest ok timing (on one target, or on any), fastest
        first, each config once (equal timings: the first recorded); ``offset`` and
        ``limit`` page through them."""
        m = MeasurementRow
        # an ok row without timings has no latency (MeasureResult.ok is false for it)
        where = [m.task_id == task_id, m.status == MeasureStatus.OK.value,
                 m.latency.is_not(None)]  # type: ignore[union-attr]
        if target_id is not None:
            where.append(m.target_id == target_id)
        ranked = (select(m.id, m.config_id, m.latency,  # type: ignore[call-overload]
                         func.row_number().over(partition_by=m.config_id,
                                                order_by=(m.latency, m.id)).label("nth"))
                  .where(*where).subquery())
        stmt = (select(*_RESULT_COLUMNS)  # type: ignore[call-overload]
                .join(ranked, ranked.c.id == m.id)
                .join(ConfigRow, ConfigRow.id == m.config_id)
                .where(ranked.c.nth == 1)
                .order_by(ranked.c.latency, ranked.c.id).offset(offset))
        if limit is not None:
            stmt = stmt.limit(limit)
        with Session(self.engine) as s:
            return [_to_result(row, row.key) for row in s.exec(stmt)]

    def best(self, task_id: int, target_id: int | None = None, k: int = 5,
             templates: Sequence[str] | None = None) -> list[Record]:
        """The ``k`` fastest configs of a task (on one target, or on any), fastest first:
        each config once per target, at its fastest ok timing (a config timed again, as
        ``--confirm`` does, is not listed twice); only timings built by one of
        ``templates``, if given."""
        m = MeasurementRow
        where = [m.task_id == task_id, m.status == MeasureStatus.OK.value]
        if target_id is not None:
            where.append(m.target_id == target_id)
        if templates is not None:
            where.append(m.template.in_(list(templates)))  # type: ignore[attr-defined]
        fastest = (select(m.config_id, m.target_id, func.min(m.latency).label("latency"))
                   .where(*where).group_by(m.config_id, m.target_id)
                   .order_by(func.min(m.latency)).limit(k).subquery())
        stmt = (select(m, ConfigRow.key, TaskRow, TargetRow.key)
                .join(fastest, (fastest.c.config_id == m.config_id)
                      & (fastest.c.target_id == m.target_id)
                      & (fastest.c.latency == m.latency))
                .join(ConfigRow, ConfigRow.id == m.config_id)
                .join(TaskRow, TaskRow.id == m.task_id)
                .join(TargetRow, TargetRow.id == m.target_id)
                .where(*where).order_by(m.latency, m.id))  # type: ignore[arg-type]
        out: dict[tuple[int, int], Record] = {}  # equal fastest timings: the first one
        with Session(self.engine) as s:
            for row, ck, t, tk in s.exec(stmt):
                out.setdefault((row.config_id, row.target_id), _to_record(row, ck, t, tk))
        return list(out.values())

    def records(self, *, where: Sequence[Any] = (), limit: int | None = None) -> list[Record]:
        """Every measurement matching SQLAlchemy expressions on the models, oldest first."""
        # Plain columns, not ORM objects: searchers load thousands of records at a start.
        # The labels let _to_task and _to_result read a row as they read the models.
        m = MeasurementRow
        stmt = (select(m.id, m.run_id, m.status, m.latencies, m.build_seconds,  # type: ignore[call-overload]
                       m.run_seconds, m.error, m.measurer, m.created_at, m.tool_version,
                       m.tvm_version, m.template, ConfigRow.key.label("config_key"),
                       TaskRow.id.label("task_id"),
                       TaskRow.op, TaskRow.shape, TaskRow.dtype, TaskRow.name,
                       TargetRow.key.label("target_key"))
                .join(ConfigRow, ConfigRow.id == m.config_id)
                .join(TaskRow, TaskRow.id == m.task_id)
                .join(TargetRow, TargetRow.id == m.target_id)
                .where(*where).order_by(m.id))
        if limit is not None:
            stmt = stmt.limit(limit)
        tasks: dict[int, Task] = {}  # rows share a few tasks: build (and validate) each once
        out = []
        with Session(self.engine) as s:
            for row in s.exec(stmt):
                task = tasks.get(row.task_id)
                if task is None:
                    task = tasks[row.task_id] = _to_task(row)
                out.append(Record(int(row.id), row.run_id, task, row.target_key,
                                  _to_result(row, row.config_key), row.created_at.isoformat(),
                                  row.tool_version, row.tvm_version, row.template))
        return out

    def runs(self, *, where: Sequence[Any] = (), limit: int = 50) -> list[RunView]:
        """Runs, newest first, with their measured count and best latency."""
        measured = (select(MeasurementRow.run_id, func.count().label("n"),
                           func.min(MeasurementRow.latency).label("best"))
                    .group_by(MeasurementRow.run_id).subquery())
        stmt = (select(RunRow, TaskRow, TargetRow.key, measured.c.n, measured.c.best)
                .join(TaskRow, TaskRow.id == RunRow.task_id)
                .join(TargetRow, TargetRow.id == RunRow.target_id)
                .outerjoin(measured, measured.c.run_id == RunRow.id)
                .where(*where).order_by(RunRow.id.desc()).limit(limit))  # type: ignore[union-attr]
        with Session(self.engine) as s:
            return [_to_run(r, t, tk, n or 0, best) for r, t, tk, n, best in s.exec(stmt)]

    def tasks(self) -> list[tuple[int, Task]]:
        with Session(self.engine) as s:
            return [(int(t.id), _to_task(t)) for t in s.exec(select(TaskRow))]  # type: ignore[arg-type]

    def record_plan(self, *, model: str, model_source: str, accelerator: dict[str, Any],
                    simulated: bool, strategy: str, plan: dict[str, Any], latency: float,
                    fps: float) -> int:
        """Store one model-level plan and commit; returns its id."""
        with Session(self.engine) as s:
            row = PlanRow(model=model, model_source=model_source,
                          accelerator=json.dumps(accelerator, sort_keys=True), simulated=simulated,
                          strategy=strategy, plan=json.dumps(plan), latency=latency, fps=fps,
                          tool_version=TOOL_VERSION)
            s.add(row)
            s.commit()
            return int(row.id)  # type: ignore[arg-type]

    def plans(self, model: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Stored plans, newest first, as plain dictionaries."""
        stmt = select(PlanRow).order_by(PlanRow.id.desc()).limit(limit)  # type: ignore[union-attr]
        if model is not None:
            stmt = stmt.where(PlanRow.model == model)
        with Session(self.engine) as s:
            return [{"id": r.id, "model": r.model, "strategy": r.strategy, "fps": r.fps,
                     "latency": r.latency, "simulated": r.simulated,
                     "created_at": r.created_at.isoformat(timespec="seconds"),
                     "plan": json.loads(r.plan)} for r in s.exec(stmt)]

    def reader(self) -> StoreReader:
        """A read-only view for plugins (frozen data, no sessions)."""
        return StoreReader(self)

    def count(self) -> int:
        with Session(self.engine) as s:
            return int(s.exec(select(func.count()).select_from(MeasurementRow)).one())


def _run_row(*, resume_key: str, pruners: Sequence[str], **fields: Any) -> RunRow:
    """A new run's row, stamped with this tool's and TVM's versions."""
    return RunRow(resume_hash=key_hash(resume_key), resume_key=resume_key,
                  pruners=json.dumps(list(pruners)), tool_version=TOOL_VERSION,
                  tvm_version=TVM_VERSION, **fields)


def _chunks(items: list[str], n: int) -> Iterator[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _one_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _to_task(t: TaskRow | Row[Any]) -> Task:
    """The task of a TaskRow, or of a row with its op, shape, dtype and name columns."""
    return Task.from_dict({"op": t.op, "shape": json.loads(t.shape), "dtype": t.dtype,
                           "name": t.name})


def _to_result(m: MeasurementRow | Row[Any], config_key: str) -> MeasureResult:
    """The result of a MeasurementRow, or of a row with its columns of the same names."""
    return MeasureResult(config=Config.from_key(config_key),
                         status=MeasureStatus(m.status),
                         latencies=tuple(json.loads(m.latencies)),
                         build_seconds=m.build_seconds, run_seconds=m.run_seconds,
                         error=m.error, measurer=m.measurer)


def _to_record(m: MeasurementRow, config_key: str, t: TaskRow, target_key: str) -> Record:
    return Record(int(m.id), m.run_id, _to_task(t), target_key,  # type: ignore[arg-type]
                  _to_result(m, config_key), m.created_at.isoformat(), m.tool_version,
                  m.tvm_version, m.template)


def _to_run(r: RunRow, t: TaskRow, target_key: str, n: int, best: float | None) -> RunView:
    return RunView(int(r.id), _to_task(t), target_key, r.searcher, r.measurer,  # type: ignore[arg-type]
                   r.space_generator, tuple(json.loads(r.pruners)), r.cost_model, r.seed,
                   r.max_trials, r.status, r.stop_reason, n, r.reused, best,
                   r.started_at.isoformat(timespec="seconds"),
                   r.finished_at.isoformat(timespec="seconds") if r.finished_at else None)


class StoreReader:
    """The :class:`orchestrator.components.HistoryReader` of a store."""

    def __init__(self, store: HistoryStore) -> None:
        self._store = store

    def tasks(self, op: str | None = None) -> list[Task]:
        return [t for _, t in self._store.tasks() if op is None or t.op == op]

    def _ids(self, task: Task, target: TargetInfo | None) -> tuple[int, int | None] | None:
        """The task's id and the target's (None for any target); None when either is
        not in the store."""
        task_id = self._store.find_task(task)
        target_id = None if target is None else self._store.find_target(target)
        if task_id is None or (target is not None and target_id is None):
            return None
        return task_id, target_id

    def results(self, task: Task, target: TargetInfo | None = None,
                ok_only: bool = True) -> list[MeasureResult]:
        ids = self._ids(task, target)
        return [] if ids is None else self._store.results(*ids, ok_only=ok_only)

    def fastest(self, task: Task, target: TargetInfo | None = None,
                page: int = 32) -> Iterator[MeasureResult]:
        """A task's configs at their fastest ok timing, fastest first, each config once,
        read from the database a page at a time (pages double) as they are consumed. A
        result recorded for the task while it reads may shift the pages: a config is then
        given once all the same, and one may be missed."""
        ids = self._ids(task, target)
        if ids is None:
            return
        offset = 0
        given: set[str] = set()
        while True:
            rows = self._store.fastest(*ids, offset=offset, limit=page)
            for r in rows:
                if r.config.key not in given:
                    given.add(r.config.key)
                    yield r
            if len(rows) < page:
                return
            offset, page = offset + page, page * 2
