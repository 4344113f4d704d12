"""``tfres placement``: time a function on each device and say where it should run."""

from __future__ import annotations

import argparse

from tfres.cli._common import add_json_option, console, positive_int_arg, print_json
from tfres.placement.advisor import advise_placement
from tfres.placement.target import load_target
from tfres.report.placement import render_advice

EPILOG = """\
examples:
  tfres placement model.py:predict --args model.py:make_batch
  tfres placement model.py:predict --args model.py:make_batch --devices CPU:0,GPU:0
  tfres placement model.py:predict --args model.py:make_batch --logical-cpus 2 --json

FUNCTION is 'path/to/script.py:name' or 'package.module:name'. --args names a function
that returns the example arguments (a tuple, or one value); without it FUNCTION is called
with no arguments. Each call is timed in three parts: input transfer to the device,
compute, output transfer back; warm-up calls are dropped and medians compared.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "placement",
        help="time a function on each device and say where it should run",
        description=(
            "Time a TensorFlow function on each logical device (CPU, each GPU), with\n"
            "transfers shown apart from compute; say where it should run and by how much,\n"
            "and list where TensorFlow placed its ops."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("function", metavar="FUNCTION", help="script.py:function to time")
    p.add_argument(
        "--args",
        metavar="SCRIPT:FN",
        default=None,
        help="a function returning the example arguments (e.g. model.py:make_batch)",
    )
    p.add_argument(
        "--devices",
        metavar="LIST",
        default=None,
        help="devices to time, e.g. CPU:0,GPU:0 (default: every logical CPU and GPU)",
    )
    p.add_argument(
        "--logical-cpus",
        metavar="N",
        type=positive_int_arg,
        default=None,
        help="split the CPU into N logical devices first (to compare CPU:0 and CPU:1)",
    )
    p.add_argument(
        "--repeats",
        metavar="N",
        type=positive_int_arg,
        default=10,
        help="timed calls per device (default: 10)",
    )
    p.add_argument(
        "--warmup",
        metavar="N",
        type=int,
        default=2,
        help="untimed calls per device first (default: 2)",
    )
    p.add_argument(
        "--no-placement-log",
        action="store_true",
        help="skip reading where TensorFlow placed each op",
    )
    add_json_option(p)
    p.set_defaults(func=cmd_placement)


def cmd_placement(args: argparse.Namespace) -> int:

    if args.warmup < 0:
        raise ValueError(f"--warmup must be >= 0 (got {args.warmup})")
    fn, example = load_target(args.function, args_ref=args.args, logical_cpus=args.logical_cpus)
    err = console(stderr=True)
    with err.status(f"timing {args.function} on each device...", spinner="dots"):
        advice = advise_placement(
            fn,
            *example,
            devices=args.devices,
            repeats=args.repeats,
            warmup=args.warmup,
            placement_log=not args.no_placement_log,
        )
    if args.json:
        print_json(advice.to_dict())
        return 0
    render_advice(advice, console())
    return 0
