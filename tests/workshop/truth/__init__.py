"""`make truth`: every signal scored against the truth the history simulator injected (see
docs/signals.md, "How the signals are checked"). `grid` says which histories are simulated,
`metrics` scores them, `run` drives it all; the metric queries are in `sql/`."""
