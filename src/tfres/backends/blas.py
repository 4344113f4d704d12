"""numpy and the BLAS/OpenMP thread pools it loaded, through threadpoolctl.

threadpoolctl inspects the native libraries loaded in this process, so numpy is imported
first (that is what loads its BLAS). Each pool is reported the way ``threadpoolctl --i
numpy`` shows it.

    >>> blas_pools()[0]["internal_api"], blas_pools()[0]["num_threads"]
    ('openblas', 8)
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["numpy_facts", "blas_pools", "BLAS_KEYS"]

log = logging.getLogger("tfres")

#: the keys kept from each threadpoolctl entry (absent ones are None)
BLAS_KEYS = (
    "user_api",
    "internal_api",
    "version",
    "num_threads",
    "architecture",
    "prefix",
    "filepath",
)


def numpy_facts() -> dict[str, Any]:
    """The ``numpy`` section: ``{"version", "source"}``; version ``None`` without numpy."""
    try:
        import numpy
    except ImportError as err:
        reason = f"numpy cannot be imported: {err}"
        return {"source": "import numpy", "version": None, "error": reason}
    return {"source": "numpy.__version__", "version": str(numpy.__version__)}


def blas_pools() -> list[dict[str, Any]]:
    """The thread pools of the native libraries loaded here (BLAS, OpenMP), via threadpoolctl.

    Each: ``internal_api`` (openblas, mkl, blis, openmp...), ``version``, ``num_threads``,
    ``architecture`` (the CPU kernel set OpenBLAS picked, e.g. "SkylakeX"), ``prefix``,
    ``filepath``, ``user_api`` ("blas" or "openmp"). Empty when numpy or threadpoolctl is
    missing (the caller records why).
    """
    try:
        import numpy  # noqa: F401  (loads numpy's BLAS so threadpoolctl can see it)
    except ImportError:
        log.debug("numpy is not installed: no BLAS to inspect")
    from threadpoolctl import threadpool_info

    pools = []
    for entry in threadpool_info():
        pools.append({key: entry.get(key) for key in BLAS_KEYS})
    return pools
