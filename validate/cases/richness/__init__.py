"""Cases for seed 004 (richness measures).
"""
