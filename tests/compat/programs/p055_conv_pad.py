from tvm.script import tir as T


@T.prim_func
def conv1d(X: T.Buffer((1, 4, 18), "float32"), W: T.Buffer((8, 4, 3), "float32"), Y: T.Buffer((1, 8, 16), "float32")):
    T.func_attr({"global_symbol": "conv1d", "tir.noalias": T.bool(True)})
    for n, co, x, ci, r in T.grid(1, 8, 16, 4, 3):
        with T.block("conv"):
            vn, vco, vx, vci, vr = T.axis.remap("SSSRR", [n, co, x, ci, r])
            T.reads(X[vn, vci, vx + vr], W[vco, vci, vr])
            T.writes(Y[vn, vco, vx])
            with T.init():
                Y[vn, vco, vx] = T.float32(0)
            Y[vn, vco, vx] = Y[vn, vco, vx] + X[vn, vci, vx + vr] * W[vco, vci, vr]
