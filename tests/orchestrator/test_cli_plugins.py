"""`orchestrator plugins --show NAME`: a component's description and its options."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from orchestrator.options import describe_options
from plugins.gga.searcher import GuidedGA
from plugins.measure.local import LocalMeasurer


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd,
                          env={**os.environ, "COLUMNS": "200"}, capture_output=True,
                          text=True, timeout=120)


def test_show_lists_each_option_with_what_it_takes_and_its_default(tmp_path):
    p = cli("plugins", "--show", "gga", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "searcher gga (plugin gga)" in p.stdout and "Guided GA" in p.stdout
    assert "--searcher-opt KEY=VALUE" in p.stdout
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in p.stdout.splitlines() if line.count("│") == 4}
    assert rows["population"] == ["a whole number", "16"]
    assert rows["probe"] == ["a whole number or null", "null"]
    assert rows["seeding"] == ["text", '"metric"']
    assert rows["refit"] == ["true or false", "false"]


def test_show_wraps_the_description_at_the_terminals_width(tmp_path):
    p = cli("plugins", "--show", "auto", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # the docstring's own line breaks are gone: one line at 200 columns
    [line] = [x for x in p.stdout.splitlines() if x.startswith("Runs ``gga``")]
    assert "results of its own) reaches ``threshold``, else ``tl``" in line


def test_show_gives_every_kind_of_a_shared_name(tmp_path):
    p = cli("plugins", "--show", "xgb", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "searcher xgb (plugin tl)" in p.stdout and "cost model xgb (plugin tl)" in p.stdout
    assert "Set with: --cost-model xgb --cost-model-opt KEY=VALUE" in p.stdout
    assert "Set with: --searcher-opt KEY=VALUE" in p.stdout


def test_show_tells_how_to_set_a_pruners_options(tmp_path):
    p = cli("plugins", "--show", "psa-512", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "pruner psa-512 (plugin psa)" in p.stdout
    assert "Set with: --pruner psa-512 --pruner-opt psa-512:KEY=VALUE" in p.stdout
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
            for line in p.stdout.splitlines() if line.count("│") == 4}
    assert rows["size"] == ["a whole number", "512"] and rows["explore"][0] == "a number"


def test_show_of_an_unknown_name_is_a_one_line_error(tmp_path):
    p = cli("plugins", "--show", "gaa", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    [line] = p.stderr.strip().splitlines()
    assert line.startswith("error: no component named 'gaa'; known: ") and " gga," in line


def test_describe_options_says_when_a_component_checks_more_itself():
    rows, more = describe_options(GuidedGA)
    assert not more and ("elite", "a whole number", "8") in rows
    rows, more = describe_options(LocalMeasurer)
    assert more and ("repeat", "a whole number", "5") in rows
