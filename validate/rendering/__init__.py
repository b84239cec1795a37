"""Rendering: Markdown/JSON reports, figures and scaling-table text. Computation lives elsewhere.
"""
