"""Core of the comparison layer, its ground floor: quantities and their comparison, the case
registry (and the one registry mechanism that cases, sweeps and benchmarks share), the suite
runner, sampling helpers shared by cases, the output-folder lock and the report diff. The
``richlazy`` command line stands on it, in ``richlazy.validate.cli``; nothing here imports that.
"""
