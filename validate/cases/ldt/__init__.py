"""Cases for seed 002 (sample complexity / LDT).
"""
