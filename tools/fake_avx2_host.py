"""A pytest plugin that makes this process see an AVX2 host (LLVM's ``haswell``): the host
CPU name and features llvmlite reports lose AVX-512, AMX and the other newer extensions.
Haswell code runs on any AVX-512 machine, so the whole suite can be checked for tests that
depend on the host on one machine:

    PYTHONPATH=tools .venv/bin/python -m pytest -p fake_avx2_host

(docs/target.md, "Tests"). Development only: never imported by the packages."""
import llvmlite.binding as llvm

_real_features = llvm.get_host_cpu_features
_DROP = ("avx512", "amx", "avx10", "avxvnni", "vaes", "vpclmulqdq", "gfni", "sha", "clwb",
         "rdpid", "movdir", "serialize", "tsxldtrk", "cldemote", "prefetchi", "waitpkg",
         "ptwrite", "uintr", "enqcmd", "pconfig", "pku", "wbnoinvd", "xsavec", "xsaves",
         "clflushopt", "adx", "rdseed", "prfchw", "avxifma", "avxneconvert", "hreset", "kl",
         "widekl", "sgx", "shstk", "fsgsbase", "invpcid", "rtm")


def _features():
    fm = _real_features()
    for k in list(fm.keys()):
        if any(k.startswith(d) for d in _DROP) and k not in ("sahf",):
            fm[k] = False
    return fm


llvm.get_host_cpu_name = lambda: "haswell"
llvm.get_host_cpu_features = _features
