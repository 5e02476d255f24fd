"""The parts of ``haiku.core.errors``, which is the one place to import them from."""
