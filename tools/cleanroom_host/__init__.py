"""Host tool of the cleanroom measurement kernel (see tools/cleanroom)."""

__version__ = "0.1.0"
