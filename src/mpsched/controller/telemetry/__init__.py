"""Path state from the data plane's telemetry: per-path estimators (`estimators`) over the
reports' sliding windows (`windows`), the export and liveness settings and the probe rule
(`config`), counter rates (`stats`) and ports' rates and links' loads (`ports`), pure, no I/O."""
