"""Path state from the data plane's telemetry: per-path estimators (`estimators`) over the
reports' sliding windows (`windows`), the export and liveness settings and the probe rule
(`config`), and counter rates (`stats`), pure, no I/O."""
