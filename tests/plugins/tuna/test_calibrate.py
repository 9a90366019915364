"""Fitting the coefficients (a ranking objective) and storing them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from orchestrator.errors import OrchestratorError
from plugins.tuna import coefficients as coef
from plugins.tuna.calibrate import FitOptions, Sample, evaluate, fit
from plugins.tuna.features import FEATURES, Features

TRUE = np.array([0.2, 1.0, 0.05, 3.0, 0.5, 4.0, 0.1])


def _synthetic(groups: int = 3, n: int = 60, noise: float = 0.03) -> list[Sample]:
    rng = np.random.default_rng(0)
    out = []
    for g in range(groups):
        feats = rng.lognormal(mean=10, sigma=1.0, size=(n, len(FEATURES)))
        lat = feats @ TRUE / 2.5e9 * rng.lognormal(0, noise, size=n)
        out += [Sample(f"task{g}", tuple(f), float(t)) for f, t in zip(feats, lat)]
    return out


def test_fit_recovers_the_ranking_of_synthetic_data():
    samples = _synthetic()
    start = coef.prior("znver4")
    fitted = fit(samples, start, 2.5, FitOptions(prior_strength=1e-3))  # let the data speak
    before = evaluate(samples, start, 2.5)
    after = evaluate(samples, fitted, 2.5)
    for g in after:
        assert after[g]["spearman"] > 0.97 > before[g]["spearman"]
        assert after[g]["top10"] > 0.97
    weights = np.array([fitted.weight(n) for n in FEATURES])
    big = TRUE >= 0.5  # the weights that matter come back within 25%
    assert np.all(np.abs(weights[big] / TRUE[big] - 1) < 0.25)
    # Scaled so that predicted seconds match measured ones.
    ratio = [fitted.seconds(Features(tuple(zip(FEATURES, s.features))), 2.5) / s.latency
             for s in samples]
    assert 0.8 < float(np.median(ratio)) < 1.25


def test_fit_needs_ordered_pairs():
    with pytest.raises(OrchestratorError):
        fit([Sample("a", (1.0,) * len(FEATURES), 1.0)], coef.prior("znver4"), 2.5)


def test_coefficients_round_trip_and_search_order(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(coef.ENV_PATH, raising=False)
    fitted = coef.Coefficients("znver4", tuple((n, float(i + 1)) for i, n in enumerate(FEATURES)),
                               "fit", json.dumps({"configs": 3}))
    assert coef.load("znver4").source != str(coef.user_path("znver4"))  # shipped or prior
    path = fitted.save(coef.user_path("znver4"))
    loaded = coef.load("znver4")
    assert loaded.source == str(path) and loaded.weights == fitted.weights
    assert json.loads(loaded.fitted) == {"configs": 3}
    explicit = tmp_path / "mine.json"
    coef.prior("znver4").save(explicit)
    assert coef.load("znver4", explicit).weights == coef.prior("znver4").weights
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(OrchestratorError):
        coef.load("znver4", bad)


def test_shipped_defaults_exist_for_this_project_machine():
    shipped = coef.shipped("znver4")
    assert shipped is not None and all(w >= 0 for _, w in shipped.weights)
    assert json.loads(shipped.fitted)["configs"] > 0


def test_calibrate_command_fits_from_history(db, tmp_path, monkeypatch):
    from orchestrator.result import MeasureResult, MeasureStatus
    from plugins.tuna import calibrate
    from tests.plugins.tuna.helpers import ZNVER4, config, dense_task, space

    monkeypatch.setenv("ORCHESTRATOR_TUNA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ORCHESTRATOR_TUNA_WORKERS", "0")  # analyze in this process
    monkeypatch.setattr(calibrate, "space_for", lambda task, target, plugins, gen: space(task))
    monkeypatch.setattr("orchestrator.target.resolve_target", lambda name: ZNVER4)
    monkeypatch.setattr(calibrate, "MIN_CONFIGS", 2)
    for n, shape in enumerate([(32, 32, 32), (32, 64, 32)]):
        task = dense_task(*shape)
        results = [MeasureResult(config(vec=v, par=p), MeasureStatus.OK, (t * (n + 1),),
                                 measurer="local")
                   for (v, p), t in zip([("yes", "no"), ("no", "no"), ("yes", "yes")],
                                        (1e-5, 3e-5, 2e-5))]
        db.record(run_id=None, task_id=db.ensure_task(task), target_id=db.ensure_target(ZNVER4),
                  results=results)
    out = tmp_path / "fitted.json"
    assert calibrate.calibrate_command("tuna", str(db.url), "host", out) == 0
    fitted = coef.read(out)
    info = json.loads(fitted.fitted)
    assert info["configs"] == 6 and len(info["tasks"]) == 2
    with pytest.raises(OrchestratorError):
        calibrate.calibrate_command("xgb", str(db.url), "host", out)


def test_coefficients_of_other_feature_versions_are_refused(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(coef.ENV_PATH, raising=False)
    data = coef.prior("znver4").to_dict()
    data["feature_version"] = coef.FEATURE_VERSION - 1
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    with pytest.raises(OrchestratorError, match="calibrate --cost-model tuna"):
        coef.load("znver4", old)  # named explicitly: an error
    user = coef.user_path("znver4")
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps(data))
    with caplog.at_level("WARNING"):
        loaded = coef.load("znver4")  # the user's own calibration: skipped with a warning
    assert loaded.source != str(user)
    assert "features version" in caplog.text
