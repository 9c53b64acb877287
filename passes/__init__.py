"""irlab's built-in Python passes, one per file, each registered by name (``irlab passes`` lists
them). Installed as the package ``irlab.passes``; :mod:`irlab.passkit.registry` imports every module here."""
