"""Cases for seed 000 (coding schemes).
"""
