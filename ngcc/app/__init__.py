"""Applications built on the campaign and the report: ``ngcc evaluate`` (submission
archives: build, KAT gate, campaign, report)."""
