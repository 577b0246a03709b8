"""Hostile model files (issue 13, item 6): a small file that inflates to gigabytes.

Each bomb is a real model file with one member replaced by a deflate stream of 2 GiB of
zeros (about 2 MB on disk), the metadata rewritten to match and its checksum recomputed,
so only the loader's own bounds stand between the file and the memory. Each is loaded in
a child process whose address space is limited (so a regression fails with a
``MemoryError`` there instead of taking the machine's memory), and the child reports how
far the load raised its peak resident memory.
"""
import hashlib
import io
import json
import os
import struct
import zipfile
import zlib

import numpy as np
import pytest
from tests.io._bounded_child import run_bounded

import problin
from problin.io import ModelFileError

_MIB = 1 << 20
_BOMB_MIB = 2048  # 2 GiB of zeros after the .npy header
_PEAK_LIMIT_MB = 300

def _zip(members, comment):
    """A zip archive written by hand, so that every directory field is ours to choose.

    ``members``: ``(name, crc, declared_size, deflated_bytes)``."""
    out, central = io.BytesIO(), []
    for name, crc, size, data in members:
        raw = name.encode()
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x5021, crc,
                              len(data), size, len(raw), 0) + raw + data)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x5021,
                                   crc, len(data), size, len(raw), 0, 0, 0, 0, 0,
                                   offset) + raw)
    start = out.tell()
    out.write(b"".join(central))
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central),
                          out.tell() - start, start, len(comment)) + comment)
    return out.getvalue()


def _deflate(data):
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    return co.compress(data) + co.flush()


@pytest.fixture(scope="module")
def bomb():
    """The .npy bytes' header, the deflated bomb (header + 2 GiB of zeros) and the CRC-32
    and SHA-256 of everything it inflates to.

    Deflating 2 GiB would take seconds; after a full flush the compressor starts afresh,
    so one deflated MiB of zeros repeated is a valid stream of many MiB of zeros."""
    n = _BOMB_MIB * _MIB // 8
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False,
                                               "shape": (n,)})
    header = buf.getvalue()
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = co.compress(header) + co.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(_MIB)
    block = co.compress(zeros) + co.flush(zlib.Z_FULL_FLUSH)
    stream = head + block * _BOMB_MIB + co.flush()
    crc, sha = zlib.crc32(header), hashlib.sha256(header)
    for _ in range(_BOMB_MIB):
        crc = zlib.crc32(zeros, crc)
        sha.update(zeros)
    return {"header": header, "stream": stream, "crc": crc, "sha256": sha.hexdigest(),
            "size": len(header) + _BOMB_MIB * _MIB}


@pytest.fixture(scope="module")
def model_members(tmp_path_factory):
    """The members (name -> bytes) and metadata of a small real model file."""
    path = tmp_path_factory.mktemp("bombs") / "real.problin"
    X = np.random.default_rng(0).normal(size=(30, 2))
    problin.save(problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int)), path)
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    return members, json.loads(members["metadata.json"])


def _write(path, members, meta, replaced):
    """A model file of ``members`` with metadata ``meta`` (its checksum recomputed) and
    the members in ``replaced`` (name -> (crc, declared size, deflated bytes))."""
    meta_bytes = json.dumps(meta, indent=1).encode()
    members = {**members, "metadata.json": meta_bytes}
    entries = [(name, *replaced[name]) if name in replaced else
               (name, zlib.crc32(data), len(data), _deflate(data))
               for name, data in members.items()]
    comment = b"problin-model sha256=" + hashlib.sha256(meta_bytes).hexdigest().encode()
    path.write_bytes(_zip(entries, comment))
    assert path.stat().st_size < 4 * _MIB  # small on disk
    return path


def _load_in_child(path):
    return run_bounded("load", path, ok="loaded")


def test_a_sound_hand_written_file_loads(tmp_path, model_members):
    # The hand-written zip is a valid model file: the refusals below are the bombs'.
    members, meta = model_members
    path = _write(tmp_path / "ok.problin", members, meta, {})
    assert isinstance(problin.load(path), problin.LogisticRegression)


def test_bomb_declared_in_directory_and_metadata_is_refused_before_inflating(
        tmp_path, bomb, model_members):
    # Everything consistent: the directory and the metadata both declare the 2 GiB member
    # with its true CRC and SHA-256; only the absolute cap on declared sizes refuses it.
    members, meta = model_members
    meta = json.loads(json.dumps(meta))
    meta["arrays"]["arrays/0.npy"] = {"sha256": bomb["sha256"], "bytes": bomb["size"]}
    path = _write(tmp_path / "bomb.problin", members, meta,
                  {"arrays/0.npy": (bomb["crc"], bomb["size"], bomb["stream"])})
    peak, outcome = _load_in_child(path)
    assert outcome.startswith("ModelFileError") and "MemoryError" not in outcome, outcome
    assert "arrays/0.npy" in outcome and "larger than" in outcome, outcome
    assert peak < _PEAK_LIMIT_MB, f"loading raised the peak memory by {peak:.0f} MB"


@pytest.mark.parametrize("member", ["arrays/0.npy", "metadata.json"])
def test_bomb_hidden_behind_a_small_declared_size_stops_at_that_size(
        tmp_path, bomb, model_members, member):
    # The directory (and for an array, the metadata) declares the member's honest small
    # size, with the CRC and SHA-256 of that many leading bytes; the stream behind it
    # inflates to 2 GiB. The cap sees nothing wrong: only the running limit while
    # inflating stops it.
    members, meta = model_members
    meta = json.loads(json.dumps(meta))
    if member == "metadata.json":
        # the real metadata followed by 2 GiB of zeros, in one deflate stream
        real = json.dumps(meta, indent=1).encode()
        co = zlib.compressobj(9, zlib.DEFLATED, -15)
        head = co.compress(real) + co.flush(zlib.Z_FULL_FLUSH)
        block = co.compress(bytes(_MIB)) + co.flush(zlib.Z_FULL_FLUSH)
        replaced = {member: (zlib.crc32(real), len(real), head + block * _BOMB_MIB + co.flush())}
    else:
        size = len(members[member])
        prefix = bomb["header"] + bytes(size - len(bomb["header"]))
        meta["arrays"][member] = {"sha256": hashlib.sha256(prefix).hexdigest(), "bytes": size}
        replaced = {member: (zlib.crc32(prefix), size, bomb["stream"])}
    path = _write(tmp_path / "hidden.problin", members, meta, replaced)
    peak, outcome = _load_in_child(path)
    assert outcome.startswith("ModelFileError") and "MemoryError" not in outcome, outcome
    assert member in outcome and "inflates to more than" in outcome, outcome
    assert peak < _PEAK_LIMIT_MB, f"loading raised the peak memory by {peak:.0f} MB"


def test_npy_header_must_match_the_member_size(tmp_path, model_members):
    # An array member whose .npy header promises 10^9 elements but holds a few bytes:
    # refused from the header, before numpy allocates the promised array.
    members, meta = model_members
    meta = json.loads(json.dumps(meta))
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False,
                                               "shape": (10 ** 9,)})
    data = buf.getvalue() + bytes(16)
    meta["arrays"]["arrays/0.npy"] = {"sha256": hashlib.sha256(data).hexdigest(),
                                      "bytes": len(data)}
    path = _write(tmp_path / "header.problin", members, meta,
                  {"arrays/0.npy": (zlib.crc32(data), len(data), _deflate(data))})
    with pytest.raises(ModelFileError, match=r"arrays/0\.npy.*header.*8000000000 bytes"):
        problin.load(path)


def test_other_compression_methods_are_refused(tmp_path, model_members):
    # bzip2 and LZMA members are not inflated with a running limit by zipfile (and
    # problin never writes them): refused by name, before any is read.
    members, meta = model_members
    path = tmp_path / "lzma.problin"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data, zipfile.ZIP_LZMA if name != "metadata.json"
                        else zipfile.ZIP_DEFLATED)
        zf.comment = b"problin-model sha256=" + hashlib.sha256(
            members["metadata.json"]).hexdigest().encode()
    with pytest.raises(ModelFileError, match="compression"):
        problin.load(path)


def test_too_many_members_are_refused_from_the_end_record(tmp_path, model_members):
    # The end-of-directory record is read first: a directory of a million entries would
    # cost hundreds of MB of zipfile's records before any other check.
    members, _ = model_members
    real = tmp_path / "real.problin"
    with zipfile.ZipFile(real, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    raw = bytearray(real.read_bytes())
    end = raw.rfind(b"PK\x05\x06")
    raw[end + 8:end + 12] = struct.pack("<2H", 60000, 60000)  # entries claimed
    (tmp_path / "many.problin").write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="60000 members"):
        problin.load(tmp_path / "many.problin")


def test_save_refuses_a_model_over_the_cap(tmp_path, monkeypatch):
    # What save writes, load reads: the cap applies to both.
    import problin.io.model_file as model_file
    monkeypatch.setattr(model_file, "MAX_MODEL_BYTES", 100)
    X = np.random.default_rng(1).normal(size=(30, 40))
    model = problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int))
    with pytest.raises(ValueError, match="larger than"):
        problin.save(model, tmp_path / "big.problin")
    assert not os.listdir(tmp_path)
