"""Validation cases, one subpackage per paper. Each module registers its cases with
:func:`richlazy.validate.register_case` when imported; :func:`richlazy.validate.all_cases` imports
the modules listed in :data:`CASE_MODULES`.
"""
