"""The free-memory check of ``compute_covariance`` (issue 13, item 10).

It read ``SC_AVPHYS_PAGES`` (``MemFree``), which leaves out the reclaimable page cache:
it refused 6 GB with 23.8 GB available, and failed the wide-model covariance test under
load. It reads ``MemAvailable`` from ``/proc/meminfo`` now, ``sysconf`` where that is
missing.
"""
import pytest

import problin.glm._diagnostics as diagnostics

GB = 10 ** 9


def _machine(monkeypatch, tmp_path, meminfo, free_pages):
    """A machine whose /proc/meminfo reads ``meminfo`` (None: no such file) and whose
    sysconf counts ``free_pages`` free pages of 4096 bytes."""
    path = tmp_path / "meminfo"
    if meminfo is not None:
        path.write_text(meminfo)
    monkeypatch.setattr(diagnostics, "_MEMINFO", str(path), raising=False)
    pages = {"SC_AVPHYS_PAGES": free_pages, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(diagnostics.os, "sysconf", lambda name: pages[name])


def _params_needing(gb):
    """Parameters whose three p x p matrices take ``gb`` GB."""
    return int((gb * GB / 24) ** 0.5)


def test_page_cache_counts_as_available(monkeypatch, tmp_path):
    # The machine: 23.8 GB available, little of it free (the rest page cache).
    _machine(monkeypatch, tmp_path, "MemTotal:       32000000 kB\nMemFree:         "
             "2000000 kB\nMemAvailable:   23242188 kB\nCached:         20000000 kB\n",
             free_pages=2 * GB // 4096)
    assert diagnostics.available_memory() == 23242188 * 1024
    diagnostics.check_fits_in_memory(_params_needing(6))  # 6 GB of 23.8: accepted
    with pytest.raises(MemoryError, match=r"needs 14\.0 GB .* only 23\.8 GB of memory is "
                                          r"available"):
        diagnostics.check_fits_in_memory(_params_needing(14))  # over half


def test_sysconf_where_there_is_no_meminfo(monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, None, free_pages=4 * GB // 4096)
    assert diagnostics.available_memory() == 4 * GB // 4096 * 4096
    diagnostics.check_fits_in_memory(_params_needing(1.5))
    with pytest.raises(MemoryError, match="information matrix needs"):
        diagnostics.check_fits_in_memory(_params_needing(3))
    # a /proc/meminfo without MemAvailable (Linux before 3.14): sysconf as well
    _machine(monkeypatch, tmp_path, "MemTotal: 8000000 kB\nMemFree: 100 kB\n",
             free_pages=4 * GB // 4096)
    assert diagnostics.available_memory() == 4 * GB // 4096 * 4096

