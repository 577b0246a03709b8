"""Reading the zip archive of a model file with bounded memory and time.

A model file is data from anywhere, and every size a zip archive declares (in its
directory, or in problin's metadata, which an attacker rewrites as easily together with its
checksum) is a claim. So nothing here trusts one to bound the work:

- the end-of-directory record is read first, and an archive claiming more than
  ``max_members`` entries is refused before :mod:`zipfile` builds a record per entry;
- only stored and deflated members are read (problin writes deflate only): zipfile inflates
  bzip2 and LZMA members without an output limit;
- a member is inflated chunk by chunk, by :func:`read_member`, with a running count
  against the size its directory entry declares (checked beforehand against the absolute
  caps by the caller): a stream that inflates further is refused once it does, after at
  most that many bytes of output. (:meth:`zipfile.ZipFile.read` asks zlib for up to 2 GiB
  in one call whatever the entry declares.)
- the header of every ``.npy`` member must describe exactly the bytes that follow it,
  before numpy allocates the array the header promises.
"""
import io
import os
import struct
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from .errors import ModelFileError

__all__ = ["open_archive", "read_member", "check_npy"]

_CHUNK = 1 << 20  # bytes of input read, and of output inflated, per step
_END = b"PK\x05\x06"  # end of central directory record
_END_SIZE = 22
_ZIP64_LOCATOR = b"PK\x06\x07"
_LOCAL = b"PK\x03\x04"
_LOCAL_SIZE = 30


def _end_record(fh: IO[bytes], size: int) -> tuple[Any, Any]:
    """The end-of-directory record, found as :mod:`zipfile` finds it: at the very end, or
    else the last one within the 64 KiB a comment may take."""
    start = max(0, size - _END_SIZE - 0xFFFF)
    fh.seek(start)
    tail = fh.read(size - start)
    pos = len(tail) - _END_SIZE if tail[-_END_SIZE:-_END_SIZE + 4] == _END \
        else tail.rfind(_END)
    if pos < 0 or len(tail) - pos < _END_SIZE:
        return None, None
    return struct.unpack("<4s4H2LH", tail[pos:pos + _END_SIZE]), tail[max(0, pos - 20):pos]


def open_archive(fh: IO[bytes], path: Any, max_members: int) -> zipfile.ZipFile:
    """A :class:`zipfile.ZipFile` on the open file ``fh``, once its end record shows at most
    ``max_members`` entries (and no ZIP64 extension: problin's files never need one)."""
    size = os.fstat(fh.fileno()).st_size
    record, before = _end_record(fh, size)
    if record is None:
        raise ModelFileError(f"{path}: not a problin model file (not a zip archive; "
                             "truncated or another format)")
    entries = max(record[3], record[4])
    if before[:4] == _ZIP64_LOCATOR or entries == 0xFFFF:
        raise ModelFileError(f"{path}: not a problin model file (a ZIP64 archive)")
    if entries > max_members:
        raise ModelFileError(f"{path}: not a problin model file (the archive claims "
                             f"{entries} members; a model file has at most {max_members})")
    fh.seek(0)
    try:
        return zipfile.ZipFile(fh)
    except zipfile.BadZipFile as exc:
        raise ModelFileError(f"{path}: not a problin model file (not a zip archive: "
                             f"{exc})") from None


def check_method(info: zipfile.ZipInfo, path: Any) -> None:
    """Refuse a member that is encrypted or compressed other than by deflate (or stored)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise ModelFileError(f"{path}: member {info.filename!r} uses compression method "
                             f"{info.compress_type}; model files use deflate only")
    if info.flag_bits & 0x1:
        raise ModelFileError(f"{path}: member {info.filename!r} is encrypted")


def read_member(fh: IO[bytes], info: zipfile.ZipInfo, path: Any) -> bytes:
    """The bytes of one member, never inflating more than the ``info.file_size`` bytes its
    directory entry declares; the member must inflate to exactly that, with its CRC-32."""
    check_method(info, path)
    name, limit = info.filename, info.file_size
    fh.seek(info.header_offset)
    local = fh.read(_LOCAL_SIZE)
    if len(local) != _LOCAL_SIZE or local[:4] != _LOCAL:
        raise ModelFileError(f"{path}: member {name!r} has no local header (damaged file)")
    name_len, extra_len = struct.unpack("<2H", local[26:30])
    fh.seek(info.header_offset + _LOCAL_SIZE + name_len + extra_len)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) \
        if info.compress_type == zipfile.ZIP_DEFLATED else None
    out, crc, left = io.BytesIO(), 0, info.compress_size

    def emit(data: bytes) -> None:
        nonlocal crc
        if out.tell() + len(data) > limit:
            raise ModelFileError(f"{path}: member {name!r} inflates to more than the {limit} "
                                 "bytes its directory entry declares (tampered file)")
        out.write(data)
        crc = zlib.crc32(data, crc)

    while left > 0:
        chunk = fh.read(min(left, _CHUNK))
        if not chunk:
            raise ModelFileError(f"{path}: member {name!r} is truncated")
        left -= len(chunk)
        if inflater is None:
            emit(chunk)
            continue
        while True:  # each call inflates at most _CHUNK bytes, the rest stays pending
            data = inflater.decompress(chunk, _CHUNK)
            emit(data)
            chunk = inflater.unconsumed_tail
            if inflater.eof or (not chunk and len(data) < _CHUNK):
                break
        if inflater.eof:
            break
    if inflater is not None and not (inflater.eof and left == 0 and not inflater.unused_data):
        raise ModelFileError(f"{path}: member {name!r} is not one complete deflate stream "
                             "(damaged file)")
    if out.tell() != limit or crc != info.CRC:
        raise ModelFileError(f"{path}: member {name!r} does not match its directory entry "
                             "(size or CRC-32; damaged file)")
    return out.getvalue()


def check_npy(data: bytes, name: str, path: Any) -> None:
    """Refuse a ``.npy`` member whose header describes other than the bytes it holds (a
    header may promise any shape; numpy would allocate it before reading the data)."""
    fp = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(fp)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
    except ValueError as exc:
        raise ModelFileError(f"{path}: member {name!r} is not a valid .npy array "
                             f"({exc})") from None
    if dtype.hasobject:
        raise ModelFileError(f"{path}: member {name!r} holds Python objects")
    expected = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if expected != len(data) - fp.tell():
        raise ModelFileError(f"{path}: member {name!r}: its .npy header describes {expected} "
                             f"bytes of data but the member holds {len(data) - fp.tell()} "
                             "(damaged or tampered file)")
