"""The domain's operations, one typed service per tool family; `Memory` (memory/api.py) holds one of each.

A service takes what it needs at construction (the knowledge bases, the source memories, the observations)
and exposes one method per operation, returning the domain's records. The tool handlers call them."""
