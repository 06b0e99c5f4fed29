"""The report: figures, Markdown and HTML pages and their sections, the publishability
verdict, exports, the Jupyter tables, a run checked against itself (``validate``), two
runs compared, and a run beside the published figures."""
