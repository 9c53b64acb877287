"""The experiments of the source documents, one script each (``irlab experiments --help``).
Installed as the package ``irlab.experiments``; in a checkout they also run as
``python -m experiments.<name>``."""
