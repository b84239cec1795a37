"""richlazy.validate"""
