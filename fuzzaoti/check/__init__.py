"""Verdicts: element-by-element comparison against eager and a float64 reference (``oracle``),
whether export's "Constraints violated" holds (``guards``), a checked case's outcome as a value
(``outcome``), and the stable failure signature findings are deduplicated by (``signature``)."""
