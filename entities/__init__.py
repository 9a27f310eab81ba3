"""Mentions -> entities: the derived layer, the curated gazetteer, resolution."""
