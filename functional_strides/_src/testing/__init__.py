"""Tools for tests of code that uses views: hypothesis strategies, assertions, the PyTorch check."""
