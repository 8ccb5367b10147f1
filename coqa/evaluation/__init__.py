"""Evaluation: the official CCKS / NLPCC metrics, reading result and gold
files, comparing two runs, and dev-set validation with an error breakdown.

It uses the pipeline only through the `Answer` records it returns; nothing
below coqa.evaluation imports it.
"""
