"""mathstress core: records, config, generators, verifier, pipeline, export and evaluation."""

__version__ = "0.1.0"
