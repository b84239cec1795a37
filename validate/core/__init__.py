"""Core of the comparison layer: quantities and their comparison, the case registry and the suite
runner, sampling helpers shared by cases, and the ``richlazy`` command line.
"""
