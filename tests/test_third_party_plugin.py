"""A third-party plugin package, installed with pip, found by entry point, used by the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent / "third_party_plugin"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(PACKAGE)],
                   check=True, capture_output=True, text=True, timeout=300)
    return target


def cli(site: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": path, "COLUMNS": "200", **env},
                          capture_output=True, text=True, timeout=600)


def test_installed_plugin_is_listed_with_its_distribution(site, tmp_path):
    p = cli(site, tmp_path, "plugins")
    assert p.returncode == 0, p.stderr
    assert "orchestrator-example-plugin" in p.stdout and "example-descending" in p.stdout


def test_tune_with_the_third_party_searcher_through_the_cli(site, tmp_path):
    p = cli(site, tmp_path, "tune", "--op", "dense", "--shape", "M=16,K=16,N=32",
            "--searcher", "example-descending", "--trials", "4", "--batch-size", "2",
            "--db", str(tmp_path / "h.db"), "--json")
    assert p.returncode == 0, p.stderr
    [summary] = json.loads(p.stdout)
    assert summary["trials"] == 4 and summary["measured"] == 4
    assert summary["statuses"].get("ok", 0) >= 1


def test_autoload_can_be_turned_off(site, tmp_path):
    p = cli(site, tmp_path, "plugins", ORCHESTRATOR_DISABLE_PLUGIN_AUTOLOAD="1")
    assert p.returncode == 0 and "example-descending" not in p.stdout
    p = cli(site, tmp_path, "tune", "--op", "dense", "--shape", "M=16,K=16,N=32",
            "--searcher", "example-descending", ORCHESTRATOR_BLOCK_PLUGINS="example")
    assert p.returncode == 2 and "unknown searcher 'example-descending'" in p.stderr


def test_a_third_party_component_is_described_and_its_options_checked(site, tmp_path):
    p = cli(site, tmp_path, "plugins", "--show", "example-descending")
    assert p.returncode == 0, p.stderr
    assert "searcher example-descending (plugin example)" in p.stdout
    assert "largest first" in p.stdout
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in p.stdout.splitlines() if line.count("│") == 4}
    assert rows["skip"] == ["a whole number", "0"] and "takes no options" not in p.stdout
    tune = ("tune", "--op", "dense", "--shape", "M=16,K=16,N=32", "--searcher",
            "example-descending", "--db", str(tmp_path / "h.db"), "--searcher-opt")
    p = cli(site, tmp_path, *tune, "depth=2")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("error: searcher 'example-descending': unknown option "
                                "'depth'; known: skip")
    # its own range check names it as the registry does
    p = cli(site, tmp_path, *tune, "skip=-1")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("error: searcher 'example-descending': option skip must be "
                                ">= 0, got -1")
    p = cli(site, tmp_path, *tune, "skip=2", "--trials", "2", "--batch-size", "2", "--json")
    assert p.returncode == 0, p.stderr
    [summary] = json.loads(p.stdout)
    assert summary["trials"] == 2 and summary["measured"] == 2
