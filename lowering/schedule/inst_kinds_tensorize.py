"""Instruction kinds of ``tensorize`` and ``pad_einsum`` (TVM v0.16's names and
input/attr layouts: ``Tensorize`` takes the block or loop as its input and the intrinsic's
name and ``preserve_unit_iters`` as attrs; ``PadEinsum`` the block as its input and the
padding as its attr). Neither has outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .instruction import InstructionKind, PythonCall, plain, register

if TYPE_CHECKING:
    from .schedule import Schedule

__all__: list[str] = []


def _apply_tensorize(sch: Schedule, inputs: list[Any], attrs: list[Any], _: Any) -> list[Any]:
    sch.tensorize(
        block_or_loop=inputs[0],
        tensor_intrin=str(plain(attrs[0])),
        preserve_unit_iters=bool(plain(attrs[1])),
    )
    return []


def _print_tensorize(outputs: list[str], inputs: list[Any], attrs: list[Any], _: Any) -> str:
    return (
        PythonCall("tensorize")
        .arg("block_or_loop", inputs[0])
        .arg("tensor_intrin", str(plain(attrs[0])))
        .arg("preserve_unit_iters", bool(plain(attrs[1])))
        .text()
    )


def _padding(attr: Any) -> list[int]:
    return [int(p) for p in plain(attr)]


def _apply_pad_einsum(sch: Schedule, inputs: list[Any], attrs: list[Any], _: Any) -> list[Any]:
    sch.pad_einsum(block=inputs[0], padding=_padding(attrs[0]))
    return []


def _print_pad_einsum(outputs: list[str], inputs: list[Any], attrs: list[Any], _: Any) -> str:
    call = PythonCall("pad_einsum").arg("block", inputs[0])
    return call.arg("padding", _padding(attrs[0])).text()


register(InstructionKind("Tensorize", False, _apply_tensorize, _print_tensorize, (1, 1), 2))
register(InstructionKind("PadEinsum", False, _apply_pad_einsum, _print_pad_einsum, (1, 1), 1))
