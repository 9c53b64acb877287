"""Whole programs: capture every compile and launch of a script (:mod:`.capture`), the launches
and their records (:mod:`.launches`, :mod:`.records`), a program's marked regions and checks
(:mod:`.marks`), ranking kernels by GPU time (:mod:`.ranking`), Inductor (:mod:`.inductor`),
running a program with a variant (:mod:`.runner`) and the model-level A/B (:mod:`.model_ab`)."""
