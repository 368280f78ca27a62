"""Path state from the data plane's telemetry: per-path estimators (`estimators`) and
counter rates (`stats`), pure, no I/O."""
