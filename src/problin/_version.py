"""The version of problin (read by the package, the command line and model files)."""
__version__ = "0.1.0"
