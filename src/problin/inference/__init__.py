"""Statistical inference shared by the estimators: tests, statistics and their display."""
