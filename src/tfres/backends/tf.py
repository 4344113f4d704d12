"""TensorFlow facts read WITHOUT starting the TensorFlow runtime.

Everything here imports ``tensorflow`` lazily, at most once, and never starts the runtime:
``tf.sysconfig.get_build_info()`` and ``tf.config.list_physical_devices()`` read static
facts, so device settings can still be changed afterwards. When TensorFlow is installed but
not imported yet, :func:`tensorflow_facts` can also answer from the package metadata and the
build-info file alone (no 3-second import); only the device list then stays unknown.

    >>> tensorflow_facts(import_tensorflow=False)["installed"]
    True
"""

from __future__ import annotations

import ast
import ctypes
import glob
import importlib.metadata
import importlib.util
import logging
import os
import platform
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "TF_DISTRIBUTIONS",
    "tensorflow_installed",
    "tensorflow_imported",
    "tensorflow_distribution",
    "runtime_started",
    "load_tensorflow",
    "build_info",
    "physical_devices",
    "onednn_setting",
    "onednn_enabled",
    "ONEDNN_CPU_FLAGS",
    "thread_settings",
    "tensorflow_facts",
    "cuda_libraries",
]

log = logging.getLogger("tfres")

#: True once :func:`load_tensorflow` imported TensorFlow (rather than the user's program)
_imported_by_tfres = False

#: pip distributions that install the ``tensorflow`` module, most common first.
TF_DISTRIBUTIONS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tensorflow-aarch64",
    "tensorflow-gpu",
    "tf-nightly",
    "tf-nightly-cpu",
)


def tensorflow_installed() -> bool:
    """Whether ``import tensorflow`` can find a package (without importing it)."""
    if "tensorflow" in sys.modules:  # None there means imports of it are blocked
        return sys.modules["tensorflow"] is not None
    try:
        return importlib.util.find_spec("tensorflow") is not None
    except (ImportError, ValueError):
        return False


def _fully_imported(name: str) -> Any:
    """The module ``name`` if it is in ``sys.modules`` and done importing, else None.

    A module another thread is still importing is in ``sys.modules`` already, with
    ``__spec__._initializing`` set; touching it then (or importing its submodules) can
    deadlock on the import lock, so a half-imported module counts as not imported.
    """
    module = sys.modules.get(name)
    if module is None or getattr(getattr(module, "__spec__", None), "_initializing", False):
        return None
    return module


def tensorflow_imported() -> bool:
    """Whether this process has finished importing TensorFlow."""
    return _fully_imported("tensorflow") is not None


def tensorflow_distribution() -> tuple[str, str] | None:
    """The pip distribution that provides TensorFlow, e.g. ``("tensorflow-cpu", "2.21.0")``.

    ``None`` when none of :data:`TF_DISTRIBUTIONS` is installed (a source build, say).
    """
    for name in TF_DISTRIBUTIONS:
        try:
            return name, importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def runtime_started() -> bool:
    """Whether the TensorFlow runtime of this process has started.

    Once it has, device settings (memory growth, visible devices, threads) can no longer be
    changed: TensorFlow raises ``RuntimeError``. Building a Keras model or creating any
    tensor starts it; importing TensorFlow does not. False when TensorFlow is not imported
    (this function never imports it).
    """
    if not tensorflow_imported():
        return False
    # importing TensorFlow imports its eager context; never import it here (this runs on
    # the sampler's thread too), only look it up
    context = _fully_imported("tensorflow.python.eager.context")
    if context is None:
        return False
    ctx = context.context_safe() if hasattr(context, "context_safe") else context.context()
    if ctx is None:
        return False
    initialized = getattr(ctx, "_initialized", None)
    if isinstance(initialized, bool):
        return initialized
    return getattr(ctx, "_context_handle", None) is not None


@contextmanager
def _quiet_native_logs() -> Iterator[None]:
    """Send what TensorFlow's C++ side writes to stderr to the debug log instead.

    TensorFlow prints start-up INFO lines (oneDNN, CPU features) straight to file
    descriptor 2, which ``TF_CPP_MIN_LOG_LEVEL`` does not always silence. Only done when
    tfres itself imports TensorFlow (``tfres env``, ``tfres doctor``), never around a user's
    own TensorFlow, and not when the user set ``TF_CPP_MIN_LOG_LEVEL`` (they asked for logs).
    """
    if "TF_CPP_MIN_LOG_LEVEL" in os.environ:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
        try:
            yield
        finally:
            os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace").strip()
            if text:
                log.debug("TensorFlow wrote to stderr: %s", text)


def load_tensorflow() -> Any:
    """``import tensorflow``, with TensorFlow's C++ start-up chatter sent to the debug log.

    Raises ``ImportError`` (or whatever a broken install raises).
    """
    global _imported_by_tfres
    if tensorflow_imported():
        return sys.modules["tensorflow"]
    with _quiet_native_logs():
        import tensorflow as tf
    _imported_by_tfres = True
    return tf


def _build_info_file() -> dict[str, Any] | None:
    """Read ``tensorflow/python/platform/build_info.py`` as data, without importing TF."""
    try:
        spec = importlib.util.find_spec("tensorflow")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "python" / "platform" / "build_info.py"
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            if not any(isinstance(t, ast.Name) and t.id == "build_info" for t in node.targets):
                continue
            call = node.value
            try:
                if call.args:
                    return dict(ast.literal_eval(call.args[0]))
                return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
            except (ValueError, TypeError, SyntaxError):
                return None
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def build_info() -> dict[str, Any] | None:
    """TensorFlow's build info as ``tf.sysconfig.get_build_info()`` gives it.

    Keys absent from this build stay absent (a CPU build has no ``cuda_version``).
    Read from the imported module when TensorFlow is imported, else from its build-info
    file; ``None`` when neither can be read.
    """
    if tensorflow_imported():
        try:
            return _jsonable(dict(sys.modules["tensorflow"].sysconfig.get_build_info()))
        except Exception as err:  # a broken install must not break the fingerprint
            log.debug("tf.sysconfig.get_build_info() failed: %s", err)
    info = _build_info_file()
    return None if info is None else _jsonable(info)


def physical_devices() -> list[dict[str, str]]:
    """The devices TensorFlow sees, as ``tf.config.list_physical_devices()`` lists them.

    This imports TensorFlow but does not start its runtime.
    """
    tf = load_tensorflow()
    if _imported_by_tfres:  # our own import: keep its start-up chatter quiet too
        with _quiet_native_logs():
            devices = tf.config.list_physical_devices()
    else:  # the user's TensorFlow: leave their stderr alone
        devices = tf.config.list_physical_devices()
    return [{"name": d.name, "device_type": d.device_type} for d in devices]


#: the CPU features TensorFlow's ``DefaultOneDnnPolicy()`` looks for on Linux
#: (tensorflow/core/util/util.cc): with none of them, oneDNN is off unless asked for
ONEDNN_CPU_FLAGS = ("avx512_vnni", "avx512_bf16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16")


def onednn_enabled() -> bool | None:
    """Whether TensorFlow's oneDNN CPU kernels are on, as TensorFlow itself decided.

    Asks TensorFlow (``IsMklEnabled()``, the function its own tests use), which has applied
    ``TF_ENABLE_ONEDNN_OPTS`` and the CPU features it checks. None while TensorFlow is not
    imported (this never imports it) or where the build does not say.
    """
    if not tensorflow_imported():
        return None
    util = _fully_imported("tensorflow.python.util._pywrap_util_port")
    if util is None:
        return None
    try:
        return bool(util.IsMklEnabled())
    except Exception as err:  # a build without the function
        log.debug("IsMklEnabled() failed: %s", err)
        return None


def _cpu_flags() -> set[str] | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return None


def _onednn_default_words() -> str:
    """What TensorFlow does by default on this machine, from the CPU flags it checks."""
    if not sys.platform.startswith("linux"):
        return f"TensorFlow's default on {platform.system()} applies"
    flags = _cpu_flags()
    if flags is None:
        return "the CPU flags TensorFlow checks could not be read"
    found = [f for f in ONEDNN_CPU_FLAGS if f in flags]
    if found:
        return f"this CPU has {', '.join(found)}, for which TensorFlow turns it on by default"
    if platform.machine().lower() in ("aarch64", "arm64"):
        return "TensorFlow turns it on by default only on some ARM cores (Neoverse V1)"
    return f"this CPU has none of {', '.join(ONEDNN_CPU_FLAGS)}, so TensorFlow leaves it off"


def onednn_setting(version: str | None = None) -> str:
    """Whether TensorFlow's oneDNN CPU kernels are on, and why, in words.

    Read from TensorFlow once it is imported (:func:`onednn_enabled`); before that, what
    ``TF_ENABLE_ONEDNN_OPTS`` asks for or, unset, what TensorFlow's default does with the
    CPU flags it checks, said as expected rather than read.
    """
    raw = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    if raw is not None and raw.strip().lower() not in ("0", "1", "true", "false"):
        return f"unrecognised TF_ENABLE_ONEDNN_OPTS={raw!r}; TensorFlow reads 0 or 1"
    why = f"TF_ENABLE_ONEDNN_OPTS={raw}" if raw is not None else _onednn_default_words()
    enabled = onednn_enabled()
    if enabled is not None:
        return f"{'on' if enabled else 'off'} (read from TensorFlow; {why})"
    return f"not read (TensorFlow not imported); {why}"


def _int_env(name: str) -> int | None:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value > 0 else None


def thread_settings(*, usable_cpus: int | None = None) -> dict[str, Any]:
    """The intra-op and inter-op thread pools: as configured, and what TensorFlow will start.

    ``intra_op_threads``/``inter_op_threads`` are what ``tf.config.threading`` returns (0
    means TensorFlow's default; ``None`` when TensorFlow is not imported, as the getters are
    only read then). ``*_effective`` is what TensorFlow will actually start:
    ``TF_NUM_INTRAOP_THREADS``/``TF_NUM_INTEROP_THREADS`` if set, else the setting, else one
    per CPU this process may run on (its affinity; TensorFlow ignores a cgroup CPU quota).
    """
    if usable_cpus is None:
        try:
            usable_cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            usable_cpus = os.cpu_count() or 1
    intra_setting: int | None = None
    inter_setting: int | None = None
    if tensorflow_imported():
        try:
            threading = sys.modules["tensorflow"].config.threading
            intra_setting = int(threading.get_intra_op_parallelism_threads())
            inter_setting = int(threading.get_inter_op_parallelism_threads())
        except Exception as err:
            log.debug("tf.config.threading getters failed: %s", err)
    return {
        "intra_op_threads": intra_setting,
        "inter_op_threads": inter_setting,
        "intra_op_threads_effective": _int_env("TF_NUM_INTRAOP_THREADS")
        or intra_setting
        or usable_cpus,
        "inter_op_threads_effective": _int_env("TF_NUM_INTEROP_THREADS")
        or inter_setting
        or usable_cpus,
    }


def tensorflow_facts(*, import_tensorflow: bool = True) -> dict[str, Any]:
    """The ``tensorflow`` section of the fingerprint.

    With ``import_tensorflow=False`` and TensorFlow not yet imported, the version and build
    info come from the package files and ``physical_devices`` is ``None`` (with
    ``devices_reason``); nothing is imported. When TensorFlow is not installed the section
    is ``{"installed": False, "reason": ...}``. Never starts the TensorFlow runtime.
    """
    facts: dict[str, Any] = {"installed": tensorflow_installed()}
    dist = tensorflow_distribution()
    if not facts["installed"]:
        facts.update(
            source="importlib",
            version=None,
            reason="TensorFlow is not installed; install with: pip install 'tfres[cpu]' "
            "(or 'tfres[gpu]' on a machine with an NVIDIA GPU)",
        )
        return facts
    facts["distribution"] = dist[0] if dist else None
    facts["version"] = dist[1] if dist else None
    facts["reason"] = None
    imported = tensorflow_imported()
    if import_tensorflow and not imported:
        try:
            load_tensorflow()
            imported = True
        except Exception as err:  # broken installs raise anything: ImportError, OSError...
            facts["reason"] = f"TensorFlow is installed but `import tensorflow` fails: {err}"
            facts["error"] = facts["reason"]
    if imported:
        tf = sys.modules["tensorflow"]
        facts["version"] = str(getattr(tf, "__version__", facts["version"]))
        facts["source"] = "tensorflow (tf.sysconfig, tf.config; runtime not started)"
    else:
        facts["source"] = "package metadata and build_info.py (TensorFlow not imported)"
    facts["build_info"] = build_info() or {}
    if imported:
        try:
            facts["physical_devices"] = physical_devices()
            facts["devices_reason"] = None
        except Exception as err:
            facts["physical_devices"] = None
            facts["devices_reason"] = f"tf.config.list_physical_devices() failed: {err}"
    else:
        facts["physical_devices"] = None
        facts["devices_reason"] = facts["reason"] or (
            "not listed: TensorFlow was not imported (run `tfres env` for the device list)"
        )
    facts["onednn"] = onednn_setting(facts["version"])
    facts["onednn_enabled"] = onednn_enabled()
    facts.update(thread_settings())
    facts["runtime_started"] = runtime_started()
    return facts


def _site_packages() -> list[Path]:
    paths = {sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")}
    return [Path(p) for p in paths if p]


def cuda_libraries(build: dict[str, Any] | None = None) -> dict[str, str | None]:
    """Where the CUDA runtime and cuDNN that TensorFlow loads are found, if anywhere.

    Looks for the sonames TensorFlow ``dlopen`` s (``libcudart.so.<cuda major>``,
    ``libcudnn.so.<cudnn major>``) in the pip ``nvidia-*`` packages TensorFlow's
    ``[and-cuda]`` extra installs, then through the dynamic loader (``LD_LIBRARY_PATH``, the
    ldconfig cache). The value is the path or soname found, or ``None`` when it is missing.
    Linux only; elsewhere the dict is empty.
    """
    if not sys.platform.startswith("linux"):
        return {}
    build = build if build is not None else (build_info() or {})
    cuda_major = str(build.get("cuda_version") or "12").split(".")[0]
    cudnn_major = str(build.get("cudnn_version") or "9").split(".")[0]
    found: dict[str, str | None] = {}
    for soname in (f"libcudart.so.{cuda_major}", f"libcudnn.so.{cudnn_major}"):
        hit: str | None = None
        for site in _site_packages():
            matches = glob.glob(str(site / "nvidia" / "*" / "lib" / f"{soname}*"))
            if matches:
                hit = sorted(matches)[0]
                break
        if hit is None:
            try:
                ctypes.CDLL(soname)
                hit = soname
            except OSError:
                hit = None
        found[soname] = hit
    return found
