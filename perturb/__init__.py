"""Perturbations: reasoning errors injected into solutions, photographic degradations of pages."""
