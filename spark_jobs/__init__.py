"""Spark programs around kipper: ``loadgen`` drives our Producer from Spark
tasks; ``analyze_metrics`` turns the broker's metrics dumps into tables, plots
and a report. Shared pieces live in ``common`` (session, errors, histograms)."""
