"""Cases for seed 003 (equality reasoning).
"""
