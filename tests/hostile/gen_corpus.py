"""Regenerates ``corpus/*.tvms`` from the case table below: ``python gen_corpus.py``.

Each case is a script with a ``$`` marking where the error must point (removed from the
written file); the file starts with ``# expect: <fragment>[|<alternative>...]`` and
``# at: <line>:<col>`` (1-based, in characters, of the written file) -- or
``# at: python`` for syntax errors, located where CPython's compiler reports them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):\n'
IHEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):\n'
NHEAD = '@T.prim_func\ndef f(A: T.Buffer((16,), "float32"), n: T.int32):\n'


def loop(body: str, head: str = HEAD) -> str:
    """``body`` (one or more lines, 8-space indented) inside ``for i in range(16):``."""
    lines = body.split("\n")
    return head + "    for i in range(16):\n" + "\n".join("        " + ln for ln in lines) + "\n"


def top(body: str, head: str = HEAD) -> str:
    lines = body.split("\n")
    return head + "\n".join("    " + ln for ln in lines) + "\n"


CASES: list[tuple[str, str, str]] = []  # (name, expected fragment(s), script with $)


def case(name: str, expect: str, script: str) -> None:
    CASES.append((name, expect, script))


# -- unsupported syntax ------------------------------------------------------------------
U = "not supported|unsupported|cannot|not allowed|invalid|expected"
case("syntax_setcomp", U, loop("B[i] = ${A[j] for j in range(2)}"))
case("syntax_try", U, loop("$try:\n    B[i] = A[i]\nexcept Exception:\n    pass"))
case("syntax_try_finally", U, loop("$try:\n    B[i] = A[i]\nfinally:\n    pass"))
case("syntax_raise", U, loop("$raise ValueError('x')"))
case("syntax_class_inside", U, top("$class C:\n    pass"))
case("syntax_import_inside", U, top("$import os"))
case("syntax_from_import_inside", U, top("$from os import path"))
case("syntax_global", U, top("$global g"))
case("syntax_nonlocal_def", U, top("$def g():\n    pass"))
case("syntax_del", U, loop("$del B"))
case("syntax_yield", U, loop("$yield A[i]"))
case("syntax_async_def", U, '@T.prim_func\n$async def f(A: T.Buffer((16,), "float32")):\n    pass\n')
case("syntax_with_open", U + "|not defined|open", loop("with $open('x') as fh:\n    B[i] = A[i]"))
case("syntax_for_else", U, loop("for j in range(2):\n    B[i] = A[j]\nelse:\n    $B[i] = A[i]"))
case("syntax_while_else", U, top("i = T.int32(0)\nwhile i < 2:\n    B[i] = A[i]\nelse:\n    $B[0] = A[0]"))
case("syntax_fstring", U, loop("T.evaluate($f\"{i}\")"))
case("syntax_matmul", U, loop("B[i] = $A[i] @ A[i]"))
case("syntax_in_operator", U, loop("if $i in [1, 2]:\n    B[i] = A[i]"))
case("syntax_kwargs_call", U + "|unexpected|keyword|missing", loop("B[i] = T.max($**{'a': A[i]})"))
case("syntax_walrus", U, loop("B[i] = ($x := A[i])"))
case("syntax_match", U, loop("$match i:\n    case 0:\n        B[i] = A[i]"))
case("syntax_async_for", U, "@T.prim_func\nasync def f(A: T.Buffer((16,), \"float32\")):\n    $async for i in range(16):\n        A[i] = 0.0\n")
case("syntax_star_params", U + "|variadic|\\*", '@T.prim_func\ndef f(*$args):\n    pass\n')
case("syntax_kw_params", U + "|variadic|\\*\\*", '@T.prim_func\ndef f(**$kwargs):\n    pass\n')
case("syntax_inner_decorator", U, top("@T.prim_func\n$def g():\n    pass"))
case("syntax_set_literal", U, loop("B[i] = ${A[i]}"))
case("syntax_ellipsis_store", U, loop("B[i] = $..."))
case("syntax_bytes", U, loop("B[i] = $b'abc'"))
case("syntax_aug_tuple", U, loop("$(B[i], B[0]) = (A[i], A[0])"))

case("syntax_assign_to_call", U + "|assign", loop("$T.max(A[i], A[i]) = A[i]"))
case("syntax_chained_assign_buffer", U + "|assign|target", loop("B[i] = $B[0] = A[i]"))
case("syntax_nested_def_call", U, top("$def g(x):\n    return x\nB[0] = g(A[0])"))
case("syntax_with_non_frame", U + "|context|with", top("with $A[0]:\n    pass"))
# A positive step is TVM's strided access (a Ramp); a negative one is refused.
case("syntax_slice_store_step", U + "|slice|step|index", loop("B[0:16:2] = $A[15:0:-2]"))

# -- undefined names ---------------------------------------------------------------------
N = "not defined|undefined|unknown|no attribute"
case("undef_name_rhs", N, loop("B[i] = A[i] + $foo"))
case("undef_buffer_store", N, loop("$C[i] = A[i]"))
case("undef_buffer_load", N, loop("B[i] = $C[i]"))
case("undef_T_attr", N, loop("B[i] = $T.nosuchthing(A[i])"))
case("undef_T_dtype_typo", N, loop("B[i] = $T.flaot32(1)"))
case("undef_function", N, loop("B[i] = $foo(A[i])"))
case("undef_extent", N, top("for i in range($N):\n    B[i] = A[i]"))
case("undef_in_shape", N, '@T.prim_func\ndef f(A: T.Buffer(($N,), "float32")):\n    pass\n')
case("undef_in_if", N, loop("if $flag:\n    B[i] = A[i]"))
case("undef_in_index", N, loop("B[$k] = A[i]"))
case("undef_in_where", N, top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n        T.where($cond)\n        B[vi] = A[vi]"))
case("undef_in_axis", N, top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, $ii)\n        B[vi] = A[vi]"))
case("undef_numpy", N, loop("B[i] = $np.float32(1)"))
case("undef_T_module_attr", N, loop("B[i] = A[i] + $T.tir.const(1)"))
case("undef_attr_of_buffer", N + "|attribute", loop("B[i] = $A.nosuchattr"))
case("undef_in_assert", N, loop("assert $ok, 'm'\nB[i] = A[i]"))
case("undef_in_while", N, top("while $go:\n    B[0] = A[0]"))
case("undef_in_alloc_shape", N, top("C = T.alloc_buffer(($M,), 'float32')"))
case("undef_in_cast", N, loop("B[i] = T.Cast('float32', $z)"))
case("undef_in_let", N, loop("x = $zz + 1\nB[i] = A[i]"))
case("undef_in_return", N, top("return $nothing"))
case("undef_builtins_len", N + "|not supported|len", loop("B[i] = T.float32($len(A))"))
case("undef_dunder_import", N + "|not supported", loop("B[i] = $__import__('os')"))
case("undef_open", N + "|not supported", top("x = $open('/etc/passwd')"))
case("undef_eval", N + "|not supported", top("x = $eval('1')"))
case("undef_exec", N + "|not supported", top("$exec('x = 1')"))
case("undef_globals", N + "|not supported", top("x = $globals()"))

# -- wrong dtypes ------------------------------------------------------------------------
D = "dtype|type|float|int"
case("dtype_unknown_buffer", D, '@T.prim_func\ndef f(A: T.Buffer((16,), $"float33")):\n    pass\n')
case("dtype_int7", D, '@T.prim_func\ndef f(A: T.Buffer((16,), $"int7")):\n    pass\n')
case("dtype_garbage", D, '@T.prim_func\ndef f(A: T.Buffer((16,), $"floaty")):\n    pass\n')
case("dtype_number", D, '@T.prim_func\ndef f(A: T.Buffer((16,), $5)):\n    pass\n')
# TVM casts a store of another scalar type to the buffer's type; only the lanes must match.
case("dtype_float_into_int", D, loop("B[i] = $T.Broadcast(T.float32(1.5), 4)", IHEAD))
case("dtype_float_index", D + "|index", loop("B[i] = A[$1.5]"))
case("dtype_float_extent", D + "|extent|range", top("for i in range($1.5):\n    B[0] = A[0]"))
case("dtype_cast_bogus", D, loop("B[i] = T.Cast($'bogus', A[i])"))
case("dtype_alloc_bogus", D, top("C = T.alloc_buffer((4,), $'complex64x')"))
case("dtype_exp_int", D, loop("B[i] = $T.exp(A[i])", IHEAD))
case("dtype_shift_float", D, loop("B[i] = $T.shift_left(A[i], 2)"))
case("dtype_bitand_float", D, loop("B[i] = $T.bitwise_and(A[i], A[i])"))
case("dtype_store_f64_into_f32", D, loop("B[i] = $T.Broadcast(T.float64(1) + T.float64(2), 2)"))
case("dtype_store_i64_into_i32", D, loop("B[i] = $T.Broadcast(T.Cast('int64', A[i]), 2)", IHEAD))
case("dtype_index_float_expr", D + "|index", loop("B[i] = A[$A[i]]"))
case("dtype_scalar_param_bogus", D, '@T.prim_func\ndef f(n: $T.int33):\n    pass\n')
case("dtype_truncdiv_float", D, loop("B[i] = $T.truncdiv(A[i], A[i])"))
case("dtype_string_arith", D + "|operand|unsupported", loop("B[i] = $A[i] + 'x'"))
case("dtype_none_store", D + "|None", loop("B[i] = $None"))
case("dtype_decl_bad", D, top("C = T.decl_buffer((4,), $'intx')"))
case("dtype_T_call_string", D + "|convert|literal", loop("B[i] = $T.float32('abc')"))
case("dtype_reinterpret_size", D + "|bits|size", loop("B[i] = $T.reinterpret('int64', A[i])"))

# -- wrong arity -------------------------------------------------------------------------
A = "argument|arity|expects|takes|missing|positional"
case("arity_max_1", A, loop("B[i] = $T.max(A[i])"))
case("arity_max_3", A, loop("B[i] = $T.max(A[i], A[i], A[i])"))
case("arity_exp_0", A, loop("B[i] = $T.exp()"))
case("arity_exp_2", A, loop("B[i] = $T.exp(A[i], A[i])"))
case("arity_if_then_else_2", A, loop("B[i] = $T.if_then_else(i < 2, A[i])"))
case("arity_select_1", A, loop("B[i] = $T.Select(i < 2)"))
case("arity_cast_1", A, loop("B[i] = $T.Cast('float32')"))
case("arity_floordiv_1", A, loop("B[i] = $T.floordiv(A[i])"))
case("arity_range_0", A + "|range", top("for i in $range():\n    B[0] = A[0]"))
case("arity_range_4", A + "|range", top("for i in $range(1, 2, 3, 4):\n    B[0] = A[0]"))
case("arity_serial_0", A, top("for i in $T.serial():\n    B[0] = A[0]"))
case("arity_buffer_0", A, '@T.prim_func\ndef f(A: $T.Buffer()):\n    pass\n')
case("arity_axis_spatial_1", A, top("for i in range(16):\n    with T.block('b'):\n        vi = $T.axis.spatial(16)\n        B[vi] = A[vi]"))
case("arity_remap_count", A + "|remap|kinds|number|iter", top("for i in range(16):\n    with T.block('b'):\n        vi, vj = $T.axis.remap('SS', [i])\n        B[vi] = A[vi]"))
case("arity_remap_unpack", A + "|unpack|values|remap", top("for i, j in T.grid(4, 4):\n    with T.block('b'):\n        $vi = T.axis.remap('SS', [i, j])\n        B[vi] = A[vi]"))
case("arity_evaluate_0", A, top("$T.evaluate()"))
case("arity_index_count", A + "|index|indices|dimension", loop("B[i] = $A[i, i]"))
case("arity_store_index_count", A + "|index|indices|dimension", loop("$B[i, 0] = A[i]"))
case("arity_index_empty", A + "|index|indices|dimension", loop("B[i] = $A[()]"))
case("arity_grid_unpack", A + "|unpack|values|grid", top("for $i, j in T.grid(4):\n    B[i] = A[i]"))
case("arity_tuple_target", A + "|unpack|values", top("for $i, j in range(4):\n    B[i] = A[i]"))
case("arity_sqrt_kw", A + "|keyword|unexpected", loop("B[i] = $T.sqrt(A[i], bogus=1)"))
case("arity_alloc_0", A, top("C = $T.alloc_buffer()"))
case("arity_block_many", A, top("with $T.block('a', 'b', 'c', 'd'):\n    B[0] = A[0]"))
case("arity_call_extern_0", A, loop("T.evaluate($T.call_extern())"))

# -- out-of-scope variables --------------------------------------------------------------
S = "not defined|undefined|scope|unknown"
case("scope_loop_var_after", S, top("for i in range(16):\n    B[i] = A[i]\nB[0] = A[$i]"))
case("scope_sibling_loop", S, top("for i in range(16):\n    B[i] = A[i]\nfor j in range(16):\n    B[j] = A[$i]"))
case("scope_block_var_outside", S, top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n        B[vi] = A[vi]\n    B[i] = A[$vi]"))
case("scope_if_branch_var", S, loop("if i < 4:\n    x = A[i]\nB[i] = $x"))
case("scope_alloc_after_with", S, top("with T.block('root'):\n    C = T.alloc_buffer((16,), 'float32')\n    C[0] = A[0]\nB[0] = $C[0]"))
case("scope_let_after_loop", S, top("for i in range(16):\n    x = A[i] * 2.0\n    B[i] = x\nB[0] = $x"))
case("scope_inner_loop_var", S, loop("for j in range(2):\n    B[i] = A[j]\nB[i] = A[$j]"))
case("scope_decl_buffer_after", S, top("with T.decl_buffer((16,), 'float32') as C:\n    C[0] = A[0]\nB[0] = $C[0]"))
case("scope_while_body_var", S, top("while A[0] < 1.0:\n    y = A[0]\n    A[0] = A[0] + 1.0\nB[0] = $y"))
case("scope_block_init_var", S, top("for i, k in T.grid(16, 4):\n    with T.block('r'):\n        vi, vk = T.axis.remap('SR', [i, k])\n        with T.init():\n            t = T.float32(0)\n            B[vi] = t\n        B[vi] = B[vi] + A[vk] + $t"))
case("scope_else_var", S, loop("if i < 4:\n    pass\nelse:\n    z = A[i]\nB[i] = $z"))
case("scope_comprehension_var", S + "|" + U, top("for i in range(16):\n    B[i] = A[i]\nB[$k] = A[0]"))
case("scope_param_of_other_func", S, '@T.prim_func\ndef g(C: T.Buffer((4,), "float32")):\n    pass\n\n@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    A[0] = $C[0]\n')
case("scope_match_buffer_outside", S, top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n        S2 = T.match_buffer(A[vi : vi + 1], (1,))\n        B[vi] = S2[0]\nB[0] = $S2[0]"))

# -- stores to loop vars and other read-only names ---------------------------------------
W = "loop|assign|cannot|read-only|immutable|redefin|store"
case("store_loop_var", W, loop("$i = 3\nB[i] = A[i]"))
case("store_loop_var_aug", W, loop("$i += 1\nB[i] = A[i]"))
case("store_block_var", W, top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i)\n        $vi = 3\n        B[vi] = A[vi]"))
case("store_param_scalar", W + "|param", top("$n = 5", NHEAD))
case("store_param_buffer", W + "|param|buffer", top("$A = 3"))
case("store_T", W + "|T", top("$T = 3"))
case("store_grid_var", W, top("for i, j in T.grid(4, 4):\n    $j = i\n    B[i] = A[j]"))
case("store_loop_var_tuple", W, loop("$i, k = 1, 2\nB[i] = A[i]"))
case("store_loop_var_inner", W, loop("for j in range(2):\n    $i = j\nB[i] = A[i]"))
case("store_buffer_attr", W + "|attribute", top("$A.shape = (4,)"))
case("store_subscript_of_param_scalar", W + "|subscript|index|not a buffer", top("$n[0] = 1", NHEAD))

# -- recursive macros --------------------------------------------------------------------
R = "recurs|depth|macro"
MF = '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'
case("macro_self", R, MF + "    $m_self(A)\n")
case("macro_mutual", R, MF + "    $m_ping(A)\n")
case("macro_self_in_loop", R, MF + "    $m_loop(A)\n")
case("macro_self_with_arg", R, MF + "    $m_count(A, 3)\n")
case("macro_self_in_nested_loop", R, MF + "    for i in range(4):\n        $m_self(A)\n")

# -- non-constant where a constant is required -------------------------------------------
C = "constant|literal|int|static|must be"
case("nonconst_ramp_lanes", C + "|lanes", loop("A[i] = A[$T.Ramp(0, 1, n)]", NHEAD))
case("nonconst_broadcast_lanes", C + "|lanes", loop("T.evaluate($T.Broadcast(A[i], n))", NHEAD))
case("nonconst_remap_kinds", C + "|kinds|remap|str", top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.remap($A[0], [i])\n        A[vi] = A[vi]", NHEAD))
case("nonconst_block_name", C + "|name|str", top("with T.block($A[0]):\n    A[0] = A[0]", NHEAD))
case("nonconst_cast_dtype", C + "|dtype|type", loop("A[i] = T.Cast($n, A[i])", NHEAD))
case("nonconst_func_attr", C + "|attr|dict", top("T.func_attr($n)", NHEAD))
case("nonconst_shuffle_index", C + "|indices|index", loop("T.evaluate($T.Shuffle([A[T.Ramp(0, 1, 4)]], [n]))", NHEAD))
case("nonconst_buffer_dtype", C + "|dtype|type", top("C = T.alloc_buffer((4,), $A[0])", NHEAD))
case("nonconst_max_value_dtype", C + "|dtype|type", loop("A[i] = $T.max_value(n)", NHEAD))
case("nonconst_axis_dom_dtype", C + "|dtype|type", top("for i in range(16):\n    with T.block('b'):\n        vi = T.axis.spatial(16, i, dtype=$A[0])\n        A[vi] = A[vi]", NHEAD))
case("nonconst_string_message", C + "|message|str", loop("assert i < 16, $A[i]", NHEAD))

# -- huge / invalid extents and constants ------------------------------------------------
H = "range|overflow|too large|extent|out of|int|negative|bits|lanes|size"
case("huge_range", H, top("for i in range($10**30):\n    B[0] = A[0]"))
case("huge_buffer_shape", H, '@T.prim_func\ndef f(A: T.Buffer(($10**20,), "float32")):\n    pass\n')
case("huge_alloc", H, top("C = T.alloc_buffer(($2**70,), 'float32')"))
case("huge_int32_const", H, loop("B[i] = A[i] + T.float32($T.int32(2**40))"))
case("huge_int8_const", H, loop("B[i] = A[i] + T.float32($T.int8(1000))"))
case("huge_negative_shape", H, '@T.prim_func\ndef f(A: T.Buffer(($-1,), "float32")):\n    pass\n')
case("huge_ramp_lanes", H, loop("T.evaluate($T.Ramp(0, 1, 10**9))"))
case("huge_broadcast_lanes", H, loop("T.evaluate($T.Broadcast(A[i], 2**40))"))
case("huge_uint8_negative", H, loop("B[i] = A[i] + T.float32($T.uint8(-1))"))
case("huge_grid", H, top("for i, j in T.grid($10**20, 4):\n    B[0] = A[0]"))
case("huge_float32_literal", H + "|float|inf", loop("B[i] = $T.float32(1e300)"))
case("huge_index_literal", H + "|index", loop("B[i] = A[$10**30]"))
E = "more than int64"
case("huge_shape_product_int64", E, '@T.prim_func\ndef f(A: $T.Buffer((2**40, 2**40), "float32")):\n    pass\n')
case("huge_shape_bytes_int64", E, '@T.prim_func\ndef f(A: $T.Buffer((2**31, 2**31), "float64")):\n    pass\n')
case("huge_match_buffer_product", E, '@T.prim_func\ndef f(a: T.handle):\n    A = $T.match_buffer(a, (2**32, 2**32), "int8")\n')
case("huge_decl_buffer_product", E, top("C = $T.decl_buffer((2**21, 2**21, 2**21), 'float32')"))
case("huge_alloc_buffer_product", E, top("C = $T.alloc_buffer((2**33, 2**33), 'int32')"))

# -- integer division by a constant zero -----------------------------------------------------
Z = "by zero: the divisor is the constant 0"
case("zero_floordiv_operator", Z, loop("B[i] = $i // 0", IHEAD))
case("zero_floormod_operator", Z, loop("B[i] = A[i] + $i % 0", IHEAD))
case("zero_truncdiv_call", Z, loop("B[i] = $T.truncdiv(A[i], 0)", IHEAD))
case("zero_truncmod_call", Z, loop("B[i] = $T.truncmod(A[i], T.int32(0))", IHEAD))
case("zero_floordiv_call_int64", Z, loop("B[i] = T.int32($T.floordiv(T.int64(7), T.int64(0)))", IHEAD))
case("zero_folded_divisor", Z, loop("B[i] = $A[i] // (3 - 3)", IHEAD))
case("zero_augmented_store", Z, loop("B[i] //= $0", IHEAD))
case("zero_augmented_name", Z, loop("x = A[i]\n$x %= 0\nB[i] = x", IHEAD))

# -- unicode names -----------------------------------------------------------------------
case("unicode_undefined", N, loop("B[i] = A[i] + $ñame"))
case("unicode_undefined_after_wide", N, loop("B[i] = A[i] + T.float32(len('äöü')) + $ßß"))
case("unicode_buffer_param_then_bad", N, '@T.prim_func\ndef f(Ä: T.Buffer((4,), "float32")):\n    Ä[0] = $Ö[0]\n')
case("unicode_greek_loop_var_store", W, '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    for α in range(4):\n        $α = 1\n        A[α] = A[α]\n')
case("unicode_cjk_undefined", N, loop("B[i] = $変数"))
case("unicode_zero_width_char", "invalid|syntax|character", loop("B[i] = A[i]\u200b"))
case("unicode_emoji_name", "invalid|syntax|character", loop("x😀 = A[i]"))
case("unicode_string_dtype", D, '@T.prim_func\ndef f(A: T.Buffer((4,), $"floät32")):\n    pass\n')
case("unicode_in_block_name_then_error", N, top("for i in range(16):\n    with T.block('блок'):\n        vi = T.axis.spatial(16, i)\n        B[vi] = $Я[vi]"))

# -- non-function objects decorated / no function ----------------------------------------
F = "function|def|prim_func|expected|class|no "
case("decorated_class", F, "@T.prim_func\n$class C:\n    pass\n")
case("decorated_assign_int", F, "x = $T.prim_func(3)\n")
case("no_function_at_all", F + "|empty", "$x = 1\n")
# A text without a definition is reported at its start, 1:1 (the header comments are
# part of the text), so these two carry no ``$``: see AT_TEXT_START.
case("empty_text", F + "|empty", "")
case("only_comments", F + "|empty", "# just a comment\n")
AT_TEXT_START = {"empty_text", "only_comments"}
case("decorated_lambda", F, "f = $T.prim_func(lambda A: None)\n")
case("decorated_string", F, '$T.prim_func("def f(): pass")\n')
case("decorator_called_wrong", F + "|argument", '@T.prim_func($3)\ndef f(A: T.Buffer((4,), "float32")):\n    pass\n')

# -- broken annotations ------------------------------------------------------------------
B = "annotation|buffer|type|param|shape|expected"
case("annot_bare_buffer", B, '@T.prim_func\ndef f(A: $T.Buffer):\n    pass\n')
case("annot_int_literal", B, '@T.prim_func\ndef f(A: $3):\n    pass\n')
case("annot_python_int", B, '@T.prim_func\ndef f(A: $int):\n    pass\n')
case("annot_missing", B + "|missing", '@T.prim_func\ndef f($A):\n    pass\n')
case("annot_unknown_kwarg", B + "|keyword|unexpected", '@T.prim_func\ndef f(A: $T.Buffer((16,), "float32", bogus=1)):\n    pass\n')
case("annot_shape_string", B, '@T.prim_func\ndef f(A: T.Buffer(($"a",), "float32")):\n    pass\n')
case("annot_default_value", B + "|default", '@T.prim_func\ndef f(n: T.int32 = $3):\n    pass\n')
case("annot_none", B, '@T.prim_func\ndef f(A: $None):\n    pass\n')
case("annot_list", B, '@T.prim_func\ndef f(A: $[1, 2]):\n    pass\n')
case("annot_call_result", B, '@T.prim_func\ndef f(A: $T.float32(1)):\n    pass\n')
case("annot_return_bogus", B + "|return", '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")) -> $5:\n    pass\n')
case("annot_shape_float", B + "|int", '@T.prim_func\ndef f(A: T.Buffer(($1.5,), "float32")):\n    pass\n')
case("annot_local_bad", B, top("x: $3 = A[0]"))

# -- Python syntax errors (position as CPython reports it) -------------------------------
P = "syntax|invalid|unexpected|indent|never closed|unmatched|expected"
case("pysyntax_unbalanced", P, loop("B[i] = (A[i]"))
case("pysyntax_bad_indent", P, HEAD + "    for i in range(16):\n    B[i] = A[i]\n")
case("pysyntax_def_colon", P, "@T.prim_func\ndef f(:\n    pass\n")
case("pysyntax_null_byte", P + "|null", loop("B[i] = A[i]\x00"))
case("pysyntax_tabs_mixed", P + "|tab", HEAD + "    for i in range(16):\n\tB[i] = A[i]\n        B[i] = A[i]\n")
case("pysyntax_deep_parens", P + "|nested|too many", loop("B[i] = " + "(" * 300 + "A[i]" + ")" * 300))
case("pysyntax_stray_else", P, top("else:\n    pass"))


# -- deep nesting (generated) ------------------------------------------------------------
def _deep_loops(n: int, tail: str) -> str:
    lines = [HEAD.rstrip("\n")]
    for d in range(n):
        lines.append("    " * (d + 1) + f"for i{d} in range(1):")
    lines.append("    " * (n + 1) + tail)
    return "\n".join(lines) + "\n"


case("pysyntax_deep_200_loops", P + "|indentation", _deep_loops(200, "B[i0] = undefined_name"))
case("deep_95_loops_undefined", N, _deep_loops(95, "B[i0] = $undefined_name"))
case("deep_90_loops_store_loop_var", W, _deep_loops(90, "$i7 = 1"))
case("deep_sum_10000", N, loop("B[i] = " + " + ".join(["A[i]"] * 10000) + " + $nope"))
case("deep_unary_5000", N, loop("B[i] = " + "-" * 5000 + "$nope"))
case("deep_sub_chain_10000_int", N, loop("B[i] = " + " - ".join(["i"] * 10000) + " - $nope", IHEAD))


def _deep_ifs(n: int) -> str:
    lines = [HEAD.rstrip("\n"), "    for i in range(16):"]
    for d in range(n):
        lines.append("    " * (d + 2) + f"if i > {d - 1000}:")
    lines.append("    " * (n + 2) + "B[i] = $zz")
    return "\n".join(lines) + "\n"


case("pysyntax_deep_150_ifs", P + "|indentation", _deep_ifs(150).replace("$", ""))
case("deep_95_ifs", N, _deep_ifs(95))
case("pysyntax_nested_calls_2000", P + "|nest",
     loop("B[i] = " + "T.max(" * 2000 + "nope" + ", A[i])" * 2000))
case("deep_nested_calls_190", N + "|depth|nest|deep",
     loop("B[i] = " + "T.max(" * 190 + "$nope" + ", A[i])" * 190))
case("deep_nested_subscript_90", N + "|depth|nest|deep|index",
     loop("B[i] = " + "A[T.int32(" * 90 + "$nope" + ")]" * 90, head=HEAD))
case("deep_bool_chain_10000", N, loop("if " + " and ".join(["i < 16"] * 10000) + " and $nope:\n    B[i] = A[i]"))
case("deep_compare_chain", N + "|" + U, loop("if " + " < ".join(["i"] * 2000) + " < $nope:\n    B[i] = A[i]"))
case("deep_long_line_100k_chars", N, loop("B[i] = A[i]" + " + A[i]" * 14000 + " + $nope"))
case("deep_many_statements_20000", N, loop("\n".join(["B[i] = A[i]"] * 20000) + "\nB[i] = $nope"))
# Prefix runs: Python 3.12's parser stops at ~3,000 levels, 3.10/3.11/3.13's near 6,000;
# parser/core/deep_chains.py makes every version parse up to its MAX_PREFIX_RUN (5,900).
case("deep_not_5000", N, loop("if " + "not " * 5000 + "i < $nope:\n    B[i] = A[i]"))
case("deep_unary_run_in_chain", N,
     loop("B[i] = A[i] + " + "-" * 3000 + "A[i]" + " + A[i]" * 5000 + " + $nope"))
case("deep_unary_7000_too_deep", "nested too deeply", loop("B[i] = $" + "-" * 7000 + "A[i]"))


def write(out_dir: Path) -> int:
    """Write every case to ``out_dir`` (cleared first); returns the number of cases."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    names = set()
    for name, expect, script in CASES:
        assert name not in names, name
        names.add(name)
        header = f"# expect: {expect}\n"
        if name.startswith("macro_"):
            header = "# capture: macros\n" + header
        if name.startswith("pysyntax_") or name.startswith("unicode_zero") or \
                name.startswith("unicode_emoji"):
            assert "$" not in script, name
            text = header + "# at: python\n" + script
        elif name in AT_TEXT_START:
            assert "$" not in script, name
            text = header + "# at: 1:1\n" + script
        else:
            assert script.count("$") == 1, name
            pre, _ = script.split("$")
            line = header.count("\n") + 2 + pre.count("\n")
            col = len(pre) - (pre.rfind("\n") + 1) + 1
            text = header + f"# at: {line}:{col}\n" + script.replace("$", "")
        (out_dir / f"{name}.tvms").write_text(text, encoding="utf-8")
    return len(CASES)


if __name__ == "__main__":
    n = write(Path(__file__).parent / "corpus")
    print(f"wrote {n} cases")
