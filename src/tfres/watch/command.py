"""Run a command under watch: what ``tfres run -- COMMAND ...`` calls.

    result = watch(["python", "train.py"], label="exp1")
    result.exit_status      # the command's own exit status (128 + N when killed by signal N)
    result.record           # the timeline of the command's whole process tree, saved

The command leads a process group of its own; signals sent to tfres reach its whole tree,
with SIGKILL after ``grace_seconds`` for a tree that does not stop, and at once on a second
signal (:mod:`tfres.watch.supervisor`). Whatever happens, the record is saved: a command that
fails has ``status="failed"``, one killed or interrupted ``"partial"``, with its exit status
or signal and ``end_reason`` in words. Every output is checked before the command starts.

Watchers (the memory budget, the live dashboard) follow a small protocol, :class:`Watcher`:
``on_start(pid)``, ``on_sample(sample) -> reason | None`` (a reason stops the command:
SIGTERM, then SIGKILL to the whole tree after ``grace_seconds``) and ``on_stop(record)``;
optional ``wrap_command(argv)`` and ``bind(supervisor)`` (to stop it from its own thread).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tfres.backends.signals import DEFAULT_GRACE_SECONDS, new_group_options
from tfres.errors import TfresError
from tfres.record import Record
from tfres.sampler.sampler import DEFAULT_INTERVAL_SECONDS, Sampler, check_interval
from tfres.session import RecordSession
from tfres.timeline import Sample
from tfres.watch.allocator import NO_INSTRUMENT_NOTE, AllocatorFollower
from tfres.watch.supervisor import FORWARDED_SIGNALS, Supervisor, describe_end

__all__ = [
    "Watcher",
    "WatchResult",
    "CommandNotFoundError",
    "watch",
    "exit_status_of",
    "MIN_INTERVAL_SECONDS",
]

log = logging.getLogger("tfres")

#: the shortest sampling interval: below it the sampler would take a core of its own
MIN_INTERVAL_SECONDS = 0.01


class Watcher(Protocol):
    """What :func:`watch` calls while a command runs (all three on tfres's side)."""

    def on_start(self, pid: int) -> None: ...

    def on_sample(self, sample: Sample) -> str | None: ...

    def on_stop(self, record: Record) -> None: ...


class CommandNotFoundError(TfresError):
    """The command cannot be started; ``exit_status`` is the shell's (127 or 126)."""

    def __init__(self, message: str, *, exit_status: int) -> None:
        self.exit_status = exit_status
        super().__init__(message)


@dataclass
class WatchResult:
    """What :func:`watch` gives back: the saved record and the command's exit status."""

    record: Record
    exit_status: int
    store_number: int | None = None
    #: None when the record went everywhere asked; else what failed and where the copy is
    store_error: str | None = None
    fallback_path: Path | None = None


def exit_status_of(returncode: int) -> int:
    """A ``Popen.returncode`` as a shell shows it: -N (killed by signal N) becomes 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _resolve(command: Sequence[str], env: Mapping[str, str]) -> str:
    if not command:
        raise CommandNotFoundError(
            "no command given: write it after --, e.g. tfres run -- python train.py",
            exit_status=2,
        )
    program = command[0]
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise CommandNotFoundError(f"command not found: {program}", exit_status=127)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise CommandNotFoundError(f"command is not executable: {program}", exit_status=126)
        return program
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise CommandNotFoundError(f"command not found: {program}", exit_status=127)
    return found


def _call(what: str, fn: Callable[..., Any], *args: Any, notes: list[str] | None = None) -> Any:
    try:
        return fn(*args)
    except Exception as err:  # a watcher that breaks must not lose the run or its record
        log.warning("tfres: %s failed: %s", what, err)
        if notes is not None:
            notes.append(f"{what} failed: {err}")
        return None


def watch(
    command: Sequence[str],
    *,
    label: str | None = None,
    interval: float = DEFAULT_INTERVAL_SECONDS,
    gpus: bool | Sequence[int] = True,
    env: Mapping[str, str] | None = None,
    watchers: Sequence[Watcher] = (),
    store: bool | str | os.PathLike[str] = True,
    out: str | os.PathLike[str] | None = None,
    live: bool = False,
    prometheus: str | int | None = None,
    job: str | None = None,
    worker: int | None = None,
    control: Mapping[str, Any] | None = None,
    grace_seconds: float = DEFAULT_GRACE_SECONDS,
    on_start: Callable[[Record], None] | None = None,
    instrument: bool = True,
    profile: tuple[int, int] | None = None,
    profile_dir: str | os.PathLike[str] | None = None,
) -> WatchResult:
    """Run ``command``, sample its whole process tree every ``interval`` s, save the record.

    ``env`` are variables set for the command on top of ours. ``gpus`` picks NVML indices
    (True: those the command's ``CUDA_VISIBLE_DEVICES`` leaves, all when unset). ``live``
    shows the terminal dashboard (:mod:`tfres.watch.live`) and shows the command's output in it.
    ``store=False`` keeps the record out of the store; ``out`` also writes it to a file; both
    are checked before the command starts (:class:`~tfres.errors.RecordError`,
    :class:`~tfres.errors.StoreError`), and so are ``gpus`` given by index
    (:class:`~tfres.errors.NoGpuError` where NVML has no such GPU). ``grace_seconds`` is how
    long a tree asked to stop has before SIGKILL. ``on_start(record)`` is called once the
    command runs. ``instrument`` (default) injects tfres's start-up hook into a Python
    command: Keras steps with their input wait, phases, notes (:mod:`tfres.devices.inject`);
    ``profile`` ``(A, B)`` writes a TensorBoard profile of train steps A-B to ``profile_dir``.
    Raises :class:`CommandNotFoundError` (exit status 127/126) when the command cannot start;
    nothing is recorded then. ``interval`` below :data:`MIN_INTERVAL_SECONDS` is a ValueError.

        result = watch(["python", "train.py"], label="exp1", interval=0.1)
        sys.exit(result.exit_status)
    """
    check_run_interval(interval)
    child_env = dict(os.environ)
    child_env.update(env or {})
    argv = list(command)
    _resolve(argv, child_env)
    if gpus is True and "CUDA_VISIBLE_DEVICES" in (env or {}):
        from tfres.sampler.gpu_poll import visible_gpu_indices

        gpus = visible_gpu_indices(child_env["CUDA_VISIBLE_DEVICES"]) or True
    elif gpus is not True and gpus is not False:
        from tfres.sampler.gpu_poll import check_gpu_indices

        check_gpu_indices(gpus)
    record = Record(
        kind="run", label=label, command=argv, job=job, worker=worker, interval_seconds=interval
    )
    record.control.update(control or {})
    session = RecordSession(record, None, store=store, out=out)
    session.check_outputs()
    run_argv = _wrapped(argv, watchers)
    session.take_fingerprint()
    parts = _Parts(record, child_env, argv, interval, live=live, prometheus=prometheus)
    if instrument:
        from tfres.devices.child_env import instrument_environment

        child_env.update(
            instrument_environment(
                child_env, events_file=parts.events_file, profile=profile, profile_dir=profile_dir
            )
        )
    else:  # no hook: nothing reads the command's allocator
        record.notes.append(NO_INSTRUMENT_NOTE)
    sup = Supervisor(grace_seconds)
    # the handlers go in before the command starts: a signal in between is held for it
    with _forwarding(sup):
        proc = parts.start(run_argv)
        sup.attach(proc)
        session.sampler = Sampler(
            interval, pid=proc.pid, gpus=gpus, tf_memory=instrument, tf_reader=parts.allocator
        )
        returncode = _supervise(sup, session, parts, watchers, on_start)
    saved = session.save()
    return WatchResult(
        record=record,
        exit_status=exit_status_of(returncode),
        store_number=saved.store_number,
        store_error=saved.error,
        fallback_path=saved.fallback_path,
    )


def check_run_interval(interval: float) -> float:
    """``interval`` if it is usable for ``tfres run`` (at least 10 ms), else ValueError."""
    check_interval(interval)
    if interval < MIN_INTERVAL_SECONDS:
        raise ValueError(
            f"interval must be at least {MIN_INTERVAL_SECONDS:g} seconds (got {interval!r}): "
            "shorter ones keep a core busy with sampling"
        )
    return float(interval)


def _wrapped(argv: list[str], watchers: Sequence[Watcher]) -> list[str]:
    """The command as started: a watcher may wrap it (systemd-run --scope)."""
    run_argv = argv
    for w in watchers:
        wrap = getattr(w, "wrap_command", None)
        if callable(wrap):
            run_argv = list(_call(f"watcher {type(w).__name__}", wrap, run_argv) or run_argv)
    return run_argv


@contextmanager
def _forwarding(sup: Supervisor) -> Iterator[None]:
    """Pass SIGTERM/SIGHUP/SIGINT on to the command while it runs (main thread only)."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in FORWARDED_SIGNALS:
            previous[sig] = signal.signal(sig, sup.on_signal)
    try:
        yield
    finally:
        sup.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _Parts:
    """What runs beside the command: the Prometheus exporter, the dashboard, the steps file."""

    def __init__(
        self,
        record: Record,
        child_env: dict[str, str],
        argv: list[str],
        interval: float,
        *,
        live: bool,
        prometheus: str | int | None,
    ) -> None:
        self.child_env = child_env
        self.argv = argv
        self.exporter: Any = None
        if prometheus is not None:
            from tfres.watch.prometheus import PrometheusExporter

            self.exporter = PrometheusExporter(prometheus, job=record.job, worker=record.worker)
            record.extra["prometheus_url"] = self.exporter.url
        self.dashboard: Any = None
        if live:
            from tfres.watch.live import LiveDashboard

            self.dashboard = LiveDashboard(argv, interval=interval)
            child_env.setdefault("PYTHONUNBUFFERED", "1")  # show lines as they are printed
        self.steps_file, self.own_steps_file = _steps_file(child_env)
        if self.exporter is not None:  # step histograms, read as the command writes them
            self.exporter.follow_steps(self.steps_file)
        fd, self.events_file = tempfile.mkstemp(prefix="tfres-events-", suffix=".jsonl")
        os.close(fd)
        # the child hook's allocator readings, into each sample's tf_memory (watch/allocator)
        self.follower = AllocatorFollower(self.events_file, note=_noter(record))
        self.allocator = self.follower.read

    def start(self, run_argv: list[str]) -> subprocess.Popen[bytes]:
        out_pipe: int | None = None
        err_pipe: int | None = None
        if self.dashboard is not None:
            # both on the dashboard's terminal: one pipe keeps their lines in the order printed
            out_pipe = subprocess.PIPE
            err_pipe = subprocess.STDOUT if self.dashboard.one_terminal() else subprocess.PIPE
        try:
            return subprocess.Popen(  # type: ignore[call-overload,no-any-return]
                run_argv,
                env=self.child_env,
                stdout=out_pipe,
                stderr=err_pipe,
                **new_group_options(),
            )
        except OSError as err:
            if self.exporter is not None:  # the dashboard has not started
                self.exporter.close()
            if self.own_steps_file:
                Path(self.steps_file).unlink(missing_ok=True)
            Path(self.events_file).unlink(missing_ok=True)
            if isinstance(err, FileNotFoundError):
                message, status = f"command not found: {self.argv[0]}", 127
            else:
                message = f"command cannot be run: {self.argv[0]} ({err.strerror or err})"
                status = 126
            raise CommandNotFoundError(message, exit_status=status) from err

    def close(self) -> None:
        self.follower.close()
        if self.dashboard is not None:
            self.dashboard.stop()
        if self.exporter is not None:
            self.exporter.close()


def _noter(record: Record) -> Callable[[str], None]:
    def note(text: str) -> None:
        if text not in record.notes:
            record.notes.append(text)

    return note


def _supervise(
    sup: Supervisor,
    session: RecordSession,
    parts: _Parts,
    watchers: Sequence[Watcher],
    on_start: Callable[[Record], None] | None,
) -> int:
    """Sample and wait until the command ends; fill the record; returns the returncode."""
    record, sampler, proc = session.record, session.sampler, sup.proc
    assert sampler is not None and proc is not None
    notes: list[str] = []

    def on_sample(sample: Sample) -> None:
        for w in watchers:
            reason = _call(f"watcher {type(w).__name__}", w.on_sample, sample, notes=notes)
            if reason:
                sup.request_stop(str(reason))

    sampler.add_listener(on_sample)
    if parts.exporter is not None:
        sampler.add_listener(parts.exporter.update)
    returncode: int | None = None
    try:
        for w in watchers:
            bind = getattr(w, "bind", None)
            if callable(bind):
                _call(f"watcher {type(w).__name__}", bind, sup, notes=notes)
            _call(f"watcher {type(w).__name__}", w.on_start, proc.pid, notes=notes)
        session.start()
        if on_start is not None:
            _call("on_start", on_start, record, notes=notes)
        refresh = None
        if parts.dashboard is not None:
            parts.dashboard.attach(sampler, proc)
            parts.dashboard.start()
            refresh = parts.dashboard.refresh
        returncode = sup.wait(0.5 if refresh is not None else 0.1, refresh)
    except BaseException:
        # tfres itself is going down (an internal error): end the command, save what we have
        returncode = sup.abandon()
        raise
    finally:
        session.finish()
        parts.close()
        sup.close()  # what the command left in its group; the terminal back
        _read_steps(record, parts.steps_file, parts.own_steps_file, sampler.t0)
        _read_events(record, parts.events_file, sampler.t0)
        describe_end(record, sup, proc.returncode if returncode is None else returncode)
        record.notes.extend(n for n in notes if n not in record.notes)
        for w in watchers:
            _call(f"watcher {type(w).__name__}", w.on_stop, record, notes=record.notes)
    return returncode


def _steps_file(child_env: dict[str, str]) -> tuple[str, bool]:
    """The file the command's step timers write to (``$TFRES_STEPS_FILE``, see tfres.steps)."""
    if child_env.get("TFRES_STEPS_FILE"):
        return child_env["TFRES_STEPS_FILE"], False
    fd, path = tempfile.mkstemp(prefix="tfres-steps-", suffix=".jsonl")
    os.close(fd)
    child_env["TFRES_STEPS_FILE"] = path
    return path, True


def _read_steps(record: Record, path: str, own: bool, t0: float | None) -> None:
    try:
        from tfres.watch.steps import read_steps_file

        record.steps.extend(read_steps_file(path, t0_monotonic=t0))
    except Exception as err:  # steps are a bonus: never lose the record for them
        log.warning("tfres: could not read the steps file %s: %s", path, err)
    if own:
        try:
            os.unlink(path)
        except OSError:
            pass


def _read_events(record: Record, path: str, t0: float | None) -> None:
    """Phases, notes and the profiler window the instrumented command wrote."""
    try:
        from tfres.watch.steps import read_events_file

        read_events_file(path, record, t0_monotonic=t0)
    except Exception as err:  # a bonus, like the steps
        log.warning("tfres: could not read the events file %s: %s", path, err)
    try:
        os.unlink(path)
    except OSError:
        pass


def record_returncode(record: Record) -> int:
    """The ``Popen.returncode`` a record describes (negative for a signal)."""
    if record.signal:
        try:
            return -int(signal.Signals[record.signal])
        except KeyError:
            return 1
    return int(record.exit_code or 0)
