"""Options and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

from tfres.sampler.sampler import check_interval
from tfres.store import resolve_record
from tfres.units import parse_seconds, parse_size

__all__ = [
    "add_json_option",
    "add_store_option",
    "console",
    "print_json",
    "interval_arg",
    "size_arg",
    "positive_int_arg",
    "bounded_int_arg",
    "thread_count_arg",
    "output_file_arg",
    "check_output_file",
    "check_output_folder",
    "resolve_ref",
]


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH",
        default=None,
        help="the SQLite store to use "
        "(default: $TFRES_STORE, else ~/.local/share/tfres/store.sqlite)",
    )


def resolve_ref(ref: str, *, store: str | None = None, mlflow: str | None = None) -> Any:
    """The record ``ref`` names: a store number, an id (or prefix), a file, or ``mlflow:RUN_ID``.

    ``mlflow:`` runs are read from ``mlflow`` (a tracking URI), else ``$MLFLOW_TRACKING_URI``.
    """
    if ref.startswith("mlflow:"):
        from tfres.export.mlflow import load_record
        from tfres.watch.mlflow import tracking_uri

        return load_record(ref, tracking_uri(mlflow))

    return resolve_record(ref, store=store)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print JSON for machines instead of tables"
    )


def console(*, stderr: bool = False) -> Console:
    """A rich console; tables are at most 100 columns wide so they fit a default terminal."""
    c = Console(stderr=stderr, highlight=False, soft_wrap=False)
    if c.width > 100:
        c.width = 100
    return c


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


def interval_arg(text: str) -> float:
    """argparse type for a sampling interval: > 0 and at most an hour."""

    try:
        return check_interval(parse_seconds(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"{err}; e.g. --interval 0.1 or --interval 250ms"
        ) from None


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


#: the largest count any option takes: TensorFlow holds thread counts and sizes in 32 bits
MAX_COUNT = 2**31 - 1
#: the most threads a pool may be given: more than any machine has cores
MAX_THREADS = 4096


def positive_int_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number (got {text!r})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0 (got {text!r})")
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(f"expected a number up to {MAX_COUNT} (got {text!r})")
    return value


def thread_count_arg(text: str) -> int:
    """argparse type for a thread pool size: 1 to :data:`MAX_THREADS`."""
    value = positive_int_arg(text)
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(
            f"expected at most {MAX_THREADS} threads (got {text!r}); "
            "a pool larger than the machine's cores only adds overhead"
        )
    return value


def bounded_int_arg(low: int, high: int) -> Any:
    """argparse type for a whole number from ``low`` to ``high``: ``--limit 5``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number (got {text!r})") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected a number from {low} to {high} (got {text!r})"
            )
        return value

    return parse


def output_file_arg(text: str) -> str:
    """argparse type for a file to write: not empty (its folder is checked by the command)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file name (got {text!r})")
    return text


def _nearest_folder(path: Path) -> Path:
    """The nearest existing ancestor of ``path`` (the folders up to it are made on writing)."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _probe_folder(folder: Path, option: str, value: str) -> None:
    """Raise ``ValueError`` unless a file can be made in ``folder`` (tried, then removed)."""
    if not folder.is_dir():
        raise ValueError(f"cannot write {option} {value}: {folder} is not a folder")
    try:
        fd, name = tempfile.mkstemp(prefix=".tfres-probe-", dir=folder)
    except OSError as err:
        raise ValueError(
            f"cannot write {option} {value}: no file can be made in {folder} "
            f"({err.strerror or err}); pick another path"
        ) from None
    os.close(fd)
    os.unlink(name)


def check_output_file(value: str | None, option: str) -> None:
    """Check, before any work, that the file ``option`` names can be written.

    ``ValueError`` (a usage error) names the option and the value: an empty name, a folder,
    something that is not a regular file (``/dev/null``), or a folder tfres cannot write to.
    """
    if value is None:
        return
    if not value.strip():
        raise ValueError(f"{option} needs a file name (got {value!r})")
    path = Path(value).expanduser()
    if path.is_dir():
        raise ValueError(f"cannot write {option} {value}: it is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise ValueError(
            f"cannot write {option} {value}: it is not a regular file; "
            "give the name of a file to write"
        )
    _probe_folder(_nearest_folder(path), option, value)


def check_output_folder(value: str | None, option: str) -> None:
    """Like :func:`check_output_file` for a folder to write files into (``--tensorboard``)."""
    if value is None:
        return
    if not value.strip():
        raise ValueError(f"{option} needs a folder name (got {value!r})")
    path = Path(value).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"cannot write {option} {value}: it is a file, not a folder")
    _probe_folder(path if path.is_dir() else _nearest_folder(path), option, value)
