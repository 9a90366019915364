"""Equation 2: score = sum of coefficient x feature, with per-architecture coefficients.

Coefficients are cycles per unit of each feature, so a score is a cycle count along the
critical path and ``score / clock`` reads as a latency in seconds. Where they come
from, first found wins:

1. an explicit JSON file (the ``coefficients=`` option, or ``$ORCHESTRATOR_TUNA_COEFFICIENTS``);
2. the user's calibration, ``$XDG_CONFIG_HOME/orchestrator/tuna/<family>.json``
   (``~/.config/...``), written by ``orchestrator calibrate --cost-model tuna``;
3. the defaults shipped as package data (``plugins/tuna/data/<family>.json``), fitted
   on this project's calibration workloads;
4. the built-in prior below (rough cycles per event from the machine models).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from orchestrator.errors import OrchestratorError
from plugins.tuna.features import FEATURE_VERSION, Features, feature_names

FORMAT = "tuna-coefficients/1"
ENV_PATH = "ORCHESTRATOR_TUNA_COEFFICIENTS"
log = logging.getLogger(__name__)

# Cycles per event: an issue slot per instruction, what FMAs and vector loads/stores
# cost beyond it, scheduled cycles, and a line moved into L1 (from L2) or into L2 (from
# L3/DRAM). Instructions dominate: on the reference suite this prior alone ranks as well
# as any fit (docs/results/tuna-calibration.md), so fits are pulled strongly towards it.
_X86_PRIOR = {"instructions": 0.25, "fma": 0.125, "vload": 0.125, "vstore": 0.5,
              "ilp": 0.025, "l1": 0.5, "l2": 0.6}
PRIOR: dict[str, dict[str, float]] = {
    "znver4": _X86_PRIOR,
    "avx512": _X86_PRIOR,
    "avx2": _X86_PRIOR,
    "neon": {"instructions": 0.33, "fma": 0.17, "vload": 0.17, "vstore": 0.5,
             "ilp": 0.025, "l1": 0.75, "l2": 0.8},
    # NVIDIA (Volta and later), cycles per warp instruction per scheduler: 16 FP32 lanes
    # per scheduler (2 cycles per FMA), shared memory 32 banks (1 request per cycle),
    # global accesses through L1/L2 at a quarter of that, a barrier drains the pipeline.
    # A prior until `orchestrator calibrate --cost-model tuna` fits it on GPU history.
    "cuda": {"fma": 2.0, "ld_global": 8.0, "st_global": 8.0, "ld_shared": 2.0,
             "st_shared": 2.0, "bar": 20.0, "other": 1.0},
}


class StaleCoefficientsError(OrchestratorError):
    """A coefficients file fitted on another version of the features."""


@dataclass(frozen=True)
class Coefficients:
    """One architecture family's coefficients and where they came from."""

    family: str
    weights: tuple[tuple[str, float], ...]
    source: str = "prior"
    fitted: str = "{}"  # JSON text describing the fit (data, objective, quality)

    def weight(self, feature: str) -> float:
        return dict(self.weights).get(feature, 0.0)

    def score(self, features: Features) -> float:
        """Equation 2: predicted cycles along the critical path."""
        w = dict(self.weights)
        return sum(w.get(n, 0.0) * v for n, v in features.values)

    def seconds(self, features: Features, clock_ghz: float) -> float:
        """The score as a latency in seconds at ``clock_ghz``."""
        return self.score(features) / (max(clock_ghz, 0.1) * 1e9)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "family": self.family, "feature_version": FEATURE_VERSION,
                "features": list(feature_names(self.family)), "weights": dict(self.weights),
                "fitted": json.loads(self.fitted)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str) -> Coefficients:
        if data.get("format") != FORMAT:
            raise OrchestratorError(f"{source}: not a Tuna coefficients file ({FORMAT})")
        version = data.get("feature_version", FEATURE_VERSION)
        if str(data.get("family")) != "cuda" and version != FEATURE_VERSION:
            raise StaleCoefficientsError(
                f"{source}: fitted on Tuna features version {version}, this version "
                f"computes version {FEATURE_VERSION}; run `orchestrator calibrate "
                f"--cost-model tuna` again or delete the file")
        weights = data.get("weights") or {}
        names = feature_names(str(data["family"]))
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise OrchestratorError(f"{source}: unknown feature(s) {', '.join(unknown)}")
        return cls(str(data["family"]), tuple((n, float(weights.get(n, 0.0))) for n in names),
                   source, json.dumps(data.get("fitted") or {}, sort_keys=True))

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path


def prior(family: str) -> Coefficients:
    weights = PRIOR.get(family, PRIOR["avx2"])
    return Coefficients(family, tuple((n, weights[n]) for n in feature_names(family)), "prior")


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "orchestrator" / "tuna"


def user_path(family: str) -> Path:
    return user_config_dir() / f"{family}.json"


def read(path: Path) -> Coefficients:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise OrchestratorError(f"cannot read Tuna coefficients {path}: {exc}") from None
    return Coefficients.from_dict(data, str(path))


def shipped(family: str) -> Coefficients | None:
    try:
        text = resources.files("plugins.tuna").joinpath("data", f"{family}.json").read_text()
    except (FileNotFoundError, OSError, ModuleNotFoundError):
        return None
    try:
        return Coefficients.from_dict(json.loads(text), f"package data {family}.json")
    except StaleCoefficientsError as exc:  # only while the shipped file is being refitted
        log.warning("ignoring %s", exc)
        return None


def load(family: str, path: str | os.PathLike[str] | None = None) -> Coefficients:
    """The coefficients for ``family``, by the search order in the module docstring."""
    explicit = path or os.environ.get(ENV_PATH)
    if explicit:
        return read(Path(explicit))
    user = user_path(family)
    if user.exists():
        try:
            return read(user)
        except StaleCoefficientsError as exc:  # calibrated before an upgrade
            log.warning("ignoring %s", exc)
    return shipped(family) or prior(family)
