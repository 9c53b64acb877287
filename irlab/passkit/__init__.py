"""The pass kit: what a pass is written against (:mod:`.pass_api`), passes by name
(:mod:`.registry`), and variants as data (:mod:`.variant`: pipeline edits, how a variant launches)."""
