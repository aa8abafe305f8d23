"""Inventory: YAML files -> typed models plus a source map."""
