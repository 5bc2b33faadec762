"""Native runtime of tvmscript: JIT engine, CPython entry points, thread pool, vector math.

Public API (see each submodule for details and the ABI contract for generated kernels):

* :func:`compile_ir` -> :class:`CompiledLibrary` (``engine``), :class:`CompileError`;
* :class:`EntrySpec`, :class:`BufferParam`, :class:`ScalarParam`, :func:`entry_wrapper_ir`,
  :func:`make_builtin` (``pyentry``) and :func:`runtime_prelude_ir` plus the ndarray/exception
  helpers (``pyabi``);
* ``tvms_parallel_for`` thread pool: :func:`parallel_runtime_symbols`, :func:`set_num_threads`,
  :func:`get_num_threads`, :func:`parallel_for` (``threadpool``);
* :class:`MathLowering` for vectorisable math calls (``vecmath``);
* host target and optimisation pipeline: :func:`host_target`, :func:`optimize` (``target``).

Importing this package registers the runtime symbol providers with the engine, so any module
declaring ``tvms_exc_*``, ``tvms_descr_*``, ``tvms_ndarray_type``, ``tvms_parallel_for``,
``tvms_<libm function>`` or libmvec ``_ZGV*`` symbols gets them bound at load time.
"""

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
from .pyabi import (
    DTYPES,
    EXCEPTIONS,
    NPY_ARRAY_ALIGNED,
    NPY_ARRAY_C_CONTIGUOUS,
    NPY_ARRAY_F_CONTIGUOUS,
    NPY_ARRAY_OWNDATA,
    NPY_ARRAY_WRITEABLE,
    DtypeInfo,
    NdarrayLayout,
    array_dtype_matches_ir,
    c_string_global,
    ndarray_layout,
    runtime_global_address,
    runtime_prelude_ir,
    runtime_prelude_symbols,
)
from .pyentry import (
    SCALAR_DTYPES,
    BufferParam,
    EntrySpec,
    KernelOwner,
    ScalarParam,
    entry_wrapper_ir,
    make_builtin,
    wrapper_symbol,
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

__all__ = [
    "DTYPES",
    "EXCEPTIONS",
    "LIBM_FUNCTIONS",
    "NPY_ARRAY_ALIGNED",
    "NPY_ARRAY_C_CONTIGUOUS",
    "NPY_ARRAY_F_CONTIGUOUS",
    "NPY_ARRAY_OWNDATA",
    "NPY_ARRAY_WRITEABLE",
    "SCALAR_DTYPES",
    "BufferParam",
    "CompileError",
    "CompiledLibrary",
    "DtypeInfo",
    "EntrySpec",
    "HostTarget",
    "KernelOwner",
    "MathLowering",
    "NdarrayLayout",
    "ScalarParam",
    "array_dtype_matches_ir",
    "c_string_global",
    "cache_enabled",
    "compile_ir",
    "compile_stats",
    "default_cache_dir",
    "default_num_threads",
    "entry_wrapper_ir",
    "get_num_threads",
    "host_target",
    "host_target_machine",
    "libmvec_available",
    "libmvec_variants",
    "load_object",
    "read_cache_file",
    "make_builtin",
    "ndarray_layout",
    "optimize",
    "optimize_count",
    "parallel_for",
    "parallel_runtime_symbols",
    "region_overhead_ns",
    "register_symbol_provider",
    "running_threads",
    "runtime_global_address",
    "runtime_prelude_ir",
    "runtime_prelude_symbols",
    "set_num_threads",
    "softfp_symbol_address",
    "threadpool_symbol_address",
    "vecmath_symbol_address",
    "wrapper_symbol",
    "write_cache_file",
]
