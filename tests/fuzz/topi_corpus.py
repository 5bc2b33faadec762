"""The TOPI operators :mod:`topi_peer` probes: built by TVM itself, in the peer's worker.

Runs only under the peer interpreter (imports ``tvm``); nothing of ours. Each entry is a
name and a function returning an :class:`Op`: the TE tensors (placeholders first, then the
outputs) that ``te.create_prim_func`` turns into one PrimFunc, the value range of each
integer (or specially ranged float) input, and the value of each symbolic dimension.
Shapes are small: the probe checks semantics, not speed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tvm import te, topi  # type: ignore[import-not-found]

Ranges = dict[str, tuple[float, float]]


@dataclass
class Op:
    inputs: list[Any]
    outputs: list[Any]
    ranges: Ranges = field(default_factory=dict)
    """placeholder name -> [lo, hi] of its values (integers: inclusive; floats: uniform)"""
    binds: dict[str, int] = field(default_factory=dict)
    """symbolic dimension name -> its value in the run"""
    inexact: bool = False
    """transcendental math: compared with the wider tolerance"""
    special: tuple[str, ...] = ()
    """float placeholders that get NaN, +inf and -inf in about a quarter of their elements"""


def P(shape: Any, dtype: str = "float32", name: str = "A") -> Any:
    return te.placeholder(shape, dtype, name=name)


Entry = tuple[str, Callable[[], Op]]
CORPUS: list[Entry] = []


def entry(name: str, fn: Callable[[], Op]) -> None:
    CORPUS.append((name, fn))


def _outs(x: Any) -> list[Any]:
    return [x] if isinstance(x, te.Tensor) else list(x)


def simple(name: str, make: Callable[..., Any], *inputs: Any, inexact: bool = False,
           ranges: Ranges | None = None, **more: tuple[float, float]) -> None:
    """One operator of fixed shapes: ``make(*inputs)`` gives its outputs; the value ranges
    come as ``ranges`` and as keywords (``I=(0, 4)``)."""
    every = {**(ranges or {}), **more}
    entry(name, lambda: Op(list(inputs), _outs(make(*inputs)), every, {}, inexact))


# ---- elementwise unary math -----------------------------------------------------------------

_TRANSC = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "tan", "atan",
           "log2", "log10", "sinh", "cosh", "asin", "acos", "asinh", "atanh", "acosh",
           "fast_exp", "fast_tanh", "fast_erf"]
_POSITIVE = {"log": (0.1, 5.0), "sqrt": (0.1, 5.0), "rsqrt": (0.1, 5.0), "log2": (0.1, 5.0),
             "log10": (0.1, 5.0), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9),
             "atanh": (-0.9, 0.9), "acosh": (1.1, 4.0)}
for _fn in _TRANSC:
    for _dt in ("float32", "float64") if _fn in ("exp", "tanh", "sigmoid", "log", "erf") \
            else ("float32",):
        if _fn.startswith("fast_") and _dt != "float32":
            continue
        _pos: Ranges = {"A": _POSITIVE[_fn]} if _fn in _POSITIVE else {}
        simple(f"{_fn}_{_dt}", getattr(topi, _fn), P((3, 7), _dt), inexact=True, ranges=_pos)
for _fn in ["abs", "negative", "floor", "ceil", "round", "trunc", "sign", "isnan", "isinf",
            "isfinite", "logical_not", "bitwise_not", "identity"]:
    for _dt in ("float32", "float16", "int32", "int8"):
        if _fn in ("isnan", "isinf", "isfinite", "floor", "ceil", "round", "trunc") \
                and _dt.startswith("int"):
            continue
        if _fn == "bitwise_not" and _dt.startswith("float"):
            continue
        if _fn == "logical_not":
            simple(f"{_fn}", getattr(topi, _fn), P((3, 5), "bool"))
            break
        simple(f"{_fn}_{_dt}", getattr(topi, _fn), P((3, 5), _dt))
simple("relu_float32", topi.nn.relu, P((4, 6)))
simple("relu_int8", topi.nn.relu, P((4, 6), "int8"))
simple("leaky_relu", lambda a: topi.nn.leaky_relu(a, 0.1), P((4, 6)))
simple("softplus", lambda a: topi.nn.softplus(a), P((4, 6)), inexact=True)
simple("clip_float32", lambda a: topi.clip(a, -0.5, 0.75), P((4, 6)))
simple("clip_int8", lambda a: topi.clip(a, -3, 4), P((4, 6), "int8"))
simple("fixed_point_multiply", lambda a: topi.fixed_point_multiply(a, 1395864371, -2),
       P((4, 6), "int32"), A=(-100000, 100000))

# ---- broadcasting binary ops ----------------------------------------------------------------

_SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((4,), (2, 3, 4)),
           ((2, 1, 4), (3, 1))]
_BIN = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floor_divide",
        "floor_mod", "mod", "equal", "less", "greater_equal", "not_equal", "left_shift",
        "right_shift", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "atan2",
        "log_add_exp"]
for _k, _fn in enumerate(_BIN):
    _sa, _sb = _SHAPES[_k % len(_SHAPES)]
    if _fn in ("logical_and",):
        _dts = ["bool"]
    elif _fn in ("left_shift", "right_shift", "bitwise_and", "bitwise_or", "bitwise_xor"):
        _dts = ["int32", "uint8", "int64"]
    elif _fn in ("atan2", "power", "log_add_exp"):
        _dts = ["float32"]
    elif _fn in ("floor_divide", "floor_mod", "mod", "divide"):
        _dts = ["float32", "int32", "int8"]
    else:
        _dts = ["float32", "int32", "float16", "uint8"] if _k % 2 else ["float32", "int64"]
    for _dt in _dts:
        _rng: Ranges = {}
        if _fn in ("left_shift", "right_shift"):
            _rng = {"B": (0, 7), "A": (0, 15) if _fn == "left_shift" else (-100, 100)}
            if _dt == "uint8":
                _rng["A"] = (0, 15)
        elif _fn in ("floor_divide", "floor_mod", "mod", "divide") and not _dt.startswith("f"):
            _rng = {"B": (1, 9)}  # positive divisors (zero is undefined in TVM)
        elif _fn == "power":
            _rng = {"A": (0.2, 3.0)}
        simple(f"{_fn}_{_dt}_{len(_sa)}x{len(_sb)}", getattr(topi, _fn), P(_sa, _dt, "A"),
               P(_sb, _dt, "B"), inexact=_fn in ("atan2", "power", "log_add_exp"), ranges=_rng)
simple("add_mixed_scalar", lambda a: topi.add(a, 3), P((3, 4), "int8"))
simple("multiply_const_f16", lambda a: topi.multiply(a, 0.5), P((3, 4), "float16"))
simple("where", topi.where, P((3, 4), "bool", "C"), P((3, 4), "float32", "A"),
       P((1, 4), "float32", "B"))
simple("where_int", topi.where, P((3, 1), "int32", "C"), P((3, 4), "int8", "A"),
       P((4,), "int8", "B"), C=(0, 1))
simple("elemwise_sum", lambda a, b, c: topi.elemwise_sum([a, b, c]), P((3, 4), name="A"),
       P((3, 4), name="B"), P((3, 4), name="C"))

# ---- casts ----------------------------------------------------------------------------------

_CAST_DT = ["float32", "float16", "int8", "uint8", "int32", "int64"]
for _src in _CAST_DT:
    for _dst in _CAST_DT:
        if _src == _dst:
            continue
        # values that fit every destination: float -> int casts of out-of-range values are
        # undefined in TVM (the watch would skip them anyway)
        _r: Ranges = {"A": (-3.0, 100.0)} if _src.startswith("f") else \
            {"A": (0, 100) if _src == "uint8" else (-100, 100)}
        if _dst == "uint8" or _src == "uint8":
            _r = {"A": (0.0, 200.0) if _src.startswith("f") else (0, 120)}
        simple(f"cast_{_src}_{_dst}", lambda a, _d=_dst: topi.cast(a, _d), P((3, 5), _src),
               ranges=_r)

# ---- reductions -----------------------------------------------------------------------------

for _fn, _dts in [("sum", ["float32", "int32", "int8"]), ("max", ["float32", "int8"]),
                  ("min", ["float32", "uint8"]), ("prod", ["float32", "int32"]),
                  ("argmax", ["float32", "int32"]), ("argmin", ["float32", "int8"]),
                  ("all", ["bool"]), ("any", ["bool"])]:
    for _dt in _dts:
        for _axis, _keep in [(None, False), (1, True), ((0, 2), False), (-1, False)]:
            _r = {"A": (-2, 2)} if _fn == "prod" and _dt == "int32" else {}
            _shape = (3, 4, 5)
            simple(f"{_fn}_{_dt}_axis{_axis}_{'keep' if _keep else 'drop'}",
                   lambda a, _f=_fn, _x=_axis, _k=_keep: getattr(topi, _f)(a, _x, _k),
                   P(_shape, _dt), ranges=_r)
simple("argmax_last", lambda a: topi.argmax(a, 1, False, True), P((4, 6), "int8"), A=(0, 3))
simple("argmin_last", lambda a: topi.argmin(a, 0, True, True), P((4, 6), "int8"), A=(0, 3))
simple("collapse_sum", lambda a: topi.collapse_sum(a, (4, 1)), P((3, 4, 5)))

# ---- nn: convolutions, dense, pooling ---------------------------------------------------------

_I8: Ranges = {"A": (-8, 8), "W": (-8, 8)}
simple("conv1d_ncw", lambda a, w: topi.nn.conv1d(a, w, 1, 1, 1), P((2, 3, 9)),
       P((4, 3, 3), name="W"))
simple("conv1d_nwc_stride_dil", lambda a, w: topi.nn.conv1d(a, w, 2, (1, 2), 2, 1, "NWC", "WIO"),
       P((2, 11, 3)), P((3, 3, 4), name="W"))
simple("conv1d_groups", lambda a, w: topi.nn.group_conv1d_ncw(a, w, 1, 1, 1, 2),
       P((1, 4, 8)), P((6, 2, 3), name="W"))
simple("conv2d_nchw", lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1), P((1, 3, 7, 7)),
       P((4, 3, 3, 3), name="W"))
simple("conv2d_nchw_stride2_pad_asym", lambda a, w: topi.nn.conv2d(a, w, 2, (1, 0, 2, 1), 1),
       P((2, 2, 9, 8)), P((3, 2, 3, 2), name="W"))
simple("conv2d_nchw_dilation", lambda a, w: topi.nn.conv2d(a, w, 1, 2, 2), P((1, 2, 9, 9)),
       P((2, 2, 3, 3), name="W"))
simple("conv2d_nhwc", lambda a, w: topi.nn.conv2d(a, w, (2, 1), "SAME", 1, "NHWC", "HWIO"),
       P((1, 8, 7, 3)), P((3, 3, 3, 5), name="W"))
simple("conv2d_nchw_int8", lambda a, w: topi.nn.conv2d(a, w, 1, 0, 1, out_dtype="int32"),
       P((1, 4, 6, 6), "int8"), P((4, 4, 3, 3), "int8", "W"), ranges=_I8)
simple("conv2d_nhwc_uint8_int32", lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1, "NHWC", "HWIO",
                                                              out_dtype="int32"),
       P((1, 5, 5, 4), "uint8"), P((3, 3, 4, 2), "int8", "W"), A=(0, 15), W=(-8, 8))
simple("group_conv2d_nchw", lambda a, w: topi.nn.group_conv2d_nchw(a, w, 1, 1, 1, 2),
       P((1, 4, 6, 6)), P((6, 2, 3, 3), name="W"))
simple("group_conv2d_nhwc", lambda a, w: topi.nn.group_conv2d_nhwc(a, w, 1, 1, 1, 2),
       P((1, 6, 6, 4)), P((3, 3, 2, 4), name="W"))
simple("depthwise_conv2d_nchw", lambda a, w: topi.nn.depthwise_conv2d_nchw(a, w, 1, 1, 1),
       P((1, 3, 6, 6)), P((3, 2, 3, 3), name="W"))
simple("depthwise_conv2d_nhwc", lambda a, w: topi.nn.depthwise_conv2d_nhwc(a, w, 2, 1, 1),
       P((1, 7, 7, 4)), P((3, 3, 4, 1), name="W"))
simple("conv2d_transpose_nchw", lambda a, w: topi.nn.conv2d_transpose_nchw(
    a, w, (2, 2), (1, 1, 1, 1), "float32", (1, 0)), P((1, 3, 4, 4)), P((3, 2, 3, 3), name="W"))
simple("conv1d_transpose_ncw", lambda a, w: topi.nn.conv1d_transpose_ncw(
    a, w, 2, (0, 1), "float32", (1,)), P((1, 2, 5)), P((2, 3, 3), name="W"))
simple("conv3d_ncdhw", lambda a, w: topi.nn.conv3d_ncdhw(a, w, 1, 1, 1, 1),
       P((1, 2, 4, 5, 5)), P((3, 2, 3, 3, 3), name="W"))
simple("conv3d_ndhwc", lambda a, w: topi.nn.conv3d_ndhwc(a, w, 2, 0, 1, 1),
       P((1, 5, 5, 5, 2)), P((2, 2, 2, 2, 3), name="W"))
simple("conv3d_transpose", lambda a, w: topi.nn.conv3d_transpose_ncdhw(
    a, w, (1, 2, 1), (0, 0, 0, 0, 0, 0), "float32", (0, 0, 0)), P((1, 2, 3, 3, 3)),
    P((2, 2, 2, 2, 2), name="W"))
simple("dense", lambda a, w: topi.nn.dense(a, w), P((3, 8)), P((5, 8), name="W"))
simple("dense_bias", lambda a, w, b: topi.nn.dense(a, w, b), P((3, 8)), P((5, 8), name="W"),
       P((5,), name="B"))
simple("dense_int8_int32", lambda a, w: topi.nn.dense(a, w, out_dtype="int32"),
       P((4, 16), "int8"), P((6, 16), "int8", "W"), ranges=_I8)
simple("dense_f16_f32", lambda a, w: topi.nn.dense(a, w, out_dtype="float32"),
       P((3, 8), "float16"), P((5, 8), "float16", "W"))
simple("matmul_tt", lambda a, b: topi.nn.matmul(a, b, None, None, True, True), P((8, 3)),
       P((5, 8), name="B"))
simple("topi_matmul", lambda a, b: topi.matmul(a, b), P((3, 8)), P((8, 5), name="B"))
simple("batch_matmul", lambda a, b: topi.nn.batch_matmul(a, b), P((2, 3, 8)),
       P((2, 5, 8), name="B"))
simple("batch_matmul_bcast_nt", lambda a, b: topi.nn.batch_matmul(a, b, None, None, False, False),
       P((1, 3, 8)), P((4, 8, 5), name="B"))
simple("batch_matmul_int8", lambda a, b: topi.nn.batch_matmul(a, b, out_dtype="int32"),
       P((2, 3, 16), "int8"), P((2, 4, 16), "int8", "B"), A=(-8, 8), B=(-8, 8))
simple("einsum", lambda a, b: topi.einsum("ij,jk->ik", a, b), P((3, 4)), P((4, 5), name="B"))
simple("tensordot", lambda a, b: topi.tensordot(a, b, 1), P((3, 4)), P((4, 5), name="B"))
for _pt in ("avg", "max"):
    for _cip in (True, False):
        for _ceil in (False, True):
            simple(f"pool2d_{_pt}_cip{int(_cip)}_ceil{int(_ceil)}",
                   lambda a, _p=_pt, _c=_cip, _m=_ceil: topi.nn.pool2d(
                       a, (3, 3), (2, 2), (1, 1), (1, 1, 0, 1), _p, _m, "NCHW", _c),
                   P((1, 2, 8, 7)))
    simple(f"pool1d_{_pt}", lambda a, _p=_pt: topi.nn.pool1d(
        a, (3,), (2,), (1,), (1, 1), _p, True, "NCW", False), P((2, 3, 9)))
    simple(f"pool3d_{_pt}", lambda a, _p=_pt: topi.nn.pool3d(
        a, (2, 2, 2), (2, 1, 2), (1, 1, 1), (0, 1, 0, 0, 1, 1), _p, False, "NCDHW", True),
        P((1, 2, 4, 5, 5)))
    simple(f"pool2d_nhwc_{_pt}_dil", lambda a, _p=_pt: topi.nn.pool2d(
        a, (2, 2), (1, 1), (2, 2), (0, 0, 0, 0), _p, False, "NHWC", True), P((1, 7, 7, 3)))
    simple(f"pool2d_{_pt}_int8", lambda a, _p=_pt: topi.nn.pool2d(
        a, (2, 2), (2, 2), (1, 1), (0, 0, 1, 1), _p, True, "NCHW", False),
        P((1, 2, 5, 5), "int8"))
    simple(f"adaptive_pool_{_pt}", lambda a, _p=_pt: topi.nn.adaptive_pool(a, (3, 2), _p),
           P((1, 2, 7, 5)))
    simple(f"adaptive_pool1d_{_pt}", lambda a, _p=_pt: topi.nn.adaptive_pool1d(a, (3,), _p, "NCW"),
           P((1, 2, 7)))
    simple(f"global_pool_{_pt}", lambda a, _p=_pt: topi.nn.global_pool(a, _p, "NHWC"),
           P((2, 3, 4, 5)))

# ---- nn: normalisation, softmax, layout ------------------------------------------------------

simple("softmax", lambda a: topi.nn.softmax(a, 1), P((3, 5, 2)), inexact=True)
simple("softmax_f64", lambda a: topi.nn.softmax(a), P((3, 5), "float64"), inexact=True)
simple("log_softmax", lambda a: topi.nn.log_softmax(a), P((3, 7)), inexact=True)
simple("fast_softmax", lambda a: topi.nn.fast_softmax(a), P((3, 7)), inexact=True)
simple("layer_norm", lambda a, g, b: topi.nn.layer_norm(a, g, b, [-1]), P((3, 4, 8)),
       P((8,), name="G"), P((8,), name="B"), inexact=True)
simple("layer_norm_2axes", lambda a, g, b: topi.nn.layer_norm(a, g, b, [1, 2]), P((2, 3, 4)),
       P((3, 4), name="G"), P((3, 4), name="B"), inexact=True)
simple("rms_norm", lambda a, w: topi.nn.rms_norm(a, w, [-1]), P((3, 8)), P((8,), name="G"),
       inexact=True)
simple("group_norm", lambda a, g, b: topi.nn.group_norm(a, g, b, 2, 1, [2, 3]),
       P((2, 4, 3, 3)), P((4,), name="G"), P((4,), name="B"), inexact=True)
simple("instance_norm", lambda a, g, b: topi.nn.instance_norm(a, g, b, 1, [2, 3]),
       P((2, 3, 4, 4)), P((3,), name="G"), P((3,), name="B"), inexact=True)
entry("batch_norm", lambda: (lambda a, g, b, m, v: Op(
    [a, g, b, m, v], _outs(topi.nn.batch_norm(a, g, b, m, v, 1, 1e-5, True, True, False))[:1],
    {"V": (0.5, 2.0)}, {}, True))(P((2, 3, 4)), P((3,), name="G"), P((3,), name="B"),
                                 P((3,), name="M"), P((3,), name="V")))
simple("lrn", lambda a: topi.nn.lrn(a, 3, 1, 0.001, 0.75, 2.0), P((1, 5, 3, 3)), inexact=True)
simple("pad_const", lambda a: topi.nn.pad(a, (1, 0), (2, 1), 1.5), P((3, 4)))
simple("pad_int8", lambda a: topi.nn.pad(a, (0, 1, 1), (1, 0, 2), -3), P((2, 3, 3), "int8"))
simple("mirror_pad_symmetric", lambda a: topi.nn.mirror_pad(a, (1, 2), (2, 1), "SYMMETRIC"),
       P((3, 4)))
simple("mirror_pad_reflect", lambda a: topi.nn.mirror_pad(a, (1, 2), (2, 1), "REFLECT"),
       P((3, 4)))
simple("reflect_pad", lambda a: topi.nn.reflect_pad(a, (0, 1, 2), (0, 2, 1)), P((2, 4, 5)))
simple("replicate_pad", lambda a: topi.nn.replicate_pad(a, (0, 1, 2), (0, 2, 1)), P((2, 4, 5)))
simple("circular_pad", lambda a: topi.nn.circular_pad(a, (0, 1, 2), (0, 2, 1)), P((2, 4, 5)))
simple("prelu", lambda a, s: topi.nn.prelu(a, s, 1), P((2, 3, 4)), P((3,), name="S"))
simple("depth_to_space_dcr", lambda a: topi.nn.depth_to_space(a, 2, "NCHW", "DCR"),
       P((1, 8, 2, 3)))
simple("depth_to_space_crd_nhwc", lambda a: topi.nn.depth_to_space(a, 2, "NHWC", "CRD"),
       P((1, 2, 3, 8)))
simple("space_to_depth", lambda a: topi.nn.space_to_depth(a, 2), P((1, 2, 4, 6)))
simple("dilate", lambda a: topi.nn.dilate(a, (1, 2, 3)), P((2, 3, 4)))
simple("flatten", topi.nn.flatten, P((2, 3, 4)))
simple("space_to_batch_nd", lambda a: topi.nn.space_to_batch_nd(a, [2], [1], [1]), P((2, 4, 3)))
for _m in ("nearest_neighbor", "bilinear", "bicubic"):
    simple(f"upsampling_{_m}", lambda a, _m=_m: topi.nn.upsampling(a, 2, 1.5, "NCHW", _m),
           P((1, 2, 3, 4)), inexact=True)
for _m, _ct, _rm in [("nearest_neighbor", "asymmetric", "floor"),
                     ("nearest_neighbor", "half_pixel", "round_prefer_ceil"),
                     ("linear", "half_pixel", ""), ("linear", "align_corners", ""),
                     ("cubic", "pytorch_half_pixel", ""), ("linear", "tf_half_pixel_for_nn", ""),
                     ("cubic", "asymmetric", "")]:
    simple(f"resize2d_{_m}_{_ct}", lambda a, _m=_m, _ct=_ct, _rm=_rm: topi.image.resize2d(
        a, (0.0, 0.0, 0.0, 0.0), (5, 7), "NCHW", _m, _ct, _rm), P((1, 2, 4, 3)), inexact=True)
simple("resize1d_linear", lambda a: topi.image.resize1d(a, (0.0, 0.0), (7,)), P((1, 2, 4)),
       inexact=True)
simple("resize2d_nhwc_int8", lambda a: topi.image.resize2d(
    a, (0.0, 0.0, 0.0, 0.0), (6, 5), "NHWC", "nearest_neighbor", "asymmetric", "floor"),
    P((1, 3, 4, 2), "int8"))
simple("resize3d_linear", lambda a: topi.image.resize3d(a, (0.0,) * 6, (3, 4, 5)),
       P((1, 1, 2, 3, 3)), inexact=True)
simple("upsampling3d", lambda a: topi.nn.upsampling3d(a, 2, 2, 1), P((1, 1, 2, 2, 3)))

# ---- transforms -----------------------------------------------------------------------------

simple("transpose", lambda a: topi.transpose(a, (2, 0, 1)), P((2, 3, 4)))
simple("transpose_int8", lambda a: topi.transpose(a), P((5, 7), "int8"))
simple("reshape", lambda a: topi.reshape(a, (4, 6)), P((2, 3, 4)))
simple("expand_dims", lambda a: topi.expand_dims(a, 1, 2), P((3, 4), "int32"))
simple("squeeze", lambda a: topi.squeeze(a, (1,)), P((3, 1, 4)))
simple("broadcast_to", lambda a: topi.broadcast_to(a, (2, 3, 4)), P((3, 1), "int64"))
simple("concatenate", lambda a, b: topi.concatenate([a, b], 1), P((2, 3), name="A"),
       P((2, 5), name="B"))
simple("concatenate3_int8", lambda a, b, c: topi.concatenate([a, b, c], 0), P((1, 3), "int8", "A"),
       P((2, 3), "int8", "B"), P((3, 3), "int8", "C"))
simple("stack", lambda a, b: topi.stack([a, b], 1), P((3, 4), name="A"), P((3, 4), name="B"))
simple("split_sections", lambda a: topi.split(a, 3, 1), P((2, 6, 2)))
simple("split_indices", lambda a: topi.split(a, [1, 4], 0), P((6, 3), "int32"))
simple("strided_slice", lambda a: topi.strided_slice(a, [1, 0], [4, 5], [2, 2]), P((5, 6)))
simple("strided_slice_neg", lambda a: topi.strided_slice(a, [4, -1], [0, -6], [-1, -2]),
       P((5, 6)))
simple("strided_slice_axes", lambda a: topi.strided_slice(a, [-3], [100], [1], axes=[1]),
       P((3, 5), "int8"))
simple("flip", lambda a: topi.flip(a, 1), P((3, 4, 2)))
simple("flip_neg_axis", lambda a: topi.flip(a, -1), P((3, 4), "uint8"))
simple("tile", lambda a: topi.tile(a, (2, 1, 3)), P((2, 3)))
simple("repeat", lambda a: topi.repeat(a, 3, 1), P((2, 3), "int32"))
for _mode in ("fast", "clip", "wrap"):
    _ix = (0, 4) if _mode == "fast" else (-7, 9)
    simple(f"take_axis0_{_mode}", lambda a, i, _m=_mode: topi.take(a, i, 0, mode=_m),
           P((5, 3)), P((4,), "int32", "I"), I=_ix)
    simple(f"take_flat_{_mode}", lambda a, i, _m=_mode: topi.take(a, i, mode=_m),
           P((3, 4), "int8"), P((2, 3), "int64", "I"), I=(0, 11) if _mode == "fast" else (-13, 20))
simple("gather", lambda a, i: topi.gather(a, 1, i), P((3, 5)), P((3, 4), "int32", "I"), I=(0, 4))
simple("gather_nd", lambda a, i: topi.gather_nd(a, i), P((4, 5, 3)), P((2, 6), "int32", "I"),
       I=(0, 3))
simple("gather_nd_batch", lambda a, i: topi.gather_nd(a, i, 1), P((2, 5, 3)),
       P((1, 2, 4), "int64", "I"), I=(0, 1))
simple("adv_index", lambda a, i, j: topi.adv_index(a, [i, j]), P((4, 5)), P((3,), "int64", "I"),
       P((3,), "int64", "J"), I=(0, 3), J=(0, 4))
for _red in ("update", "add", "mul", "min", "max"):
    simple(f"scatter_elements_{_red}", lambda d, i, u, _r=_red: topi.scatter_elements(
        d, i, u, 1, _r), P((3, 5), name="D"), P((3, 2), "int32", "I"), P((3, 2), name="U"),
        I=(0, 4))
simple("scatter_nd", lambda d, i, u: topi.scatter_nd(d, i, u, "add"), P((4, 3), name="D"),
       P((1, 2), "int32", "I"), P((2, 3), name="U"), I=(0, 3))
simple("one_hot", lambda i: topi.one_hot(i, 1.0, 0.0, 5, -1, "float32"),
       P((3, 2), "int32", "I"), I=(0, 5))
simple("one_hot_axis0_int8", lambda i: topi.one_hot(i, 7, -1, 4, 0, "int8"),
       P((3,), "int32", "I"), I=(-1, 4))
simple("layout_transform", lambda a: topi.layout_transform(a, "NCHW", "NCHW4c"), P((1, 8, 2, 3)))
simple("layout_transform_back", lambda a: topi.layout_transform(a, "NCHW2c", "NCHW"),
       P((1, 2, 3, 2, 2)))
simple("sequence_mask", lambda a, lens: topi.sequence_mask(a, lens, -1.0, 0), P((4, 3, 2)),
       P((3,), "int32", "L"), L=(0, 4))
simple("matrix_set_diag", lambda a, d: topi.matrix_set_diag(a, d), P((2, 4, 5)),
       P((2, 4), name="D"))
simple("matrix_set_diag_band", lambda a, d: topi.matrix_set_diag(a, d, (-1, 1), "LEFT_RIGHT"),
       P((4, 5)), P((3, 4), name="D"))
for _up in (True, False):
    simple(f"trilu_{'upper' if _up else 'lower'}", lambda a, _u=_up: topi.trilu(
        a, te.const(1 if _u else -1, "int32"), _u), P((2, 4, 5)))
for _fn in ("cumsum", "cumprod"):
    for _dt in ("float32", "int32"):
        for _ex in (False, True):
            _r = {"A": (-2, 2)} if _fn == "cumprod" and _dt == "int32" else {}
            simple(f"{_fn}_{_dt}_{'excl' if _ex else 'incl'}",
                   lambda a, _f=_fn, _e=_ex: getattr(topi, _f)(a, 1, None, _e), P((3, 5), _dt),
                   ranges=_r)
simple("cumsum_flat_int8_to_int32", lambda a: topi.cumsum(a, None, "int32"), P((3, 4), "int8"))
entry("arange", lambda: Op([], [topi.arange(1.5, 7.0, 0.5)]))
entry("arange_int", lambda: Op([], [topi.arange(10, 0, -3, "int32")]))
entry("full", lambda: Op([], [topi.full((2, 3), "int8", 7)]))
entry("eye", lambda: Op([], [topi.eye(3, 4, 1)]))
simple("full_like", lambda a: topi.full_like(a, 2.5), P((2, 3)))
simple("reverse_sequence", lambda a, lens: topi.reverse_sequence(a, lens, 1, 0), P((3, 5)),
       P((3,), "int32", "L"), L=(1, 5))
simple("unravel_index", lambda i, s: topi.unravel_index(i, s), P((5,), "int32", "I"),
       P((2,), "int32", "S"), I=(0, 8), S=(3, 4))
simple("sliding_window", lambda a: topi.sliding_window(a, 1, (2, 3), (1, 2)), P((2, 4, 7)))
simple("searchsorted", lambda s, v: topi.searchsorted(s, v), P((7,), name="S"), P((5,), name="V"))

# ---- symbolic shapes ------------------------------------------------------------------------


def symbolic(name: str, make: Callable[[Any], Op]) -> None:
    entry(name, lambda: make(te.var("n")))


symbolic("sym_exp", lambda n: (lambda a: Op([a], [topi.exp(a)], {}, {"n": 5}, True))(P((n, 4))))
symbolic("sym_add_bcast", lambda n: (lambda a, b: Op([a, b], [topi.add(a, b)], {}, {"n": 3}))(
    P((n, 4), name="A"), P((4,), name="B")))
symbolic("sym_sum", lambda n: (lambda a: Op([a], [topi.sum(a, 1)], {}, {"n": 6}))(P((n, 5))))
symbolic("sym_argmax", lambda n: (lambda a: Op([a], [topi.argmax(a, 0)], {}, {"n": 6}))(
    P((n, 5), "int32")))
symbolic("sym_softmax", lambda n: (lambda a: Op([a], [topi.nn.softmax(a)], {}, {"n": 4}, True))(
    P((3, n))))
symbolic("sym_dense", lambda n: (lambda a, w: Op([a, w], [topi.nn.dense(a, w)], {}, {"n": 3}))(
    P((n, 8)), P((4, 8), name="W")))
symbolic("sym_transpose", lambda n: (lambda a: Op([a], [topi.transpose(a)], {}, {"n": 5}))(
    P((n, 3), "int8")))
symbolic("sym_concat", lambda n: (lambda a, b: Op([a, b], [topi.concatenate([a, b], 0)], {},
                                                  {"n": 2}))(P((n, 3), name="A"),
                                                             P((4, 3), name="B")))
symbolic("sym_strided_slice", lambda n: (lambda a: Op(
    [a], [topi.strided_slice(a, [1], [n], [2])], {}, {"n": 7}))(P((n,))))
symbolic("sym_pool2d", lambda n: (lambda a: Op([a], [topi.nn.pool2d(
    a, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", False, "NCHW", True)], {}, {"n": 6}))(
    P((1, 2, n, n))))
symbolic("sym_cast", lambda n: (lambda a: Op([a], [topi.cast(a, "float16")], {}, {"n": 5}))(
    P((n, 2), "int32")))
symbolic("sym_layer_norm", lambda n: (lambda a, g, b: Op(
    [a, g, b], [topi.nn.layer_norm(a, g, b, [-1])], {}, {"n": 3}, True))(
    P((n, 8)), P((8,), name="G"), P((8,), name="B")))
symbolic("sym_take", lambda n: (lambda a, i: Op([a, i], [topi.take(a, i, 0)], {"I": (0, 3)},
                                                {"n": 4}))(P((n, 3)), P((5,), "int32", "I")))
symbolic("sym_reshape", lambda n: (lambda a: Op([a], [topi.reshape(a, (n * 3,))], {},
                                                {"n": 4}))(P((n, 3))))
symbolic("sym_cumsum", lambda n: (lambda a: Op([a], [topi.cumsum(a, 0)], {}, {"n": 5}))(
    P((n, 2), "int32")))



def symbolic64(name: str, make: Callable[[Any, Any], Op]) -> None:
    """Relax's legalisation gives shape variables int64: ``n`` and ``m``."""
    entry(name, lambda: make(te.var("n", "int64"), te.var("m", "int64")))


def _n(op: Callable[..., Any], *tensors: Any, binds: dict[str, int], inexact: bool = False,
       **ranges: tuple[float, float]) -> Op:
    return Op(list(tensors), _outs(op(*tensors)), dict(ranges), binds, inexact)


symbolic64("sym64_exp", lambda n, m: _n(topi.exp, P((n, m)), binds={"n": 3, "m": 5},
                                       inexact=True))
symbolic64("sym64_sum_keep", lambda n, m: _n(lambda a: topi.sum(a, 1, True), P((n, m)),
                                            binds={"n": 3, "m": 6}))
symbolic64("sym64_max_axis0", lambda n, m: _n(lambda a: topi.max(a, 0), P((n, m), "int8"),
                                             binds={"n": 4, "m": 3}))
symbolic64("sym64_softmax", lambda n, m: _n(topi.nn.softmax, P((n, m)), binds={"n": 2, "m": 7},
                                           inexact=True))
symbolic64("sym64_matmul", lambda n, m: _n(lambda a, b: topi.matmul(a, b), P((n, 8)),
                                          P((8, m), name="B"), binds={"n": 3, "m": 5}))
symbolic64("sym64_batch_matmul", lambda n, m: _n(
    lambda a, b: topi.nn.batch_matmul(a, b, transpose_b=False), P((2, n, 4)),
    P((2, 4, m), name="B"), binds={"n": 3, "m": 5}))
symbolic64("sym64_take", lambda n, m: _n(lambda a, i: topi.take(a, i, 0), P((n, 3)),
                                        P((m,), "int64", "I"), binds={"n": 4, "m": 6}, I=(0, 3)))
symbolic64("sym64_cumsum_cols2", lambda n, m: _n(lambda a: topi.cumsum(a, 0), P((n, 2), "int32"),
                                                binds={"n": 5}))
symbolic64("sym64_cumsum_cols3", lambda n, m: _n(lambda a: topi.cumsum(a, 0), P((n, 3)),
                                                binds={"n": 5}))
symbolic64("sym64_cumsum_last", lambda n, m: _n(lambda a: topi.cumsum(a, 1), P((3, n), "int32"),
                                               binds={"n": 5}))
symbolic64("sym64_cumprod_rows", lambda n, m: _n(lambda a: topi.cumprod(a, 1), P((n, 4)),
                                                binds={"n": 3}))
symbolic64("sym64_reshape", lambda n, m: _n(lambda a: topi.reshape(a, (n * m,)), P((n, m)),
                                           binds={"n": 3, "m": 4}))
symbolic64("sym64_concat", lambda n, m: _n(lambda a, b: topi.concatenate([a, b], 1),
                                          P((2, n), name="A"), P((2, m), name="B"),
                                          binds={"n": 3, "m": 2}))
symbolic64("sym64_strided_slice", lambda n, m: _n(
    lambda a: topi.strided_slice(a, [0, 1], [n, m], [1, 2]), P((n, m)), binds={"n": 3, "m": 7}))
symbolic64("sym64_layer_norm", lambda n, m: _n(
    lambda a, g, b: topi.nn.layer_norm(a, g, b, [-1]), P((n, 8)), P((8,), name="G"),
    P((8,), name="B"), binds={"n": 3}, inexact=True))
symbolic64("sym64_rms_norm", lambda n, m: _n(lambda a, g: topi.nn.rms_norm(a, g, [-1]),
                                            P((n, m)), P((m,), name="G"), binds={"n": 3, "m": 6},
                                            inexact=True))
symbolic64("sym64_pool2d_avg", lambda n, m: _n(lambda a: topi.nn.pool2d(
    a, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "avg", False, "NCHW", False), P((1, 2, n, m)),
    binds={"n": 5, "m": 4}))
symbolic64("sym64_conv2d", lambda n, m: _n(lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1),
                                          P((1, 2, n, m)), P((3, 2, 3, 3), name="W"),
                                          binds={"n": 5, "m": 4}))
symbolic64("sym64_transpose", lambda n, m: _n(lambda a: topi.transpose(a, (1, 0)),
                                             P((n, m), "int8"), binds={"n": 3, "m": 5}))
symbolic64("sym64_argmax", lambda n, m: _n(lambda a: topi.argmax(a, 1), P((n, m)),
                                          binds={"n": 3, "m": 5}))
symbolic64("sym64_where", lambda n, m: _n(topi.where, P((n, 1), "bool", "C"), P((n, m), name="A"),
                                         P((m,), name="B"), binds={"n": 3, "m": 4}))
symbolic64("sym64_one_hot", lambda n, m: _n(lambda i: topi.one_hot(i, 1.0, 0.0, 4, -1, "float32"),
                                           P((n,), "int64", "I"), binds={"n": 5}, I=(0, 3)))
symbolic64("sym64_resize", lambda n, m: _n(lambda a: topi.image.resize2d(
    a, (0.0,) * 4, (n * 2, m * 2), "NCHW", "linear", "half_pixel"), P((1, 1, n, m)),
    binds={"n": 3, "m": 2}, inexact=True))

# ---- float16 --------------------------------------------------------------------------------

for _fn in ("exp", "tanh", "sigmoid", "sqrt", "log"):
    simple(f"{_fn}_float16", getattr(topi, _fn), P((3, 7), "float16"), inexact=True,
           ranges={"A": (0.1, 5.0)} if _fn in ("sqrt", "log") else None)
simple("softmax_float16", topi.nn.softmax, P((3, 7), "float16"), inexact=True)
simple("layer_norm_float16", lambda a, g, b: topi.nn.layer_norm(a, g, b, [-1]),
       P((3, 8), "float16"), P((8,), "float16", "G"), P((8,), "float16", "B"), inexact=True)
simple("conv2d_float16", lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1), P((1, 2, 5, 5), "float16"),
       P((3, 2, 3, 3), "float16", "W"))
simple("dense_float16", lambda a, w: topi.nn.dense(a, w), P((3, 8), "float16"),
       P((4, 8), "float16", "W"))
simple("pool2d_avg_float16", lambda a: topi.nn.pool2d(
    a, (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), "avg", False, "NCHW", True),
    P((1, 2, 4, 4), "float16"))
simple("sum_float16", lambda a: topi.sum(a, 1), P((3, 9), "float16"))
simple("resize2d_float16", lambda a: topi.image.resize2d(a, (0.0,) * 4, (5, 6)),
       P((1, 1, 3, 4), "float16"), inexact=True)
simple("cumsum_float16", lambda a: topi.cumsum(a, 1), P((3, 6), "float16"))

# ---- NaN and infinities --------------------------------------------------------------------


def special(name: str, make: Callable[..., Any], *inputs: Any, inexact: bool = False) -> None:
    names = tuple(t.op.name for t in inputs if str(t.dtype).startswith("float"))
    entry(name, lambda: Op(list(inputs), _outs(make(*inputs)), {}, {}, inexact, names))


for _fn in ("isnan", "isinf", "isfinite", "abs", "floor", "round", "sign", "negative", "exp",
            "sigmoid", "tanh"):
    special(f"special_{_fn}", getattr(topi, _fn), P((4, 6)), inexact=_fn in ("exp", "sigmoid",
                                                                          "tanh"))
special("special_relu", topi.nn.relu, P((4, 6)))
special("special_leaky_relu", lambda a: topi.nn.leaky_relu(a, 0.2), P((4, 6)))
special("special_clip", lambda a: topi.clip(a, -1.0, 1.0), P((4, 6)))
special("special_maximum", topi.maximum, P((4, 6), name="A"), P((4, 6), name="B"))
special("special_minimum", topi.minimum, P((4, 6), name="A"), P((4, 6), name="B"))
special("special_max_reduce", lambda a: topi.max(a, 1), P((4, 6)))
special("special_min_reduce", lambda a: topi.min(a, 0), P((4, 6)))
special("special_sum", lambda a: topi.sum(a, 1), P((4, 6)))
special("special_argmax", lambda a: topi.argmax(a, 1), P((4, 6)))
special("special_argmin", lambda a: topi.argmin(a, 1), P((4, 6)))
special("special_pool_max", lambda a: topi.nn.pool2d(
    a, (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), "max", False, "NCHW", True), P((1, 2, 4, 4)))
special("special_softmax", topi.nn.softmax, P((3, 6)), inexact=True)
special("special_equal", topi.equal, P((4, 6), name="A"), P((4, 6), name="B"))
special("special_not_equal", topi.not_equal, P((4, 6), name="A"), P((4, 6), name="B"))
special("special_less", topi.less, P((4, 6), name="A"), P((4, 6), name="B"))
special("special_cast_f16", lambda a: topi.cast(a, "float16"), P((4, 6)))
special("special_cast_f32", lambda a: topi.cast(a, "float32"), P((4, 6), "float16"))
special("special_where", lambda c, a: topi.where(c, a, topi.negative(a)), P((4, 6), "bool", "C"),
        P((4, 6)))

# ---- medium shapes: large enough for the late stage's tiles, pairs and row vectors ----------

_I7: Ranges = {"A": (-127, 127), "W": (-127, 127), "B": (-127, 127)}
simple("m_dense", lambda a, w: topi.nn.dense(a, w), P((33, 70)), P((45, 70), name="W"))
simple("m_matmul", lambda a, b: topi.matmul(a, b), P((40, 64)), P((64, 52), name="B"))
simple("m_dense_int8_int32", lambda a, w: topi.nn.dense(a, w, out_dtype="int32"),
       P((48, 64), "int8"), P((40, 64), "int8", "W"), ranges=_I7)
simple("m_dense_uint8_int8", lambda a, w: topi.nn.dense(a, w, out_dtype="int32"),
       P((32, 96), "uint8"), P((24, 96), "int8", "W"), A=(0, 255), W=(-128, 127))
simple("m_matmul_int16", lambda a, b: topi.matmul(a, b), P((20, 36), "int16"),
       P((36, 28), "int16", "B"), A=(-30, 30), B=(-30, 30))
simple("m_batch_matmul", lambda a, b: topi.nn.batch_matmul(a, b), P((2, 17, 33)),
       P((2, 19, 33), name="B"))
simple("m_batch_matmul_int8", lambda a, b: topi.nn.batch_matmul(a, b, out_dtype="int32"),
       P((3, 16, 64), "int8"), P((3, 24, 64), "int8", "B"), ranges=_I7)
simple("m_conv2d", lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1), P((1, 8, 17, 17)),
       P((16, 8, 3, 3), name="W"))
simple("m_conv2d_nhwc_int8", lambda a, w: topi.nn.conv2d(a, w, 1, 1, 1, "NHWC", "HWIO",
                                                         out_dtype="int32"),
       P((1, 12, 12, 16), "int8"), P((3, 3, 16, 32), "int8", "W"), ranges=_I7)
simple("m_depthwise", lambda a, w: topi.nn.depthwise_conv2d_nchw(a, w, 1, 1, 1),
       P((1, 16, 20, 20)), P((16, 1, 3, 3), name="W"))
simple("m_pool2d_max", lambda a: topi.nn.pool2d(
    a, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", False, "NCHW", True), P((2, 8, 31, 29)))
simple("m_pool2d_avg", lambda a: topi.nn.pool2d(
    a, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg", True, "NCHW", False), P((2, 8, 31, 29)))
simple("m_global_avg", lambda a: topi.nn.global_pool(a, "avg"), P((2, 64, 9, 9)))
simple("m_softmax", lambda a: topi.nn.softmax(a), P((5, 1030)), inexact=True)
simple("m_log_softmax", lambda a: topi.nn.log_softmax(a), P((7, 257)), inexact=True)
simple("m_layer_norm", lambda a, g, b: topi.nn.layer_norm(a, g, b, [-1]), P((9, 768)),
       P((768,), name="G"), P((768,), name="B"), inexact=True)
simple("m_rms_norm", lambda a, g: topi.nn.rms_norm(a, g, [-1]), P((6, 1000)),
       P((1000,), name="G"), inexact=True)
simple("m_sum_rows", lambda a: topi.sum(a, 1), P((13, 1000)))
simple("m_sum_cols", lambda a: topi.sum(a, 0), P((300, 67)))
simple("m_sum_int32", lambda a: topi.sum(a, 1), P((13, 1001), "int32"))
simple("m_max_rows", lambda a: topi.max(a, 1), P((13, 515)))
simple("m_argmax_rows", lambda a: topi.argmax(a, 1), P((9, 517)))
simple("m_transpose", lambda a: topi.transpose(a), P((67, 45)))
simple("m_transpose_int8", lambda a: topi.transpose(a), P((128, 96), "int8"))
simple("m_transpose_3d", lambda a: topi.transpose(a, (0, 2, 1)), P((3, 64, 48)))
simple("m_cast_f16", lambda a: topi.cast(a, "float16"), P((70, 130)))
simple("m_cast_u8_f32", lambda a: topi.cast(a, "float32"), P((70, 130), "uint8"))
simple("m_cast_f32_i8", lambda a: topi.cast(a, "int8"), P((70, 130)), A=(-100.0, 100.0))
simple("m_add_bcast", topi.add, P((64, 1, 130), name="A"), P((7, 130), name="B"))
simple("m_take", lambda a, i: topi.take(a, i, 0), P((500, 16)), P((1000,), "int32", "I"),
       I=(0, 499))
simple("m_gather", lambda a, i: topi.gather(a, 1, i), P((40, 300)), P((40, 200), "int64", "I"),
       I=(0, 299))
simple("m_resize", lambda a: topi.image.resize2d(a, (0.0,) * 4, (61, 59)),
       P((1, 3, 30, 29)), inexact=True)
simple("m_cumsum", lambda a: topi.cumsum(a, 1), P((8, 300)))
simple("m_where", topi.where, P((64, 130), "bool", "C"), P((64, 130), name="A"),
       P((130,), name="B"))
simple("m_exp", topi.exp, P((70, 130)), inexact=True)
simple("m_tanh_f16", topi.tanh, P((70, 130), "float16"), inexact=True)

# ---- packed/extern operators (skipped: they call into TVM's runtime) -------------------------

simple("sort", lambda a: topi.sort(a), P((3, 5)))
simple("argsort", lambda a: topi.argsort(a), P((3, 5)))
simple("topk", lambda a: topi.topk(a, 2), P((3, 5)))
