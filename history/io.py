"""Export and import of history as JSON lines or CSV (never pickle)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from history.models import MeasurementRow
from history.store import HistoryStore, ImportGroup, Provenance, Record
from orchestrator.errors import HistoryError, OrchestratorError
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import LEGACY_TEMPLATE, Config
from orchestrator.target import TargetInfo, freeze_tvm_json
from orchestrator.task import Task

CSV_FIELDS = ("task", "target", "config", "status", "latency", "latencies", "build_seconds",
              "run_seconds", "error", "measurer", "created_at", "run_id", "tool_version",
              "tvm_version", "template")


def record_to_dict(rec: Record) -> dict[str, Any]:
    r = rec.result
    return {
        "task": rec.task.to_dict(), "target": json.loads(rec.target_key),
        "config": r.config.to_dict(), "status": r.status.value,
        "latency": r.latency if r.ok else None, "latencies": list(r.latencies),
        "build_seconds": r.build_seconds, "run_seconds": r.run_seconds, "error": r.error,
        "measurer": r.measurer, "created_at": rec.created_at, "run_id": rec.run_id,
        "tool_version": rec.tool_version, "tvm_version": rec.tvm_version,
        "template": rec.template,
    }


def export_records(store: HistoryStore, path: Path, fmt: str, where: list[Any]) -> int:
    records = store.records(where=where)
    with open(path, "w", newline="") as f:
        if fmt == "jsonl":
            for rec in records:
                f.write(json.dumps(record_to_dict(rec)) + "\n")
        else:
            w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
            w.writeheader()
            for rec in records:
                row = record_to_dict(rec)
                for k in ("task", "target", "config", "latencies"):
                    row[k] = json.dumps(row[k])
                w.writerow(row)
    return len(records)


def _rows(path: Path, fmt: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, newline="") as f:
        if fmt == "jsonl":
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        yield n, json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise HistoryError(f"{path}:{n}: not JSON ({exc.msg})") from None
        else:
            for n, row in enumerate(csv.DictReader(f), 2):
                try:
                    for k in ("task", "target", "config", "latencies"):
                        row[k] = json.loads(row[k])
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise HistoryError(f"{path}:{n}: bad CSV row ({exc})") from None
                yield n, row


_Signature = tuple[str, str, str, str]


def _signature(result: MeasureResult, template: str) -> _Signature:
    """What makes a measurement a duplicate of a stored one: the same config, status,
    timings and template. A failure has no timings, so without the template and status
    the same config failing under two templates (or in two ways) would count as one."""
    return (result.config.key, result.status.value, json.dumps(list(result.latencies)),
            template)


def import_records(store: HistoryStore, path: Path, fmt: str) -> tuple[int, int]:
    """Validate the whole file first, then store its measurements and runs in one
    transaction (the tasks and targets they name may be added first); returns (imported,
    skipped duplicates). Each measurement keeps the time it was made, the tool and TVM
    versions and the template that made it, as the file gives them ('' where an older
    export has none);
    the measurements of each task and target go under one new run, searcher ``import``."""
    parsed: list[tuple[Task, dict[str, Any], MeasureResult, Provenance]] = []
    imported_at = datetime.now(timezone.utc)
    try:
        for n, row in _rows(path, fmt):
            try:
                task = Task.from_dict(row["task"])
                result = MeasureResult(
                    Config.of(row["config"]), MeasureStatus(row["status"]),
                    tuple(float(x) for x in row.get("latencies") or ()),
                    float(row.get("build_seconds") or 0), float(row.get("run_seconds") or 0),
                    str(row.get("error") or ""), str(row.get("measurer") or "imported"))
                if not isinstance(row["target"], dict) or "kind" not in row["target"]:
                    raise ValueError("target must be a TVM target JSON object")
                made = Provenance(_when(row.get("created_at"), imported_at),
                                  str(row.get("tool_version") or ""),
                                  str(row.get("tvm_version") or ""),
                                  str(row.get("template") or LEGACY_TEMPLATE))
            except KeyError as exc:
                raise HistoryError(f"{path}:{n}: bad record (missing field {exc.args[0]!r}); "
                                   "nothing was imported") from None
            except (OrchestratorError, ValueError, TypeError) as exc:
                raise HistoryError(f"{path}:{n}: bad record ({type(exc).__name__}: {exc}); "
                                   "nothing was imported") from None
            parsed.append((task, row["target"], result, made))
    except OSError as exc:
        raise HistoryError(f"cannot read {path}: {exc.strerror or exc}") from None
    skipped = 0
    # Per (task, target): ids, the measurements already stored, and what to add.
    groups: dict[tuple[str, str], tuple[int, int, set[_Signature],
                                        list[tuple[MeasureResult, Provenance]]]] = {}
    for task, target_json, result, made in parsed:
        target = _target_stub(target_json)
        k = (task.key, target.key)
        if k not in groups:
            tid, gid = store.ensure_task(task), store.ensure_target(target)
            existing = {_signature(r.result, r.template)
                        for r in store.records(where=[MeasurementRow.task_id == tid,
                                                      MeasurementRow.target_id == gid])}
            groups[k] = (tid, gid, existing, [])
        _, _, existing, new = groups[k]
        sig = _signature(result, made.template)
        if sig in existing:
            skipped += 1
            continue
        existing.add(sig)
        new.append((result, made))
    store.record_import([ImportGroup(tid, gid, tuple(new)) for tid, gid, _, new in groups.values()],
                        source=path.name)
    return sum(len(new) for *_, new in groups.values()), skipped


def _when(text: Any, default: datetime) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a naive one is taken as UTC, as the
    store writes them); ``default`` where the file gives none."""
    if text is None or text == "":
        return default
    when = datetime.fromisoformat(str(text))
    return (when.replace(tzinfo=timezone.utc) if when.tzinfo is None
            else when.astimezone(timezone.utc))


def _target_stub(tvm_json: dict[str, Any]) -> TargetInfo:
    """A TargetInfo carrying just the TVM JSON (its key), for matching stored targets."""
    return TargetInfo(kind=str(tvm_json.get("kind", "")),
                      tvm=freeze_tvm_json(tvm_json),
                      cores=int(tvm_json.get("num-cores", 0) or 0), simd_bits=0, fma=False,
                      l1d_bytes=0, l2_bytes=0, l3_bytes=0, clock_ghz=0.0, peak_gflops=0.0,
                      arch=str(tvm_json.get("mcpu", "")))
