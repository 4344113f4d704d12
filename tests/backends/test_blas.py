"""tfres.backends.blas: numpy and its thread pools, compared with threadpoolctl itself."""

from __future__ import annotations

import numpy
from threadpoolctl import threadpool_info, threadpool_limits

from tfres.backends import blas


def test_numpy_version():
    assert blas.numpy_facts() == {"source": "numpy.__version__", "version": numpy.__version__}


def test_pools_match_threadpoolctl():
    pools = blas.blas_pools()
    info = threadpool_info()
    assert len(pools) == len(info) >= 1  # numpy always loads a BLAS
    for mine, theirs in zip(pools, info, strict=True):
        assert set(mine) == set(blas.BLAS_KEYS)
        for key in blas.BLAS_KEYS:
            assert mine[key] == theirs.get(key)
    assert any(p["user_api"] == "blas" for p in pools)


def test_thread_count_follows_a_limit():
    with threadpool_limits(limits=1, user_api="blas"):
        pools = [p for p in blas.blas_pools() if p["user_api"] == "blas"]
        assert pools and all(p["num_threads"] == 1 for p in pools)
