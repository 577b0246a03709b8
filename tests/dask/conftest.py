"""The Dask test modules' cluster: a ``dask.distributed`` LocalCluster of two worker
processes on loopback, one per test module."""
import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c
