"""Options and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

from tfres.units import parse_seconds, parse_size

__all__ = [
    "add_json_option",
    "add_store_option",
    "console",
    "print_json",
    "interval_arg",
    "size_arg",
    "positive_int_arg",
]


def add_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="PATH",
        default=None,
        help="the SQLite store to use "
        "(default: $TFRES_STORE, else ~/.local/share/tfres/store.sqlite)",
    )


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
    from tfres.sampler.sampler import check_interval

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


def positive_int_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number (got {text!r})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0 (got {text!r})")
    return value
