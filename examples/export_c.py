"""Export a kernel to a shared library and call it from C (no Python in the C program).

``kernel.export_library("libsaxpy.so")`` links the machine code into a shared library and
writes ``libsaxpy.h``: a plain-C entry ``saxpy_c(int32_t n, const float *X, float *Y,
float a)`` (raw pointers, scalars by value; a symbolic extent that no parameter gives would be
an ``int64_t``) returning 0 or an error code, with ``saxpy_c_last_error()`` for the message.
This script compiles a small C program with the system ``cc`` and compares its output with
numpy; without ``cc`` it says so and stops.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import tvmscript
from tvmscript import tir as T


@T.prim_func
def saxpy(
    n: T.int32,
    X: T.Buffer((n,), "float32"),  # noqa: F821  (n is the parameter above)
    Y: T.Buffer((n,), "float32"),  # noqa: F821
    a: T.float32,
) -> None:
    assert n >= 0, "saxpy: n must be >= 0"
    for i in range(n):
        Y[i] = a * X[i] + Y[i]


MAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "libsaxpy.h"

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++) { x[i] = (float)i * 0.5f; y[i] = 1.0f; }
    int rc = saxpy_c(n, x, y, 2.0f);
    if (rc != 0) { fprintf(stderr, "error %d: %s\n", rc, saxpy_c_last_error()); return 1; }
    for (int i = 0; i < n; i++) printf("%.9g\n", y[i]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < 1000; r++) saxpy_c(n, x, y, 2.0f);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "%.9f\n", ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) / 1000);
    rc = saxpy_c(-1, x, y, 2.0f);  /* a failed assert is an error code and a message */
    fprintf(stderr, "%d %s\n", rc, saxpy_c_last_error());
    free(x); free(y);
    return 0;
}
"""


def main() -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("skipped: no C compiler (cc) on PATH to build the C program")
        return
    n = 10_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        library = tvmscript.build(saxpy).export_library(folder / "libsaxpy.so")
        print(f"exported {library.name} and {library.with_suffix('.h').name}")
        (folder / "main.c").write_text(MAIN_C)
        subprocess.run(
            [cc, "-O2", "-Wall", "-Werror", "-o", str(folder / "main"), str(folder / "main.c"),
             f"-L{folder}", "-lsaxpy", f"-Wl,-rpath,{folder}"],
            check=True,
        )
        run = subprocess.run([str(folder / "main"), str(n)], capture_output=True, text=True,
                             check=True)
    y = np.array(run.stdout.split(), dtype=np.float32)
    x = np.arange(n, dtype=np.float32) * np.float32(0.5)
    np.testing.assert_array_equal(y, np.float32(2) * x + np.float32(1))
    print("the C program's saxpy matches numpy")
    c_seconds, error = run.stderr.splitlines()
    print(f"error path from C: {error}")
    yy = np.ones(n, np.float32)
    start = time.perf_counter()
    for _ in range(1000):
        yy += np.float32(2) * x
    numpy_seconds = (time.perf_counter() - start) / 1000
    print(f"saxpy n={n}: C calling tvmscript {float(c_seconds) * 1e6:.1f} us, "
          f"numpy {numpy_seconds * 1e6:.1f} us")


if __name__ == "__main__":
    main()
