"""The main pipeline's passes, in :data:`lowering.pipeline.PIPELINE_ORDER` order up to
``insert_entry_checks``: tensors to buffers, blocks to loops, flattening, allocation
placement, unrolling, vectorization, simplification (target-independent).
"""
