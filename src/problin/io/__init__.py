"""Reading data files and reading/writing safe model files."""
from .dask_readers import DaskDataset, read_dask
from .errors import ColumnNotFoundError, DataFileError, ModelFileError
from .model_file import ModelFile, load, read_model_file, save

__all__ = ["save", "load", "read_model_file", "ModelFile", "ModelFileError",
           "DataFileError", "ColumnNotFoundError", "read_dask", "DaskDataset"]
