"""Real servers on 127.0.0.1 for the integration tests: MLflow tracking and Prometheus.

A server that cannot be found skips its tests on a developer's machine and FAILS them
under ``CI=true``, saying what to install: never a silent pass.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def missing(what: str) -> None:
    """Fail under CI, skip elsewhere."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{what} (CI=true: the integration tests need it)", pytrace=False)
    pytest.skip(what)


def wait_http(url: str, proc: subprocess.Popen, timeout_seconds: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"server not ready at {url} after {timeout_seconds} s: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen) -> None:
    """End the server's whole process group (it started it), SIGKILL after 10 s."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    except ProcessLookupError:
        pass


def start(argv: list[str], ready_url: str, log: Path, timeout: float, **kw) -> subprocess.Popen:
    fh = open(log, "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True, **kw)
    try:
        wait_http(ready_url, proc, timeout, log)
    except BaseException:
        stop(proc)
        raise
    return proc


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``mlflow server`` with a SQLite backend and served artifacts; yields its URI."""
    exe = Path(sys.executable).with_name("mlflow")
    if not exe.exists():
        exe = Path(shutil.which("mlflow") or "")
    try:
        import flask  # noqa: F401  (the server's own needs, which mlflow-skinny leaves out)
        import mlflow.server  # noqa: F401
    except ImportError as err:
        missing(f"MLflow's server cannot be imported ({err}): pip install 'tfres[test]'")
    if not exe.is_file():
        missing("the `mlflow` command is not installed: pip install 'tfres[test]'")
    folder = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    env = dict(os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    argv = [str(exe), "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]
    argv += ["--backend-store-uri", f"sqlite:///{folder}/mlflow.db"]
    argv += ["--artifacts-destination", str(folder / "artifacts")]
    proc = start(argv, f"http://127.0.0.1:{port}/health", folder / "server.log", 90, env=env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.fixture
def prometheus_binary() -> str:
    path = shutil.which("prometheus") or (
        "/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None
    )
    if path is None:
        missing("Prometheus is not installed: apt-get install prometheus")
    return str(path)
