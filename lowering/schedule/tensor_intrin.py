"""TVM's tensor intrinsics: a *description* of a unit of computation and an
*implementation* of it, registered by name for ``Schedule.tensorize``.

The description is a PrimFunc whose body (a root block holding loops and blocks) is the
computation a tensorized subtree must match; the implementation's body replaces it. Their
parameters are handles matched to buffers, pairwise: the k-th buffer of the implementation
stands for the k-th of the description.

As in TVM (``TensorIntrin::TensorIntrin``), both functions must have the same number of
parameters, all of them handles with a buffer; here the paired buffers must also agree in
shape and dtype, which TVM leaves to the tensorized program to fail on (the implementation's
buffers become views of the regions the description's buffers matched).
"""

from __future__ import annotations

from irbuilder.ir import Buffer, IntImm, PrimFunc, structural_equal

__all__ = ["TensorIntrin"]

_REGISTRY: dict[str, TensorIntrin] = {}


def _shape_text(buffer: Buffer) -> str:
    dims = [str(d.value) if isinstance(d, IntImm) else str(d) for d in buffer.shape]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _param_buffers(func: PrimFunc, role: str) -> list[Buffer]:
    buffers: list[Buffer] = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if not param.dtype.is_handle or buffer is None:
            # TVM's text, with what is wrong about which parameter
            what = "a handle without a buffer" if param.dtype.is_handle else "not a handle"
            raise ValueError(
                f"Parameters of the {role} of the tensor intrinsic should be handle only: "
                f"parameter {param.name!r} is {what}"
            )
        buffers.append(buffer)
    return buffers


def _same_dims(a: Buffer, b: Buffer) -> bool:
    if len(a.shape) != len(b.shape):
        return False
    for x, y in zip(a.shape, b.shape):
        if isinstance(x, IntImm) and isinstance(y, IntImm):
            if x.value != y.value:
                return False
        elif not structural_equal(x, y, map_free_vars=True):
            return False
    return True


class TensorIntrin:
    """A tensor intrinsic: ``desc`` (what it computes) and ``impl`` (how).

    ``TensorIntrin.register(name, desc, impl)`` makes it available to
    ``sch.tensorize(block_or_loop, name)``; ``TensorIntrin.get(name)`` looks it up.
    """

    __slots__ = ("desc", "impl")

    def __init__(self, desc: PrimFunc, impl: PrimFunc) -> None:
        for role, func in (("description", desc), ("implementation", impl)):
            if not isinstance(func, PrimFunc):
                raise TypeError(
                    f"TensorIntrin: the {role} must be a PrimFunc, got {type(func).__name__}"
                )
        if len(desc.params) != len(impl.params):
            raise ValueError(
                "The number of parameters of the description and the implementation of the "
                f"tensor intrinsic doesn't match: {len(desc.params)} vs {len(impl.params)}"
            )
        desc_buffers = _param_buffers(desc, "description")
        impl_buffers = _param_buffers(impl, "implementation")
        for k, (d, i) in enumerate(zip(desc_buffers, impl_buffers)):
            if d.dtype != i.dtype:
                raise ValueError(
                    f"TensorIntrin: parameter {k} is a {d.dtype} buffer ({d.name}) in the "
                    f"description but a {i.dtype} buffer ({i.name}) in the implementation"
                )
            if not _same_dims(d, i):
                raise ValueError(
                    f"TensorIntrin: parameter {k} has shape {_shape_text(d)} ({d.name}) in "
                    f"the description but {_shape_text(i)} ({i.name}) in the implementation"
                )
        self.desc = desc
        self.impl = impl

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> None:
        """Register the intrinsic ``(desc, impl)`` as ``name``; a name already registered
        raises ``ValueError`` unless ``override``."""
        if not isinstance(name, str):
            raise TypeError(f"TensorIntrin.register: name must be a str, got {type(name).__name__}")
        intrin = TensorIntrin(desc, impl)
        if not override and name in _REGISTRY:
            raise ValueError(f"TensorIntrin '{name}' has already been registered")
        _REGISTRY[name] = intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as ``name``; a missing one raises ``ValueError``, or
        gives None with ``allow_missing``."""
        intrin = _REGISTRY.get(name)
        if intrin is None and not allow_missing:
            raise ValueError(f"TensorIntrin '{name}' is not registered")
        return intrin

    @staticmethod
    def name_of(intrin: TensorIntrin) -> str | None:
        """The name ``intrin`` is registered under (None if it is not)."""
        for name, registered in _REGISTRY.items():
            if registered is intrin:
                return name
        return None

    @staticmethod
    def registered_names() -> list[str]:
        return sorted(_REGISTRY)

    def __repr__(self) -> str:
        name = TensorIntrin.name_of(self)
        return f"TensorIntrin({name!r})" if name else f"TensorIntrin({self.desc.name})"
