"""The lab: scenario files (`scenario`), the experiment runner (`runner`), `mpsched run` and
`mpsched compare` (`experiment`), from raw reports to metrics (`analysis`, `metrics`, and the
parsers `pcap`, `tcpstats`) and the reports (`report`: JSON, CSV, Markdown, plots)."""
