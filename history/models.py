"""SQLModel tables of the tuning history. Plugins never see these rows: the store
converts them to the frozen dataclasses of ``orchestrator``."""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from orchestrator.space import LEGACY_TEMPLATE

# Bump when a table changes, and add the step from the previous version to
# history.migrate; the store upgrades older databases in place and refuses newer ones.
SCHEMA_VERSION = 2


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class SchemaInfo(SQLModel, table=True):
    __tablename__ = "schema_info"
    id: int | None = Field(default=None, primary_key=True)
    version: int
    created_at: datetime = Field(default_factory=utcnow)
    tool_version: str = ""


class TargetRow(SQLModel, table=True):
    __tablename__ = "targets"
    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(index=True, max_length=16)
    key: str  # canonical TVM target JSON
    kind: str
    description: str  # TargetInfo as JSON
    created_at: datetime = Field(default_factory=utcnow)


class TaskRow(SQLModel, table=True):
    __tablename__ = "tasks"
    id: int | None = Field(default=None, primary_key=True)
    key_hash: str = Field(index=True, max_length=16)
    key: str  # canonical op/shape/dtype/layout JSON
    op: str = Field(index=True)
    shape: str  # JSON object of shape parameters
    dtype: str
    layout: str
    name: str | None = None
    flops: int
    created_at: datetime = Field(default_factory=utcnow)


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    id: int | None = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="tasks.id", index=True)
    target_id: int = Field(foreign_key="targets.id", index=True)
    resume_hash: str = Field(index=True, max_length=16)
    resume_key: str
    searcher: str
    measurer: str
    space_generator: str
    pruners: str  # JSON list
    cost_model: str | None = None
    seed: int
    max_trials: int
    max_seconds: float | None = None
    space_size: int = 0
    status: str = "running"  # running, finished, interrupted, failed
    stop_reason: str = ""
    reused: int = 0  # trials answered from history without measuring
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    tool_version: str = ""
    tvm_version: str = ""


class ConfigRow(SQLModel, table=True):
    __tablename__ = "configs"
    __table_args__ = (Index("ix_configs_task_hash", "task_id", "key_hash"),)
    id: int | None = Field(default=None, primary_key=True)
    task_id: int = Field(foreign_key="tasks.id")
    key_hash: str = Field(max_length=16)
    key: str  # canonical config JSON


class MeasurementRow(SQLModel, table=True):
    __tablename__ = "measurements"
    __table_args__ = (Index("ix_measurements_task_target", "task_id", "target_id", "status"),)
    id: int | None = Field(default=None, primary_key=True)
    run_id: int | None = Field(default=None, foreign_key="runs.id", index=True)
    task_id: int = Field(foreign_key="tasks.id")
    target_id: int = Field(foreign_key="targets.id")
    config_id: int = Field(foreign_key="configs.id", index=True)
    status: str
    latency: float | None = None  # median seconds; None unless status is ok
    latencies: str = "[]"  # JSON list of every sample, seconds
    build_seconds: float = 0.0
    run_seconds: float = 0.0
    error: str = ""
    measurer: str = ""
    # The space generator and its schedule version that built it ("cpu@1"); only
    # measurements of the same template stand in for one another.
    template: str = LEGACY_TEMPLATE
    created_at: datetime = Field(default_factory=utcnow)
    tool_version: str = ""
    tvm_version: str = ""


class PlanRow(SQLModel, table=True):
    """A model-level plan (fusion blocks and cores per block) and its predicted speed."""

    __tablename__ = "plans"
    id: int | None = Field(default=None, primary_key=True)
    model: str = Field(index=True)
    model_source: str = ""
    accelerator: str  # accelerator description as JSON
    simulated: bool = True
    strategy: str
    plan: str  # the plan and its per-block results as JSON
    latency: float
    fps: float
    created_at: datetime = Field(default_factory=utcnow)
    tool_version: str = ""
