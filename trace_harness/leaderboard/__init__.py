"""The leaderboard: the paper's tables built from runs (`build`), the interactive view (`interactive`) and the
`trace-bench leaderboard` command (`cli`)."""
