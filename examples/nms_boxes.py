"""Host helper functions inside a kernel (seed F4, after TVM's NMS): box corners and areas.

``get_box_coordinates`` is ordinary Python that the parser *calls* while parsing: it returns
four TIR expressions, which the kernel binds to names. Functions are captured only when
listed in ``capture=[...]`` (numbers and strings of the enclosing scope are captured
automatically). The kernel computes, for each pair of boxes of a batch, their
intersection-over-union, the quantity non-maximum suppression thresholds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _timing import report

import tvmscript
from tvmscript import tir as T

BATCH, BOXES = 2, 32


def get_box_coordinates(boxes: Any, batch: Any, box: Any) -> tuple[Any, Any, Any, Any]:
    """Left, top, right, bottom of a box given by two corners in any order."""
    left = T.min(boxes[batch, box, 0], boxes[batch, box, 2])
    top = T.min(boxes[batch, box, 1], boxes[batch, box, 3])
    right = T.max(boxes[batch, box, 0], boxes[batch, box, 2])
    bottom = T.max(boxes[batch, box, 1], boxes[batch, box, 3])
    return left, top, right, bottom


def area(left: Any, top: Any, right: Any, bottom: Any) -> Any:
    return (right - left) * (bottom - top)


@T.prim_func(capture=[get_box_coordinates, area])
def pairwise_iou(
    boxes: T.Buffer((BATCH, BOXES, 4), "float32"),
    iou: T.Buffer((BATCH, BOXES, BOXES), "float32"),
) -> None:
    for b, i, j in T.grid(BATCH, BOXES, BOXES):
        a_l, a_t, a_r, a_b = get_box_coordinates(boxes, b, i)
        b_l, b_t, b_r, b_b = get_box_coordinates(boxes, b, j)
        w = T.max(T.float32(0), T.min(a_r, b_r) - T.max(a_l, b_l))
        h = T.max(T.float32(0), T.min(a_b, b_b) - T.max(a_t, b_t))
        inter = w * h
        union = area(a_l, a_t, a_r, a_b) + area(b_l, b_t, b_r, b_b) - inter
        iou[b, i, j] = T.if_then_else(union > T.float32(0), inter / union, T.float32(0))


def numpy_iou(boxes: np.ndarray) -> np.ndarray:
    lo = np.minimum(boxes[..., :2], boxes[..., 2:])
    hi = np.maximum(boxes[..., :2], boxes[..., 2:])
    size = np.clip(
        np.minimum(hi[:, :, None], hi[:, None]) - np.maximum(lo[:, :, None], lo[:, None]), 0, None
    )
    inter = size[..., 0] * size[..., 1]
    areas = np.prod(hi - lo, axis=-1)
    union = areas[:, :, None] + areas[:, None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0).astype(np.float32)


def main() -> None:
    kernel = tvmscript.build(pairwise_iou)
    boxes = np.random.default_rng(0).random((BATCH, BOXES, 4), dtype=np.float32)
    iou = np.empty((BATCH, BOXES, BOXES), np.float32)
    kernel(boxes, iou)
    np.testing.assert_allclose(iou, numpy_iou(boxes), rtol=1e-5, atol=1e-6)
    print("pairwise IoU (host helper functions) matches numpy")
    report(f"pairwise_iou {BATCH}x{BOXES} boxes", lambda: kernel(boxes, iou),
           lambda: numpy_iou(boxes))


if __name__ == "__main__":
    main()
