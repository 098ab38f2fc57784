"""The daemon fixes glibc's mmap threshold: a large block freed does not turn later large blocks into heap memory
that stays in RSS once freed (what a scrape's buffers did)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# In a child process (the setting is process-wide): free a 16 MiB block, then count how a 1 MiB block is allocated.
CHILD = """
import ctypes, sys
sys.path.insert(0, {root!r})
libc = ctypes.CDLL(None)
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
if {fix}:
    from probe.daemon import fixed_mmap_threshold
    assert fixed_mmap_threshold()
libc.free(libc.malloc(16 << 20))  # mmapped, then freed: glibc's dynamic threshold rises to 16 MiB
before = libc.mallinfo2().hblks
block = libc.malloc(1 << 20)
print(libc.mallinfo2().hblks - before)  # 1: mmapped (returned to the system on free); 0: from the heap
libc.free(block)
"""


def _mmapped_after_a_large_free(fix: bool) -> int:
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}  # glibc's defaults
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=root, fix=fix)], capture_output=True, text=True,
                         timeout=60, check=True, env=env)
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_large_blocks_stay_mmapped_after_a_large_free() -> None:
    assert _mmapped_after_a_large_free(fix=False) == 0  # glibc's default: the threshold rose, the block is heap
    assert _mmapped_after_a_large_free(fix=True) == 1
