"""cairnbench: the pieces of bench/compare.

Measuring (runner, clients, measure_*) writes one JSON file per mode; rendering
(render, render_tables, render_common) turns those files into
docs/benchmarks.md, docs/datanode-tables.md and the plots. bench/README.md
describes the layout and the JSON.
"""
