"""``tfres env`` and ``tfres doctor`` on the command line (in-process, and a few real
subprocesses to prove the console script and ``python -m tfres`` work)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakes import FakeGpu
from tfres import __version__
from tfres.cli import main

# nothing here asserts a time, a rate or a CPU share: the README's test command runs these
# tests two at a time (see the parallel marker in pyproject.toml)
pytestmark = pytest.mark.parallel

TFRES = shutil.which("tfres", path=str(Path(sys.executable).parent)) or "tfres"


def _run(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env_extra or {})}
    return subprocess.run(
        [TFRES, *args], capture_output=True, text=True, timeout=180, env=env, check=False
    )


def test_env_json_via_console_script_holds_sections_and_no_secret():
    proc = _run("env", "--json", env_extra={"TF_API_TOKEN": "s3cr3t-value", "MY_PASSWORD": "pw"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for section in ("cpu", "memory", "gpus", "tensorflow", "blas", "env", "host", "load"):
        assert section in data, section
    if not data["gpus"]:
        assert data["gpus_reason"]  # here: no NVIDIA driver, and tfres says so
    assert data["tensorflow"]["installed"] is True
    assert data["tensorflow"]["physical_devices"]  # `tfres env` lists TF's devices
    assert data["blas"] and data["blas"][0]["num_threads"] >= 1
    assert "TF_API_TOKEN" not in data["env"] and "MY_PASSWORD" not in data["env"]
    assert "s3cr3t-value" not in proc.stdout
    assert data["env"].get("TF_CPP_MIN_LOG_LEVEL") == "2"


def test_env_tables_in_process(capsys):
    assert main(["env", "--no-tensorflow", "--no-processes"]) == 0
    out = capsys.readouterr().out
    for heading in ("Host", "CPU", "Memory", "GPUs", "TensorFlow", "Environment"):
        assert heading in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_env_escapes_rich_markup(capsys, monkeypatch):
    monkeypatch.setenv("TF_XLA_FLAGS", "[bold red]not markup[/bold red]")
    assert main(["env", "--no-tensorflow", "--no-processes"]) == 0
    assert "[bold red]not markup[/bold red]" in capsys.readouterr().out


def test_env_shows_fake_gpus(capsys, fake_nvml):
    fake_nvml.gpus = [FakeGpu(name="NVIDIA H100 80GB HBM3", processes=[(os.getpid(), 2**30)])]
    assert main(["env", "--no-tensorflow", "--no-processes"]) == 0
    out = capsys.readouterr().out
    assert "H100" in out and "550.54.15" in out


def test_doctor_names_cpu_only_wheel_with_fake_gpu(capsys, fake_nvml):
    fake_nvml.gpus = [FakeGpu()]
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "CPU-only" in out and "tensorflow[and-cuda]" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_doctor_json(capsys, fake_nvml):
    fake_nvml.gpus = [FakeGpu()]
    assert main(["doctor", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "fail"
    gpu = next(c for c in data["checks"] if c["name"] == "gpu_visible")
    assert gpu["status"] == "fail" and gpu["causes"][0] == "cpu_only_wheel"
    for c in data["checks"]:
        assert set(c) == {"name", "status", "evidence", "fix", "title", "causes"}


def test_doctor_here_without_gpu(capsys, fake_nvml):
    import pynvml

    fake_nvml.init_error = pynvml.NVMLError_LibraryNotFound
    status = main(["doctor", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == (1 if data["status"] == "fail" else 0)
    gpu = next(c for c in data["checks"] if c["name"] == "gpu_visible")
    assert gpu["status"] in ("skip", "fail") and "libnvidia-ml.so" in gpu["evidence"]


def test_doctor_on_a_stored_record(capsys, tmp_path):
    from tfres.machine.fingerprint import fingerprint
    from tfres.record import Record, save

    r = Record(label="old run")
    r.fingerprint = fingerprint(tensorflow=False, processes=False, gpus=False).to_dict()
    r.fingerprint["memory"]["swap_used_bytes"] = 8 * 2**30
    path = save(r, tmp_path / "r.json")
    assert main(["doctor", "--record", str(path), "--json"]) == 0
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["swap"]["status"] == "warn" and "8.0 GiB" in checks["swap"]["evidence"]


def test_doctor_on_a_record_without_fingerprint(capsys, tmp_path):
    from tfres.record import Record, save

    path = save(Record(), tmp_path / "bare.json")
    assert main(["doctor", "--record", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tfres: error:") and "no fingerprint" in err and "\n" not in err


def test_python_m_tfres_version(python):
    proc = subprocess.run([python, "-m", "tfres", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"tfres {__version__}"


@pytest.mark.parametrize("command", ["env", "doctor"])
def test_help_teaches(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and f"tfres {command}" in out
