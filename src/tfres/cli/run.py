"""``tfres run [options] -- COMMAND ...``: record a CPU/GPU/memory timeline of any command."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tfres.budget.command import BudgetWatcher
from tfres.budget.watchdog import parse_budget
from tfres.cli._common import (
    add_store_option,
    console,
    interval_arg,
    size_arg,
    thread_count_arg,
)
from tfres.cli.push import add_mlflow_option, after_mlflow, make_sink
from tfres.devices.child_env import child_environment
from tfres.report.terminal import render_run_summary
from tfres.units import parse_seconds
from tfres.watch.command import CommandNotFoundError, check_run_interval, watch
from tfres.watch.prometheus import parse_address

DESCRIPTION = """\
Run COMMAND as a child and record a timeline of its whole process tree (CPU, threads, RSS),
the host (per-core CPU, memory, swap, disk, network), every GPU it can see (NVML) and, at
the end, a diagnosis. The record is saved to the local store even when the command fails
(marked failed) or is interrupted (partial); --out and the store are checked before the
command starts. The command leads a process group of its own: Ctrl-C at the terminal, and
SIGTERM, SIGHUP or SIGINT sent to tfres, reach its whole tree (workers included). A tree
still running --grace seconds (default 10) after that gets SIGKILL; a second signal to tfres
sends SIGKILL at once. tfres exits with the command's own status (128+N when a signal N
ended it), or 1 when the command succeeded but its record could not be saved where asked.
tfres writes only to stderr, so the command's stdout stays clean. On Linux the tree is read
from /proc (a new worker is seen within one interval; CPU of exited workers counts); on
macOS and Windows psutil looks for new workers once a second, and cgroup limits are absent.
What watching costs, measured: docs/benchmarks/overhead.md.
A Python command gets tfres's start-up hook (no change to the script, --no-instrument to
turn it off): phases (TensorFlow's import, set-up, each epoch, evaluation, saves), Keras and
custom-loop steps, and input wait measured in a short profiler window: docs/instrumentation.md.
"""

EPILOG = """\
examples:
  tfres run -- python train.py
  tfres run --label exp1 --interval 250ms --out exp1.json -- python train.py --epochs 3
  tfres run --live -- python train.py                  terminal dashboard while it runs
  tfres run --gpus 0,1 --prometheus 9100 -- python train.py
  tfres run --memory-budget 80% --cpu-threads 4 -- python train.py
  tfres run --job resnet --worker 0 -- python train.py
  tfres run --profile 10:20 -- python train.py          TensorBoard profile of steps 10-20
then: tfres show 1, tfres export 1 --format csv, tfres report 1
"""


def _gpu_list(text: str) -> list[int]:
    """argparse type for ``0,1``: NVML indices."""
    try:
        values = [int(part) for part in text.split(",") if part.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1 (got {text!r})") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected GPU indices like 0,1 (got {text!r})")
    return values


def _worker_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a worker number >= 0 (got {text!r})") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a worker number >= 0 (got {text!r})")
    return value


def _budget_arg(text: str) -> int:
    """The budget in bytes, parsed once (a percentage is of this machine's memory)."""

    try:
        return parse_budget(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err}; e.g. --memory-budget 8GiB or 80%") from None


def _run_interval_arg(text: str) -> float:
    """``--interval``: as everywhere, and at least 10 ms."""

    value = interval_arg(text)
    try:
        return check_run_interval(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err}; e.g. --interval 0.1 or 250ms") from None


def _grace_arg(text: str) -> float:

    try:
        value = parse_seconds(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err}; e.g. --grace 10 or 30s") from None
    if not 0 <= value <= 3600:
        raise argparse.ArgumentTypeError(f"--grace must be 0 to 3600 seconds (got {text!r})")
    return value


def _profile_arg(text: str) -> tuple[int, int]:
    """``--profile 10:20``: the first and last train step of the profiler window."""
    first, sep, last = text.partition(":")
    try:
        window = (int(first), int(last)) if sep else None
    except ValueError:
        window = None
    if window is None or window[0] < 0 or window[1] < window[0]:
        raise argparse.ArgumentTypeError(
            f"expected FIRST:LAST train steps with 0 <= FIRST <= LAST, e.g. 10:20 (got {text!r})"
        )
    return window


def _address_arg(text: str) -> str:

    try:
        parse_address(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="record a CPU/GPU/memory timeline of any command",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="tfres run [options] -- COMMAND [ARG ...]",
    )
    p.add_argument("--label", default=None, help="a name for this run (shown by tfres runs)")
    p.add_argument(
        "--interval",
        type=_run_interval_arg,
        default=0.1,
        metavar="SECONDS",
        help="time between samples: 0.1, 250ms, 2s (default: 0.1; 10ms to 1 hour)",
    )
    p.add_argument(
        "--grace",
        type=_grace_arg,
        default=10.0,
        metavar="SECONDS",
        help="how long the command's tree has after SIGTERM before SIGKILL (default: 10)",
    )
    p.add_argument("--out", metavar="FILE", default=None, help="also write the record to FILE")
    p.add_argument(
        "--gpus",
        type=_gpu_list,
        default=None,
        metavar="0,1",
        help="GPUs to read, as NVML indices (default: all the command can see)",
    )
    p.add_argument("--no-store", action="store_true", help="do not save the record in the store")
    add_store_option(p)
    p.add_argument("--live", action="store_true", help="show a live dashboard while it runs")
    p.add_argument(
        "--prometheus",
        type=_address_arg,
        default=None,
        metavar="[HOST:]PORT",
        help="serve live metrics for Prometheus (on 127.0.0.1 unless HOST is given)",
    )
    add_mlflow_option(p, "send the run to MLflow as it goes: system metrics, findings, the record")
    p.add_argument(
        "--no-instrument",
        action="store_true",
        help="do not inject tfres's start-up hook (Keras steps, input wait, phases)",
    )
    p.add_argument(
        "--profile",
        type=_profile_arg,
        default=None,
        metavar="A:B",
        help="write a TensorBoard profile of train steps A to B (e.g. 10:20) to --profile-dir",
    )
    p.add_argument(
        "--profile-dir",
        default="tfres-profile",
        metavar="DIR",
        help="where --profile writes (default: ./tfres-profile; open with tensorboard --logdir)",
    )
    control = p.add_argument_group("control (passed to the command's TensorFlow)")
    control.add_argument("--gpu-growth", action="store_true", help="allocate GPU memory as needed")
    control.add_argument(
        "--gpu-memory-limit", type=size_arg, default=None, metavar="SIZE", help="e.g. 4GiB per GPU"
    )
    control.add_argument(
        "--visible-gpus", type=_gpu_list, default=None, metavar="0,1", help="GPUs TF may use"
    )
    control.add_argument(
        "--cpu-threads", type=thread_count_arg, default=None, metavar="N", help="intra-op threads"
    )
    control.add_argument(
        "--inter-op-threads",
        type=thread_count_arg,
        default=None,
        metavar="N",
        help="inter-op threads",
    )
    control.add_argument(
        "--memory-budget",
        type=_budget_arg,
        default=None,
        metavar="SIZE|PCT",
        help="stop the command before its tree's memory reaches this (8GiB, 80%%): SIGTERM "
        "(or, with --checkpoint, SIGUSR1) at 90%% or when the trend would reach it",
    )
    control.add_argument(
        "--checkpoint",
        default=None,
        metavar="PATH",
        help="with --memory-budget: ask a Keras fit to stop at the next batch and save a "
        "checkpoint to PATH (TFRES_CHECKPOINT, SIGUSR1) before stopping it",
    )
    job = p.add_argument_group("multi-worker jobs")
    job.add_argument("--job", default=None, metavar="NAME", help="the job this run is a worker of")
    job.add_argument("--worker", type=_worker_arg, default=None, metavar="N", help="worker index")
    p.add_argument("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_run)


def _control(args: argparse.Namespace) -> tuple[dict[str, str], list[str]]:
    wanted = (
        args.gpu_growth
        or args.gpu_memory_limit is not None
        or args.visible_gpus is not None
        or args.cpu_threads is not None
        or args.inter_op_threads is not None
    )
    if not wanted:
        return {}, []

    env, description = child_environment(
        gpu_memory_growth=True if args.gpu_growth else None,
        gpu_memory_limit_bytes=args.gpu_memory_limit,
        visible_gpus=args.visible_gpus,
        intra_op_threads=args.cpu_threads,
        inter_op_threads=args.inter_op_threads,
    )
    return dict(env), list(description)


def _watchers(args: argparse.Namespace) -> list[Any]:
    if args.memory_budget is None:
        return []

    return [BudgetWatcher(args.memory_budget, checkpoint=args.checkpoint, grace_seconds=args.grace)]


def cmd_run(args: argparse.Namespace) -> int:

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise ValueError("no command given: write it after --, e.g. tfres run -- python train.py")
    if args.worker is not None and args.job is None:
        raise ValueError(
            f"--worker {args.worker} needs --job NAME (the job it is a worker of), "
            f"e.g. tfres run --job resnet --worker {args.worker} -- CMD"
        )
    if args.profile is not None and args.no_instrument:
        raise ValueError(
            "--profile needs tfres's start-up hook in the command: drop --no-instrument"
        )
    env, description = _control(args)
    if args.checkpoint is not None:
        if args.memory_budget is None:
            raise ValueError("--checkpoint needs --memory-budget: it is how the budget stops a fit")
        from tfres.session import check_output_path

        check_output_path(args.checkpoint, what="--checkpoint")
        env["TFRES_CHECKPOINT"] = str(args.checkpoint)
    watchers = _watchers(args)
    control: dict[str, Any] = {}
    if description:
        control["devices"] = description
        control["environment"] = env
    store: bool | str = False if args.no_store else (args.store or True)
    sink = make_sink(args)  # --mlflow: streamed from its own thread; a failure is one warning
    if sink is not None:
        env, watchers = {**env, **sink.child_env()}, [*watchers, sink]
    try:
        result = watch(
            command,
            label=args.label,
            interval=args.interval,
            gpus=args.gpus if args.gpus is not None else True,
            env=env,
            watchers=watchers,
            store=store,
            out=args.out,
            live=args.live,
            prometheus=args.prometheus,
            job=args.job,
            worker=args.worker,
            control=control,
            grace_seconds=args.grace,
            on_start=_announce,
            instrument=not args.no_instrument,
            profile=args.profile,
            profile_dir=args.profile_dir,
        )
    except CommandNotFoundError as err:
        print(f"tfres: error: {err}", file=sys.stderr)
        return err.exit_status
    _summary(result)
    if sink is not None:
        after_mlflow(sink.finish(result.record), result.record, result.store_number, args)
    if result.store_error and result.exit_status == 0:
        return 1  # the command did its work, but its record is not where it was asked to go
    return result.exit_status


def _announce(record: Any) -> None:
    url = record.extra.get("prometheus_url")
    if url:
        print(f"tfres: Prometheus metrics at {url}", file=sys.stderr, flush=True)


def _summary(result: Any) -> None:
    """A few lines on stderr: how it ended, what it used, what to look at, where it is."""
    table = render_run_summary(
        result.record, store_number=result.store_number, store_error=result.store_error
    )
    console(stderr=True).print(table)
