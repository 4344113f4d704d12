"""``tfres env`` (the machine fingerprint) and ``tfres doctor`` (checks with fixes)."""

from __future__ import annotations

import argparse

from tfres.cli._common import add_json_option, add_store_option, console, print_json
from tfres.machine.doctor import doctor, exit_status
from tfres.machine.fingerprint import Fingerprint, fingerprint
from tfres.report.machine import checks_json, render_checks, render_fingerprint
from tfres.store import resolve_record

ENV_EPILOG = """\
examples:
  tfres env                       tables: host, CPU, memory, GPUs, TensorFlow, BLAS, env, load
  tfres env --json > machine.json the same as JSON, for scripts and bug reports
  tfres env --no-tensorflow       skip importing TensorFlow (faster; no TF device list)

Environment variables whose names suggest a secret (TOKEN, KEY, SECRET, PASSWORD, ...)
are never captured."""

DOCTOR_EPILOG = """\
examples:
  tfres doctor                    run every check on this machine
  tfres doctor --json             the checks as JSON
  tfres doctor --record 3         check the machine that run 3 ran on (from its fingerprint)

Exit status: 1 when a check fails, 0 otherwise (warnings included)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "env",
        help="fingerprint this machine: hardware, cgroups, GPUs, TensorFlow, BLAS, env",
        description="Print the machine fingerprint that every tfres record starts with: "
        "CPU (cores, ISA flags, affinity, cgroup quota), memory (and cgroup limit), NVIDIA "
        "GPUs through NVML, TensorFlow build and devices (without starting its runtime), "
        "numpy's BLAS threads, behaviour-changing environment variables and background load.",
        epilog=ENV_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--no-tensorflow",
        action="store_true",
        help="do not import TensorFlow (its version and build still come from the package)",
    )
    p.add_argument(
        "--no-processes", action="store_true", help="skip the top processes by CPU and memory"
    )
    add_json_option(p)
    p.set_defaults(func=cmd_env)

    p = sub.add_parser(
        "doctor",
        help="why is my GPU not used? what is misconfigured? checks with fixes",
        description="Check this machine for what makes TensorFlow slow or not use the GPU: "
        "TensorFlow installed and built with CUDA, an NVIDIA GPU that TensorFlow cannot see "
        "(and which known cause applies), the TF/CUDA/cuDNN pairing, the driver, GPU memory "
        "held by other processes, container CPU quota vs threads, thread oversubscription, "
        "swap and free memory. Each check prints its evidence and a fix.",
        epilog=DOCTOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--record",
        metavar="RUN",
        default=None,
        help="check the fingerprint stored in this record (store number, id or file)",
    )
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(func=cmd_doctor)


# -- tfres env ---------------------------------------------------------------------------
def cmd_env(args: argparse.Namespace) -> int:
    fp = fingerprint(
        tensorflow=True,
        import_tensorflow=not args.no_tensorflow,
        processes=not args.no_processes,
    )
    if args.json:
        print_json(fp.to_dict())
        return 0
    render_fingerprint(fp.to_dict(), console())
    return 0


# -- tfres doctor ------------------------------------------------------------------------
def cmd_doctor(args: argparse.Namespace) -> int:
    fp = None
    if args.record is not None:
        record = resolve_record(args.record, store=args.store)
        if not record.fingerprint:
            raise ValueError(f"record {args.record!r} has no fingerprint to check")
        fp = Fingerprint.from_dict(record.fingerprint)
    checks = doctor(fp=fp)
    status = exit_status(checks)
    if args.json:
        print_json(checks_json(checks))
        return status
    render_checks(checks, console())
    return status
