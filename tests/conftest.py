from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Keep TensorFlow quiet and deterministic in tests; set before any test imports it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def pytest_configure(config: pytest.Config) -> None:
    """Compile tfres's modules once where Python is told not to write bytecode
    (``PYTHONDONTWRITEBYTECODE``, set on some CI images). The suite starts ``python -m
    tfres`` and ``tfres run`` children (with the start-up hook's modules) hundreds of times,
    and with an editable install each would compile the package's sources again: a cost no
    installed tfres has, since pip compiles a wheel's modules when it installs them.
    ``compileall`` writes the ``__pycache__`` files that Python then only reads; the
    environment the tests and their children see is left as it was."""
    if not sys.dont_write_bytecode:
        return  # Python writes them itself at the first import
    import compileall

    import tfres

    compileall.compile_dir(str(Path(tfres.__file__).parent), quiet=1)


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty store; nothing touches the user's real one."""
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("TFRES_STORE", str(path))
    return path


@pytest.fixture
def store_path(_isolated_store: Path) -> Path:
    return _isolated_store


@pytest.fixture
def python() -> str:
    """The interpreter running the tests (the one tfres is installed in)."""
    return sys.executable


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch):
    """A scripted fake NVML (``tests.fakes.FakeNVML``, one A100-like GPU) installed as
    ``pynvml`` for this test; tfres's cached NVML state is reset before and after.

    Script it before the code under test first touches NVML (or call
    ``tfres.backends.nvml.reset()`` after changing it)::

        def test_two_gpus(fake_nvml):
            fake_nvml.gpus = [FakeGpu(), FakeGpu(name="NVIDIA T4", mig_mode=None)]
            fake_nvml.init_error = pynvml.NVMLError_DriverNotLoaded   # or: no driver
    """
    from fakes import FakeNVML
    from tfres.backends import nvml

    fake = FakeNVML()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml.reset()
    yield fake
    nvml.reset()
