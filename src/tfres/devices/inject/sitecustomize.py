# ruff: noqa: UP004, UP031  (kept runnable by old Pythons: the child may be any interpreter)
"""Applies tfres device settings in a child process, with no tfres import needed there.

``tfres run`` puts this folder first on the child's ``PYTHONPATH`` and the settings in the
``TFRES_CONFIGURE`` variable (JSON). Python runs ``sitecustomize`` at start-up; this one:

1. installs a one-shot import hook (a ``sys.meta_path`` finder) that, right after the
   ``tensorflow`` package finishes importing, applies the settings through ``tf.config``
   (the runtime has not started then, so TensorFlow accepts them). TensorFlow itself is
   never imported here: a child that does not use it pays nothing.
2. with ``TFRES_INSTRUMENT=1``, installs the step/phase instrumentation of
   :mod:`_tfres_instrument` (the same folder; no tfres import either);
3. chains to the ``sitecustomize`` this one hides (a distribution's or a virtualenv's), so
   the child starts exactly as it would have.

Standard library only, and written for old Pythons too: the child may be any interpreter.
A setting that cannot be applied prints one ``tfres:`` line on stderr; the child goes on.
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_ENV = "TFRES_CONFIGURE"
_MIB = 1 << 20


def _say(text):
    try:
        sys.stderr.write("tfres: " + text + "\n")
    except Exception:
        pass


def _gpu_map(gpus, per_gpu):
    """{"*": v} or {"0": v} -> [(physical device, value)]; indices past the list are reported."""
    out = []
    for key, value in per_gpu.items():
        if key == "*":
            out.extend((g, value) for g in gpus)
        elif int(key) < len(gpus):
            out.append((gpus[int(key)], value))
        else:
            _say("GPU %s is not visible to TensorFlow here; its setting was not applied" % key)
    return out


def apply_settings(tf, settings):
    """Apply the settings to the freshly imported ``tf``; returns what was applied, in words."""
    done = []
    gpus = tf.config.list_physical_devices("GPU")
    wants_gpu = settings.get("gpu_memory_growth") or settings.get("gpu_memory_limit_bytes")
    if wants_gpu and not gpus:
        _say("no GPU visible to TensorFlow; the GPU memory settings were skipped")
    for gpu, on in _gpu_map(gpus, settings.get("gpu_memory_growth") or {}):
        tf.config.experimental.set_memory_growth(gpu, bool(on))
        done.append("memory growth on %s" % gpu.name)
    for gpu, limit in _gpu_map(gpus, settings.get("gpu_memory_limit_bytes") or {}):
        config = tf.config.LogicalDeviceConfiguration(memory_limit=int(limit) // _MIB)
        tf.config.set_logical_device_configuration(gpu, [config])
        done.append("memory limit %d MiB on %s" % (int(limit) // _MIB, gpu.name))
    if settings.get("logical_cpus"):
        cpu = tf.config.list_physical_devices("CPU")[0]
        count = int(settings["logical_cpus"])
        configs = [tf.config.LogicalDeviceConfiguration() for _ in range(count)]
        tf.config.set_logical_device_configuration(cpu, configs)
        done.append("%d logical CPUs" % count)
    if settings.get("log_device_placement") is not None:
        tf.debugging.set_log_device_placement(bool(settings["log_device_placement"]))
        done.append("device-placement logging")
    return done


class TensorflowHook(object):
    """A one-shot meta-path finder: wraps the loader of ``tensorflow`` to apply settings."""

    def __init__(self, settings):
        self.settings = settings

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader.exec_module
        settings = self.settings

        def exec_module(module):
            original(module)
            try:
                done = apply_settings(module, settings)
                os.environ["TFRES_CONFIGURE_APPLIED"] = "; ".join(done)
            except Exception as err:  # never break the child's import of TensorFlow
                _say("could not apply the device settings (%s: %s)" % (type(err).__name__, err))

        spec.loader.exec_module = exec_module
        return spec


def _install():
    text = os.environ.get(_ENV)
    if not text or "tensorflow" in sys.modules:
        return
    try:
        settings = json.loads(text)
    except ValueError as err:
        _say("%s is not valid JSON (%s); no device settings applied" % (_ENV, err))
        return
    sys.meta_path.insert(0, TensorflowHook(settings))


def _chain():
    """Run the sitecustomize this one hides, under the same name, as Python would have."""
    import importlib.machinery
    import importlib.util

    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:
        _say(
            "the chained sitecustomize %s failed (%s: %s)" % (spec.origin, type(err).__name__, err)
        )


def pool_worker(argv):
    """Whether ``argv`` (the interpreter's own, ``sys.orig_argv``) starts a worker of a
    process pool rather than a program: ``multiprocessing`` starts its spawned workers, its
    fork server and its resource tracker as ``python -c "from multiprocessing..."``
    (``concurrent.futures.ProcessPoolExecutor`` too), joblib's loky as ``python -m
    ...loky.backend.popen_loky_posix``. Forked workers run no ``sitecustomize``."""
    for i in range(len(argv) - 1):  # no zip(strict=): old Pythons run this too
        flag, value = argv[i], argv[i + 1]
        if flag == "-c" and value.lstrip().startswith("from multiprocessing"):
            return True
        if flag == "-m" and "loky.backend" in value:
            return True
    return "--multiprocessing-fork" in argv


def _instrument():
    """With ``TFRES_INSTRUMENT=1``: steps, phases and input wait (``_tfres_instrument``).
    Not in a process pool's workers: each imports the main module, and so TensorFlow, and
    would write its own start-up into the program's timeline (three ``import tensorflow``
    phases and a "no steps" note for a ``Pool(2)`` feeding a custom loop). Their CPU and
    memory are still sampled with the program's."""
    if os.environ.get("TFRES_INSTRUMENT") != "1":
        return
    if pool_worker(getattr(sys, "orig_argv", None) or [sys.executable] + sys.argv):
        return
    try:
        import _tfres_instrument

        _tfres_instrument.install()
    except Exception as err:  # never break the child's start-up
        _say("instrumentation is off (%s: %s)" % (type(err).__name__, err))


_install()
_instrument()
_chain()
