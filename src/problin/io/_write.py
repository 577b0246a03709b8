"""Writing a file so that it is complete or not there, without changing what the path is.

A model file is written beside its destination and renamed over it, so a reader never
sees half a file and a failed write leaves the old one. Done naively (a temporary file of
mode 0600, ``os.replace`` onto the path as given) that replaced a symlink by a regular
file instead of writing its target, a FIFO or ``/dev/null`` (run as root) by a regular
file, and made every model file 0600. The rules here:

- the destination is the path with every symlink resolved: a symlink's target is written
  (created if the link dangles), the link left as it is;
- it must be a regular file or not exist: a directory, device, FIFO or socket is refused
  with a ``ValueError`` *before* anything is opened (opening a FIFO to write would block),
  by :func:`destination`, which the command line also calls before a fit so that a long
  fit is not wasted on a path it cannot write;
- the temporary file is created in the destination's folder (a rename is atomic only
  within a file system) with mode ``0666`` less the umask, as ``open()`` would create a
  new file; replacing a file, it is created with that file's mode (less the umask: never
  more open than the file while it is written) and given its mode (and, where the
  process may set it, its owner) before the rename: a 0644 file stays 0644, a 0600 one
  0600;
- the temporary file is removed on any error and on interrupts; under the default
  action of SIGTERM (which ends the process without running Python's cleanup) a handler
  is installed for the duration of the write (main thread only: Python runs signal
  handlers there) that removes it and then ends the process by SIGTERM as before. A
  program's own SIGTERM handler is left in place: what it raises is cleaned up like any
  error.

Replacing by rename gives the path a new inode: other hard links keep the old content.
"""
import contextlib
import os
import secrets
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

__all__ = ["destination", "write_atomically"]

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def destination(path: str | os.PathLike[str]) -> tuple[str, os.stat_result | None]:
    """The regular file that writing ``path`` replaces (symlinks resolved) and its status,
    ``None`` where it does not exist yet.

    Raises
    ------
    ValueError
        If the path is (or a symlink at it points to) a directory, device, FIFO or socket.
    FileNotFoundError
        If the folder it would be written in does not exist.
    """
    shown = os.fspath(path)
    target = os.path.realpath(shown)
    try:
        status: os.stat_result | None = os.stat(target)  # never opens it
    except FileNotFoundError:
        status = None
    if status is not None and not stat.S_ISREG(status.st_mode):
        kind = next((name for test, name in _KINDS if test(status.st_mode)),
                    "not a regular file")
        via = f" (a symlink to {target})" if os.path.islink(shown) else ""
        raise ValueError(f"{shown}{via} is {kind}: a model file is written only to a "
                         "regular file (written beside it, then renamed over it)")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"the folder {folder!r} of {shown!r} does not exist")
    return target, status


def write_atomically(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> None:
    """Write a file by ``write(binary file)`` to ``path`` by the rules of the module
    docstring: all of it or nothing, the path's kind, symlinks and mode respected."""
    target, status = destination(path)
    folder, name = os.path.split(target)
    # 64 random bits: the name is ours alone (O_EXCL refuses anything already there)
    tmp = os.path.join(folder, f".{name}.{secrets.token_hex(8)}.tmp")
    opened = False
    with _sigterm_cleans_up():
        try:
            # never more open than the final file while it is written (the umask applies)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                         0o666 if status is None else stat.S_IMODE(status.st_mode) & 0o777)
            opened = True
            with os.fdopen(fd, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
                if status is not None:
                    _keep_mode_and_owner(fh.fileno(), status)
            os.replace(tmp, target)
        except BaseException as exc:
            # (the name is someone else's only where creating it exclusively failed)
            if opened or not isinstance(exc, FileExistsError):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise
    _sync_folder(folder)


def _keep_mode_and_owner(fd: int, status: os.stat_result) -> None:
    """The replaced file's permission bits, and its owner where this process may set it
    (root replacing another user's file; anyone else keeps being the owner)."""
    os.fchmod(fd, stat.S_IMODE(status.st_mode))
    if (status.st_uid, status.st_gid) != (os.geteuid(), os.getegid()):
        with contextlib.suppress(PermissionError):
            os.fchown(fd, status.st_uid, status.st_gid)
            os.fchmod(fd, stat.S_IMODE(status.st_mode))  # chown may clear setuid bits


def _sync_folder(folder: str) -> None:
    """Make the rename durable (best effort: some file systems cannot sync a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class _Terminated(BaseException):
    """SIGTERM arrived during a write (raised by the handler of :func:`_sigterm_cleans_up`)."""


@contextlib.contextmanager
def _sigterm_cleans_up() -> Iterator[None]:
    """Under SIGTERM's default action, turn SIGTERM into an exception for the duration of
    the block (whose cleanup then runs), and afterwards end the process by SIGTERM as the
    default action would have."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield  # a program's own handler, or SIG_IGN: theirs to keep
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)  # ends the process here
        raise SystemExit(128 + signal.SIGTERM) from None  # (if the signal is blocked)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
