"""scripts/machine.py: the header every result file starts with, and writing the file."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script


def test_the_header_names_the_thread_count_the_measurer_times_with(monkeypatch: pytest.MonkeyPatch):
    machine = load_script("machine")
    monkeypatch.setenv("TVM_NUM_THREADS", "3")
    assert machine.threads_note(2) == "TVM_NUM_THREADS=3"
    monkeypatch.delenv("TVM_NUM_THREADS")
    assert machine.threads_note(2) == ("TVM_NUM_THREADS unset here; the local measurer times "
                                       "with TVM_NUM_THREADS=2, one thread per core")
    header = machine.machine_header()
    assert "TVM_NUM_THREADS unset here" in header and "apache-tvm" in header


def test_a_report_is_written_into_a_new_folder_and_echoed(tmp_path, capsys):
    out = tmp_path / "results" / "new" / "report.md"
    load_script("machine").write_report(out, "# Report\n")
    assert out.read_text() == "# Report\n" and "# Report" in capsys.readouterr().out


def test_the_header_names_the_gpus_nvidia_smi_lists_and_none_without_it(tmp_path, monkeypatch):
    machine = load_script("machine")
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA H200, 580.159.03'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert machine.gpus() == ["NVIDIA H200, 580.159.03"]
    assert "- GPU: NVIDIA H200, 580.159.03 (name, driver)" in machine.machine_header()
    fake.unlink()
    assert machine.gpus() == [] and "- GPU" not in machine.machine_header()
