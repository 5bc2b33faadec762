"""What every CPU build does before the pipeline: bfloat16/float8 legalisation, serial
thread allreduces, and the refusal of constructs without CPU meaning
(:func:`lowering.cpu.prepare.prepare_for_cpu`).
"""
