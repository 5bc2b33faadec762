"""Scalar and vector type objects: ``T.int32``, ``T.float32x4``, ``T.handle``, ``T.bool``.

Each object works three ways, as in TVMScript:

* as an annotation (``x: T.int32``): the parser reads its ``dtype``;
* as a constant maker: ``T.float32(1.0)`` is a ``FloatImm``, ``T.int64(3)`` an
  ``IntImm`` (a float with a fraction into an integer type is a TypeError), and
  an expression argument is cast (``T.float32(i)``);
* as a fresh variable maker: ``T.int32()`` is a new ``Var``
  (``is_size_var=True`` makes a ``SizeVar``); ``T.handle("float32", "global")``
  is a handle var pointing to float32 data.
"""

from __future__ import annotations

from ._common import HandleType, ScalarType

__all__ = [
    "bfloat16",
    "bfloat16x2",
    "bfloat16x4",
    "bfloat16x8",
    "bfloat16x16",
    "bfloat16x32",
    "bfloat16x64",
    "e4m3_float8",
    "e4m3_float8x2",
    "e4m3_float8x4",
    "e4m3_float8x8",
    "e4m3_float8x16",
    "e4m3_float8x32",
    "e4m3_float8x64",
    "e5m2_float8",
    "e5m2_float8x2",
    "e5m2_float8x4",
    "e5m2_float8x8",
    "e5m2_float8x16",
    "e5m2_float8x32",
    "e5m2_float8x64",
    "bool_",
    "float16",
    "float16x16",
    "float16x2",
    "float16x32",
    "float16x4",
    "float16x64",
    "float16x8",
    "float32",
    "float32x16",
    "float32x2",
    "float32x32",
    "float32x4",
    "float32x64",
    "float32x8",
    "float64",
    "float64x16",
    "float64x2",
    "float64x32",
    "float64x4",
    "float64x64",
    "float64x8",
    "handle",
    "int16",
    "int16x16",
    "int16x2",
    "int16x32",
    "int16x4",
    "int16x64",
    "int16x8",
    "int32",
    "int32x16",
    "int32x2",
    "int32x32",
    "int32x4",
    "int32x64",
    "int32x8",
    "int64",
    "int64x16",
    "int64x2",
    "int64x32",
    "int64x4",
    "int64x64",
    "int64x8",
    "int8",
    "int8x16",
    "int8x2",
    "int8x32",
    "int8x4",
    "int8x64",
    "int8x8",
    "uint16",
    "uint16x16",
    "uint16x2",
    "uint16x32",
    "uint16x4",
    "uint16x64",
    "uint16x8",
    "uint32",
    "uint32x16",
    "uint32x2",
    "uint32x32",
    "uint32x4",
    "uint32x64",
    "uint32x8",
    "uint64",
    "uint64x16",
    "uint64x2",
    "uint64x32",
    "uint64x4",
    "uint64x64",
    "uint64x8",
    "uint8",
    "uint8x16",
    "uint8x2",
    "uint8x32",
    "uint8x4",
    "uint8x64",
    "uint8x8",
]

int8 = ScalarType("int8")
int16 = ScalarType("int16")
int32 = ScalarType("int32")
int64 = ScalarType("int64")
uint8 = ScalarType("uint8")
uint16 = ScalarType("uint16")
uint32 = ScalarType("uint32")
uint64 = ScalarType("uint64")
float16 = ScalarType("float16")
float32 = ScalarType("float32")
float64 = ScalarType("float64")
bool_ = ScalarType("bool")
handle = HandleType()
int8x2 = ScalarType("int8x2")
int8x4 = ScalarType("int8x4")
int8x8 = ScalarType("int8x8")
int8x16 = ScalarType("int8x16")
int8x32 = ScalarType("int8x32")
int8x64 = ScalarType("int8x64")
int16x2 = ScalarType("int16x2")
int16x4 = ScalarType("int16x4")
int16x8 = ScalarType("int16x8")
int16x16 = ScalarType("int16x16")
int16x32 = ScalarType("int16x32")
int16x64 = ScalarType("int16x64")
int32x2 = ScalarType("int32x2")
int32x4 = ScalarType("int32x4")
int32x8 = ScalarType("int32x8")
int32x16 = ScalarType("int32x16")
int32x32 = ScalarType("int32x32")
int32x64 = ScalarType("int32x64")
int64x2 = ScalarType("int64x2")
int64x4 = ScalarType("int64x4")
int64x8 = ScalarType("int64x8")
int64x16 = ScalarType("int64x16")
int64x32 = ScalarType("int64x32")
int64x64 = ScalarType("int64x64")
uint8x2 = ScalarType("uint8x2")
uint8x4 = ScalarType("uint8x4")
uint8x8 = ScalarType("uint8x8")
uint8x16 = ScalarType("uint8x16")
uint8x32 = ScalarType("uint8x32")
uint8x64 = ScalarType("uint8x64")
uint16x2 = ScalarType("uint16x2")
uint16x4 = ScalarType("uint16x4")
uint16x8 = ScalarType("uint16x8")
uint16x16 = ScalarType("uint16x16")
uint16x32 = ScalarType("uint16x32")
uint16x64 = ScalarType("uint16x64")
uint32x2 = ScalarType("uint32x2")
uint32x4 = ScalarType("uint32x4")
uint32x8 = ScalarType("uint32x8")
uint32x16 = ScalarType("uint32x16")
uint32x32 = ScalarType("uint32x32")
uint32x64 = ScalarType("uint32x64")
uint64x2 = ScalarType("uint64x2")
uint64x4 = ScalarType("uint64x4")
uint64x8 = ScalarType("uint64x8")
uint64x16 = ScalarType("uint64x16")
uint64x32 = ScalarType("uint64x32")
uint64x64 = ScalarType("uint64x64")
float16x2 = ScalarType("float16x2")
float16x4 = ScalarType("float16x4")
float16x8 = ScalarType("float16x8")
float16x16 = ScalarType("float16x16")
float16x32 = ScalarType("float16x32")
float16x64 = ScalarType("float16x64")
float32x2 = ScalarType("float32x2")
float32x4 = ScalarType("float32x4")
float32x8 = ScalarType("float32x8")
float32x16 = ScalarType("float32x16")
float32x32 = ScalarType("float32x32")
float32x64 = ScalarType("float32x64")
float64x2 = ScalarType("float64x2")
float64x4 = ScalarType("float64x4")
float64x8 = ScalarType("float64x8")
float64x16 = ScalarType("float64x16")
float64x32 = ScalarType("float64x32")
float64x64 = ScalarType("float64x64")
# Low-precision floats (TVM v0.16 spellings); numpy stores them as uint16/uint8.
bfloat16 = ScalarType("bfloat16")
bfloat16x2 = ScalarType("bfloat16x2")
bfloat16x4 = ScalarType("bfloat16x4")
bfloat16x8 = ScalarType("bfloat16x8")
bfloat16x16 = ScalarType("bfloat16x16")
bfloat16x32 = ScalarType("bfloat16x32")
bfloat16x64 = ScalarType("bfloat16x64")
e4m3_float8 = ScalarType("e4m3_float8")
e4m3_float8x2 = ScalarType("e4m3_float8x2")
e4m3_float8x4 = ScalarType("e4m3_float8x4")
e4m3_float8x8 = ScalarType("e4m3_float8x8")
e4m3_float8x16 = ScalarType("e4m3_float8x16")
e4m3_float8x32 = ScalarType("e4m3_float8x32")
e4m3_float8x64 = ScalarType("e4m3_float8x64")
e5m2_float8 = ScalarType("e5m2_float8")
e5m2_float8x2 = ScalarType("e5m2_float8x2")
e5m2_float8x4 = ScalarType("e5m2_float8x4")
e5m2_float8x8 = ScalarType("e5m2_float8x8")
e5m2_float8x16 = ScalarType("e5m2_float8x16")
e5m2_float8x32 = ScalarType("e5m2_float8x32")
e5m2_float8x64 = ScalarType("e5m2_float8x64")
