"""The leaderboard: the rows scored from runs with their intervals and marks (`build`, `marks`), the paper's
tables rendered from them (`render`: text and CSV), the interactive view (`interactive`), the exports
(`export`, `hub_results`) and the `trace-bench leaderboard` command (`cli`)."""
