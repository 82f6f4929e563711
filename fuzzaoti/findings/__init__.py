"""What a maintainer does with a stored finding: replay it (``replay``), a standalone torch-only
script (``repro``), a Markdown bug report (``report``), the triage ladder and workaround probes
(``triage``), and findings grouped by root cause (``families``)."""
