"""Reading evaluation dumps and writing results."""

from evalframe.io.load import expand_paths, load, scan
from evalframe.io.save import save

__all__ = ["expand_paths", "load", "save", "scan"]
