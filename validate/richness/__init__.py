"""Richness measures (seed 004 and the weight statistics of seed 003): D_LR, CKA, eigen-
visualisation, neural collapse, weight alignment and relative changes.
"""
