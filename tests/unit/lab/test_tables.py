"""Markdown tables of run results, exactly."""

from __future__ import annotations

from mpsched.lab.report import RunResult
from mpsched.lab.tables import comparison_table, summary_table
from tests.unit.lab.sample_runs import sample_results


def test_summary_table_exact():
    # hash goodput: mean 10, s = sqrt(2), h = t(1) * s / sqrt(2) = 12.706205
    assert summary_table(sample_results()) == (
        "| scenario | policy | runs | goodput_mbps | jain | rtt_p50_ms | custom |\n"
        "|---|---|---:|---:|---:|---:|---:|\n"
        "| llhd1 | hash | 2 | 10.0 ± 12.7 | 0.900 (n=1) | 21.0 ± 12.7 | \u2013 |\n"
        "| llhd1 | llhd | 1 | 12.0 | 0.950 | 15.0 | 3.00 |\n"
        "| lm3 | hash | 1 | 5.00 | \u2013 | \u2013 | \u2013 |\n"
        "\n"
        "CPU load not recorded for 4 of 4 run(s).\n"  # results without the cpu_bound field
    )


def test_comparison_table_exact():
    assert comparison_table(sample_results()) == (
        "### llhd1\n"
        "\n"
        "runs per policy: hash: 2, llhd: 1\n"
        "\n"
        "| metric | hash | llhd |\n"
        "|---|---:|---:|\n"
        "| goodput_mbps ↑ | 10.0 ± 12.7 | **12.0** |\n"
        "| jain ↑ | 0.900 (n=1) | **0.950** |\n"
        "| rtt_p50_ms ↓ | 21.0 ± 12.7 | **15.0** |\n"
        "| custom | \u2013 | 3.00 |\n"
        "\n"
        "### lm3\n"
        "\n"
        "runs per policy: hash: 1\n"
        "\n"
        "| metric | hash |\n"
        "|---|---:|\n"
        "| goodput_mbps ↑ | 5.00 |\n"
        "\n"
        "↑ higher is better, ↓ lower is better; **bold**: best mean. Cells: mean ± 95 % CI.\n"
        "CPU load not recorded for 4 of 4 run(s).\n"
    )
    assert comparison_table([]) == ""


def test_comparison_marks_ties():
    a = RunResult("s", "a", 0, 0, 1.0, metrics={"retrans": 2.0})
    b = RunResult("s", "b", 0, 0, 1.0, metrics={"retrans": 2.0})
    assert "| retrans ↓ | **2.00** | **2.00** |" in comparison_table([a, b])
