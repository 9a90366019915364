"""The offline regression model (section 4.1): a random forest of log latency.

The paper uses scikit-learn's RandomForestRegressor; this project has no scikit-learn,
so the forest is XGBoost in random-forest mode (one boosting round of
``num_parallel_tree`` trees with row and column subsampling, learning rate 1).

A trained model is a JSON file: ``$XDG_CONFIG_HOME/orchestrator/cnnopt/<gpu>-<kind>.json``
(``~/.config/...``), written by ``orchestrator train --cost-model cnnopt-hybrid``, or
any path given as the cost model's ``model`` option or ``$ORCHESTRATOR_CNNOPT_MODEL``.
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.features import feature_names

FORMAT = "cnnopt-model/1"
ENV_PATH = "ORCHESTRATOR_CNNOPT_MODEL"


@dataclass(frozen=True)
class ForestParams:
    """Random-forest settings (XGBoost RF mode)."""

    trees: int = 100
    max_depth: int = 10
    max_bin: int = 64
    subsample: float = 0.8
    colsample_bynode: float = 0.8
    min_child_weight: float = 1.0
    nthread: int = 1   # 2 threads were 8x slower on a loaded 2-core machine

    def xgb_params(self, seed: int) -> dict[str, Any]:
        return {"objective": "reg:squarederror", "learning_rate": 1.0,
                "num_parallel_tree": self.trees, "max_depth": self.max_depth,
                "subsample": self.subsample, "colsample_bynode": self.colsample_bynode,
                "min_child_weight": self.min_child_weight, "reg_lambda": 1e-5,
                "tree_method": "hist", "max_bin": self.max_bin, "nthread": self.nthread,
                "seed": seed, "verbosity": 0}


class Forest:
    """Predicts seconds from feature rows; trained on log seconds."""

    def __init__(self, params: ForestParams | None = None, seed: int = 0) -> None:
        self.params = params or ForestParams()
        self.seed = seed
        self.booster: Any = None

    @property
    def fitted(self) -> bool:
        return self.booster is not None

    def fit(self, x: np.ndarray, seconds: np.ndarray) -> Forest:
        import xgboost as xgb

        keep = np.isfinite(seconds) & (seconds > 0)
        if keep.sum() < 2:
            raise CnnoptError("the regression model needs at least 2 measured configs")
        dtrain = xgb.DMatrix(x[keep], label=np.log(seconds[keep]), missing=np.nan)
        self.booster = xgb.train(self.params.xgb_params(self.seed), dtrain, num_boost_round=1)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predicted seconds per row."""
        if self.booster is None:
            raise CnnoptError("the regression model is not trained")
        if len(x) == 0:
            return np.zeros(0)
        return np.exp(np.asarray(self.booster.inplace_predict(x, missing=np.nan), float))

    def raw(self) -> str:
        return bytes(self.booster.save_raw("json")).decode()

    @classmethod
    def from_raw(cls, text: str) -> Forest:
        import xgboost as xgb

        booster = xgb.Booster()
        booster.load_model(bytearray(text.encode()))
        forest = cls()
        forest.booster = booster
        return forest


@dataclass
class TrainedModel:
    """A forest with what it was trained on: model kind, GPU, feature names, data."""

    kind: str
    gpu: str
    forest: Forest
    info: dict[str, Any] = field(default_factory=dict)
    source: str = "memory"

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "kind": self.kind, "gpu": self.gpu,
                "features": list(feature_names(self.kind)), "info": self.info,
                "booster": json.loads(self.forest.raw())}

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_dict()) + "\n")
        os.replace(tmp, path)
        return path

    @classmethod
    def read(cls, path: Path) -> TrainedModel:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise CnnoptError(f"cannot read CNNOpt model {path}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CnnoptError(f"{path} is not a CNNOpt model file ({FORMAT})")
        kind = str(data.get("kind"))
        if list(data.get("features") or []) != list(feature_names(kind)):
            raise CnnoptError(f"{path} was trained on other features; train it again with "
                              "orchestrator train --cost-model cnnopt-" + kind)
        forest = Forest.from_raw(json.dumps(data["booster"]))
        return cls(kind, str(data.get("gpu")), forest, dict(data.get("info") or {}), str(path))


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "orchestrator" / "cnnopt"


def user_path(gpu: str, kind: str) -> Path:
    return user_config_dir() / f"{gpu}-{kind}.json"


def load(gpu: str, kind: str, path: str | os.PathLike[str] | None = None) -> TrainedModel | None:
    """The trained ``kind`` model for ``gpu``: an explicit path (or $ORCHESTRATOR_CNNOPT_MODEL),
    else the user config dir; None when there is none."""
    explicit = path or os.environ.get(ENV_PATH)
    if explicit:
        model = TrainedModel.read(Path(explicit))
        if model.kind != kind:
            raise CnnoptError(f"{explicit} holds a cnnopt-{model.kind} model, not cnnopt-{kind}")
        return model
    user = user_path(gpu, kind)
    return TrainedModel.read(user) if user.exists() else None


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
