"""The ``tfres`` command line: a thin client of the Python API.

Each subcommand lives in its own module under ``tfres.cli`` with a ``register(subparsers)``
function; the handler it sets parses nothing more and calls the library. Errors:
a :class:`~tfres.errors.TfresError` prints ``tfres: error: ...`` and exits 1, a usage error
exits 2, and a traceback is shown only with ``TFRES_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from tfres import __version__
from tfres.errors import TfresError

__all__ = ["main", "build_parser"]

#: subcommand modules, in the order ``tfres --help`` lists them
COMMAND_MODULES = (
    "tfres.cli.env",
    "tfres.cli.bench",
    "tfres.cli.run",
    "tfres.cli.runs",
    "tfres.cli.report",
    "tfres.cli.compare",
    "tfres.cli.push",
    "tfres.cli.import_records",
    "tfres.cli.export",
    "tfres.cli.batchsize",
    "tfres.cli.placement",
)

DESCRIPTION = """\
See and control how TensorFlow and Keras programs use CPU, GPU and memory.

common tasks:
  tfres doctor                      why is my GPU not used? what is misconfigured?
  tfres env                         fingerprint this machine (hardware, drivers, TF, BLAS)
  tfres bench --quick               run the standard workloads and write a report
  tfres run -- python train.py      record a CPU/GPU/memory timeline of any program
  tfres compare 3 7                 explain why two runs or two machines differ
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfres",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'tfres COMMAND --help' for a command's options and examples. "
        "Set TFRES_DEBUG=1 to see tracebacks.",
    )
    parser.add_argument("--version", action="version", version=f"tfres {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _debug() -> bool:
    return os.environ.get("TFRES_DEBUG", "") not in ("", "0", "false", "no")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 error, 2 usage, or a child's status)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except TfresError as err:
        if _debug():
            raise
        print(f"tfres: error: {err}", file=sys.stderr)
        return 1
    except ValueError as err:
        if _debug():
            raise
        print(f"tfres: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tfres: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (tfres runs | head): not an error of ours
        sys.stderr.close()
        return 0
    except Exception as err:
        if _debug():
            raise
        print(
            f"tfres: internal error: {type(err).__name__}: {err} "
            "(set TFRES_DEBUG=1 for the traceback and please report it)",
            file=sys.stderr,
        )
        return 1
