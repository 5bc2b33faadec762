# ruff: noqa: E501  (golden renderings are long single-line strings)
"""Golden diagnostics: the exact message, location and underline of each user error."""

from __future__ import annotations

import pytest

import tvmscript

HEADER = '@T.prim_func\ndef f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):\n'

# name -> (kernel body, or full text when it starts with "@"; expected rendering)
GOLDEN: dict[str, tuple[str, str]] = {
    "undefined": (
        "    A[0] = foo + 1\n",
        "error: name 'foo' is not defined\n --> <undefined>:3:12\n  |\n3 |     A[0] = foo + 1\n  |            ^^^",
    ),
    "wrong_args": (
        "    T.evaluate(T.exp(A[0], 2))\n",
        "error: exp() takes 1 positional argument but 2 were given\n --> <wrong_args>:3:16\n  |\n3 |     T.evaluate(T.exp(A[0], 2))\n  |                ^^^^^^^^^^^^^^",
    ),
    "store_dtype": (
        "    B[0] = T.Broadcast(A[0], 4)\n",
        "error: cannot store a float32x4 value into buffer 'B' of type int32 (use T.cast)\n --> <store_dtype>:3:12\n  |\n3 |     B[0] = T.Broadcast(A[0], 4)\n  |            ^^^^^^^^^^^^^^^^^^^^",
    ),
    "index_rank": (
        "    A[0, 1] = T.float32(0)\n",
        "error: buffer 'A' has 1 dimension, indexed with 2 indices\n --> <index_rank>:3:5\n  |\n3 |     A[0, 1] = T.float32(0)\n  |     ^^^^^^^",
    ),
    "try": (
        "    try:\n        pass\n    except Exception:\n        pass\n",
        "error: 'try' statements are not supported in TVMScript\n --> <try>:3:5\n  |\n3 |     try:\n  |     ^^^^\n4 |         pass\n  |         ^^^^\n5 |     except Exception:\n  |     ^^^^^^^^^^^^^^^^^\n6 |         pass\n  |         ^^^^",
    ),
    "class": (
        "    class X:\n        pass\n",
        "error: a class cannot be defined inside a TVMScript kernel\n --> <class>:3:5\n  |\n3 |     class X:\n  |     ^^^^^^^^\n4 |         pass\n  |         ^^^^",
    ),
    "lambda": (
        "    lambda: 0\n",
        "error: a lambda as a statement does nothing in TVMScript\n --> <lambda>:3:5\n  |\n3 |     lambda: 0\n  |     ^^^^^^^^^",
    ),
    "global": (
        "    global g\n",
        "error: 'global' is not supported in TVMScript\n --> <global>:3:5\n  |\n3 |     global g\n  |     ^^^^^^^^",
    ),
    "yield": (
        "    yield 1\n",
        "error: 'yield' is not supported\n --> <yield>:3:5\n  |\n3 |     yield 1\n  |     ^^^^^^^",
    ),
    "import": (
        "    import os\n",
        "error: 'import' is not allowed inside a TVMScript kernel; import at module level and list the name in capture=[...]\n --> <import>:3:5\n  |\n3 |     import os\n  |     ^^^^^^^^^",
    ),
    "frame_misuse": (
        "    with T.init():\n        A[0] = T.float32(0)\n",
        "error: T.init must be directly inside T.block, not T.prim_func\n --> <frame_misuse>:3:10\n  |\n3 |     with T.init():\n  |          ^^^^^^^^",
    ),
    "not_frame": (
        "    with 3:\n        pass\n",
        "error: `with` needs a T.* frame (T.block, T.init, T.LetStmt, ...), got int\n --> <not_frame>:3:10\n  |\n3 |     with 3:\n  |          ^",
    ),
    "rebind": (
        "    x = A[0] + T.float32(1)\n    x = A[1]\n",
        "error: 'x' is already defined in this scope; a TIR variable cannot be reassigned (store into a buffer element for a mutable value)\n --> <rebind>:4:5\n  |\n4 |     x = A[1]\n  |     ^",
    ),
    "loop_bad": (
        "    for i in 5:\n        pass\n",
        "error: cannot loop over a value of type int; use range(...), T.serial, T.parallel, T.vectorized, T.unroll, T.grid or T.thread_binding\n --> <loop_bad>:3:14\n  |\n3 |     for i in 5:\n  |              ^",
    ),
    "if_int": (
        "    n = T.float32()\n    if n:\n        A[0] = T.float32(1)\n",
        "error: T.If: condition must be bool, got float32\n --> <if_int>:4:8\n  |\n4 |     if n:\n  |        ^",
    ),
    "break": (
        "    for i in range(4):\n        break\n",
        "error: 'break' is not supported in TVMScript (TIR loops have no early exit)\n --> <break>:4:9\n  |\n4 |         break\n  |         ^^^^^",
    ),
    "while_const": (
        "    while True:\n        pass\n",
        "error: this while loop never ends: its condition is the constant True\n --> <while_const>:3:11\n  |\n3 |     while True:\n  |           ^^^^",
    ),
    "unpack": (
        "    a, b = T.grid(2, 3, 4)\n",
        "error: too many values to unpack (expected 2)\n --> <unpack>:3:5\n  |\n3 |     a, b = T.grid(2, 3, 4)\n  |     ^^^^",
    ),
    "store_region": (
        "    A[0:2] = T.float32(0)\n",
        "error: cannot store into a region of buffer 'A'; index each element\n --> <store_region>:3:7\n  |\n3 |     A[0:2] = T.float32(0)\n  |       ^^^",
    ),
    # `return <scalar>` is T.ret (TVM's meaning); two loaded values are neither a scalar
    # return nor tensors.
    "return_value": (
        "    return A[0], A[1]\n",
        "error: a kernel can only return tensors computed with T.compute, got BufferLoad, BufferLoad\n --> <return_value>:3:12\n  |\n3 |     return A[0], A[1]\n  |            ^^^^^^^^^^",
    ),
    "bare_frame": (
        '    T.allocate([4], "float32")\n',
        'error: T.allocate(...) opens a scope: use it in a `with` statement or assign its result to a name\n --> <bare_frame>:3:5\n  |\n3 |     T.allocate([4], "float32")\n  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^',
    ),
    "param_annot": (
        '@T.prim_func\ndef f(A, B: T.Buffer((4,), "int32")):\n    pass\n',
        "error: parameter 'A' needs a type annotation: T.Buffer((...), dtype), T.int32, T.handle, ...\n --> <param_annot>:2:7\n  |\n2 | def f(A, B: T.Buffer((4,), \"int32\")):\n  |       ^",
    ),
    "static_assert": (
        '    assert 1 == 2, "sizes differ"\n',
        'error: assertion failed while parsing: sizes differ\n --> <static_assert>:3:12\n  |\n3 |     assert 1 == 2, "sizes differ"\n  |            ^^^^^^',
    ),
    "reads_outside": (
        "    T.reads(A[0])\n",
        "error: T.reads must be called directly inside a T.block frame, not inside T.prim_func\n --> <reads_outside>:3:5\n  |\n3 |     T.reads(A[0])\n  |     ^^^^^^^^^^^^^",
    ),
    "walrus": (
        "    A[0] = (y := T.float32(1))\n",
        "error: assignment expressions (:=) are not supported\n --> <walrus>:3:13\n  |\n3 |     A[0] = (y := T.float32(1))\n  |             ^^^^^^^^^^^^^^^^^",
    ),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_diagnostic(name: str) -> None:
    body, expected = GOLDEN[name]
    text = body if body.startswith("@") else HEADER + body
    with pytest.raises(tvmscript.DiagnosticError) as info:
        tvmscript.from_source(text, filename=f"<{name}>")
    assert str(info.value) == expected


def test_at_least_fifteen_kinds() -> None:
    assert len(GOLDEN) >= 15
