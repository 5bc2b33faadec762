"""Native runtime of tvmscript: JIT engine, thread pool, vector math.

Public API (see each submodule for details; the ABI of generated kernels, their CPython entry
points and the ndarray/exception layout, is :mod:`backend.abi`):

* :func:`compile_ir` -> :class:`CompiledLibrary` (``engine``), :class:`CompileError`;
* ``tvms_parallel_for`` thread pool: :func:`parallel_runtime_symbols`, :func:`set_num_threads`,
  :func:`get_num_threads`, :func:`parallel_for` (``threadpool``);
* :class:`MathLowering` for vectorisable math calls (``vecmath``);
* host target and optimisation pipeline: :func:`host_target`, :func:`optimize` (``target``).

Importing this package registers the runtime symbol providers with the engine, so any module
declaring ``tvms_exc_*``, ``tvms_descr_*``, ``tvms_ndarray_type``, ``tvms_parallel_for``,
``tvms_<libm function>``, libmvec ``_ZGV*`` symbols or the shared error helpers
(:mod:`backend.abi.shared_helpers`) gets them bound at load time.
"""

from ..abi.pyabi import runtime_global_address
from ..abi.shared_helpers import shared_helper_address
from .engine import (
    CompiledLibrary,
    CompileError,
    cache_enabled,
    compile_ir,
    compile_stats,
    default_cache_dir,
    load_object,
    read_cache_file,
    register_symbol_provider,
    write_cache_file,
)
from .softfp import softfp_symbol_address
from .target import HostTarget, host_target, host_target_machine, optimize, optimize_count
from .threadpool import (
    default_num_threads,
    get_num_threads,
    parallel_for,
    parallel_runtime_symbols,
    region_overhead_ns,
    running_threads,
    set_num_threads,
    threadpool_symbol_address,
)
from .vecmath import (
    LIBM_FUNCTIONS,
    MathLowering,
    libmvec_available,
    libmvec_variants,
    vecmath_symbol_address,
)

register_symbol_provider(runtime_global_address)
register_symbol_provider(threadpool_symbol_address)
register_symbol_provider(vecmath_symbol_address)
register_symbol_provider(softfp_symbol_address)
register_symbol_provider(shared_helper_address)

__all__ = [
    "LIBM_FUNCTIONS",
    "CompileError",
    "CompiledLibrary",
    "HostTarget",
    "MathLowering",
    "cache_enabled",
    "compile_ir",
    "compile_stats",
    "default_cache_dir",
    "default_num_threads",
    "get_num_threads",
    "host_target",
    "host_target_machine",
    "libmvec_available",
    "libmvec_variants",
    "load_object",
    "read_cache_file",
    "optimize",
    "optimize_count",
    "parallel_for",
    "parallel_runtime_symbols",
    "region_overhead_ns",
    "register_symbol_provider",
    "running_threads",
    "set_num_threads",
    "softfp_symbol_address",
    "threadpool_symbol_address",
    "vecmath_symbol_address",
    "write_cache_file",
]
