"""A tiny real ``libcdsprpc.so`` for x86: rpcmem over host memory, every call logged.

The board's FastRPC library cannot exist here, so the tests compile this one with
``cc`` and load it through qnnrt's own ctypes path (``LD_LIBRARY_PATH`` in a child
process).  Each call writes one ``rpcmem_stub: ...`` line straight to fd 2, so it
interleaves in order with the child's Python log lines on stderr.
``RPCMEM_STUB_NO_FD=1`` makes ``rpcmem_to_fd`` answer -1.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = r"""
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void say(const char *fmt, ...) {
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
    if (n > 0) (void)!write(2, buf, (size_t)n);
}

struct block { void *p; int fd; };
static struct block blocks[256];

void rpcmem_init(void) { say("rpcmem_stub: init\n"); }
void rpcmem_deinit(void) { say("rpcmem_stub: deinit\n"); }

void *rpcmem_alloc(int heap, uint32_t flags, int size) {
    void *p = NULL;
    if (size <= 0 || posix_memalign(&p, 4096, (size_t)size)) return NULL;
    for (int i = 0; i < 256; i++)
        if (!blocks[i].p) {
            blocks[i].p = p;
            blocks[i].fd = memfd_create("rpcmem_stub", 0);
            break;
        }
    say("rpcmem_stub: alloc heap=%d flags=%u size=%d -> %p\n", heap, flags, size, p);
    return p;
}

int rpcmem_to_fd(void *p) {
    int fd = -1;
    for (int i = 0; i < 256; i++)
        if (blocks[i].p == p) fd = blocks[i].fd;
    if (getenv("RPCMEM_STUB_NO_FD")) fd = -1;
    say("rpcmem_stub: to_fd %p -> %d\n", p, fd);
    return fd;
}

void rpcmem_free(void *p) {
    say("rpcmem_stub: free %p\n", p);
    for (int i = 0; i < 256; i++)
        if (blocks[i].p == p) {
            close(blocks[i].fd);
            blocks[i].p = NULL;
        }
    free(p);
}
"""

LINE = re.compile(r"rpcmem_stub: (\w+)(.*)")


def build(out_dir: Path, name: str = "libcdsprpc.so") -> Path:
    cc = shutil.which("cc")
    if cc is None:
        pytest.fail("the rpcmem tests need a C compiler (apt-get install gcc)")
    out_dir.mkdir(parents=True, exist_ok=True)
    src = out_dir / "cdsprpc_stub.c"
    src.write_text(SOURCE)
    lib = out_dir / name
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-Wall", "-o", str(lib), str(src)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return lib


def calls(stderr: str) -> list[tuple[str, str]]:
    """(call, rest) of each stub line, in order."""
    return [(m[1], m[2].strip()) for m in map(LINE.search, stderr.splitlines()) if m]
