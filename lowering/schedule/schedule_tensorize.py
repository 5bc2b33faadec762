"""TVM v0.16's ``tensorize`` and ``pad_einsum`` (a mixin over :class:`ScheduleBase`).

Their instruction kinds are in ``inst_kinds_tensorize.py`` (imported here, so they are
registered whenever the schedule class exists); the method -> kind names are added to
``record.KIND_OF``.
"""

from __future__ import annotations

from collections.abc import Sequence

from irbuilder.ir import PrimFunc

from . import inst_kinds_tensorize  # noqa: F401  (registers Tensorize and PadEinsum)
from .error import ScheduleError
from .instruction import plain
from .record import KIND_OF
from .rv import BlockRV, LoopRV
from .schedule_base import ScheduleBase, equivalence_checker, new_problems
from .state import ScheduleState
from .tensor_intrin import TensorIntrin

__all__ = ["TensorizePrimitives"]

KIND_OF.update({"tensorize": "Tensorize", "pad_einsum": "PadEinsum"})


class TensorizePrimitives(ScheduleBase):
    """tensorize and pad_einsum."""

    def _debug_check(self, kind: str, state: ScheduleState, before: PrimFunc) -> None:
        if kind != "tensorize":
            super()._debug_check(kind, state, before)
            return
        # The implementation is the intrinsic's promise to compute what its description
        # does; TVM does not check it. Here a run that shows otherwise refuses the
        # primitive as the user's intrinsic's fault, and one the interpreter cannot do (an
        # extern function) is no evidence either way.
        func = state.output()
        problems = new_problems(func, before)
        failure = None
        if problems:
            failure = (
                "internal check failed, the primitive was not applied (the result is not "
                "well formed: " + "; ".join(p.message for p in problems) + "); this is a bug "
                "in the schedule library, please report it"
            )
        checker = equivalence_checker()
        if failure is None and checker is not None:
            assert self._func_name is not None
            references: dict[str, PrimFunc] = getattr(self, "_unsafe_references", {})
            original = references.get(self._func_name, self._originals[self._func_name])
            layouts = state.param_layouts
            differs = checker(original, func, *([layouts] if layouts else []))
            if differs is not None and "NotImplementedError" not in differs:
                failure = (
                    "the result changes: the implementation of the tensor intrinsic does not "
                    f"compute what its description does, and was not applied ({differs})"
                )
        if failure is not None:
            state.set_func(before)
            self._refresh_after_rollback(state)
            raise ScheduleError(kind, failure)

    def tensorize(
        self,
        block_or_loop: BlockRV | LoopRV | str,
        tensor_intrin: str | TensorIntrin,
        preserve_unit_iters: bool = True,
    ) -> None:
        """Replace the block (or the loop's subtree, blockized first) by the
        implementation of the tensor intrinsic ``tensor_intrin`` (a registered name, or a
        registered :class:`TensorIntrin`), after matching it against the intrinsic's
        description."""
        from .tensorize import tensorize

        block_or_loop = self._as_rv(block_or_loop)
        node = self._block_or_loop(block_or_loop, "tensorize")
        if isinstance(tensor_intrin, TensorIntrin):
            name = TensorIntrin.name_of(tensor_intrin)
            if name is None:
                raise self._error(
                    ScheduleError(
                        "tensorize",
                        "the TensorIntrin is not registered: register it with "
                        "TensorIntrin.register(name, desc, impl) (the trace names it)",
                    )
                )
            intrin = tensor_intrin
        elif isinstance(tensor_intrin, str):
            name = tensor_intrin
            found = TensorIntrin.get(name, allow_missing=True)
            if found is None:
                registered = TensorIntrin.registered_names()
                raise self._error(
                    ScheduleError(
                        "tensorize",
                        f"TensorIntrin '{name}' is not registered (the registered ones are "
                        f"{registered})",
                    )
                )
            intrin = found
        else:
            raise TypeError(
                "tensorize: tensor_intrin must be a name or a TensorIntrin, got "
                f"{type(tensor_intrin).__name__}"
            )
        preserve = bool(plain(preserve_unit_iters))
        self._apply(
            "tensorize",
            [block_or_loop],
            [name, preserve],
            lambda st: tensorize(st, node, intrin, name, preserve),
        )

    def pad_einsum(self, block: BlockRV | str, padding: Sequence[int]) -> None:
        """Pad the iteration space of the einsum-like block to multiples of ``padding``
        (one factor per iter var): inputs are copied into padded buffers (zero outside),
        the block computes into a padded output, which is copied back."""
        from .pad_einsum import pad_einsum

        block = self._as_rv(block)
        node = self._block(block, "pad_einsum")
        factors = [int(plain(p)) for p in padding]
        self._apply(
            "pad_einsum",
            [block],
            [factors],
            lambda st: pad_einsum(st, node, factors),
        )
