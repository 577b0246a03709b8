"""Writing a model file respects what the path is (issue 31, item 4): a regular file is
replaced atomically keeping its mode (a new one takes the umask's), a symlink's target is
written, a directory, device, FIFO or socket is refused before anything is written, and
SIGTERM during the write leaves no temporary file. (No test here ever lets a writer at
the real /dev/null: the one that names it refuses before writing, with the rename
disabled in case it did not.)"""
import os
import socket
import stat
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
from tests.cli.conftest import invoke

import problin
from problin.io.model_file import read_model_file

X = np.random.default_rng(0).normal(size=(30, 2))
MODEL = problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int))


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.fixture
def umask():
    """Set the umask for a test; the old one back afterwards."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def test_a_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="is a FIFO"):
        problin.save(MODEL, fifo)  # opening it for writing would block: refused first
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and _leftovers(tmp_path) == []


def test_a_directory_and_a_socket_are_refused(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        problin.save(MODEL, tmp_path)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(ValueError, match="is a socket"):
            problin.save(MODEL, tmp_path / "sock")
        assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    assert _leftovers(tmp_path) == []


def test_a_character_device_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    def no_rename(*args):
        raise AssertionError("a device node was about to be replaced")
    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(ValueError, match="is a character device"):
        problin.save(MODEL, "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    try:  # a device node of our own, where one may be made
        os.mknod(tmp_path / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        return
    with pytest.raises(ValueError, match="is a character device"):
        problin.save(MODEL, tmp_path / "null")
    assert stat.S_ISCHR(os.lstat(tmp_path / "null").st_mode)


def test_a_symlink_has_its_target_written(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "m.problin"
    target.write_bytes(b"old")
    link = tmp_path / "link.problin"
    link.symlink_to(target)
    problin.save(MODEL, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert isinstance(read_model_file(target).model, problin.LogisticRegression)
    dangling = tmp_path / "dangling.problin"  # to a file yet to be written: created
    dangling.symlink_to(tmp_path / "real" / "new.problin")
    problin.save(MODEL, dangling)
    assert dangling.is_symlink() and (tmp_path / "real" / "new.problin").is_file()
    assert _leftovers(tmp_path) == _leftovers(tmp_path / "real") == []


def test_an_existing_file_keeps_its_mode(tmp_path, umask):
    umask(0o077)  # would give 0600 to a new file: the old mode must win
    path = tmp_path / "m.problin"
    path.write_bytes(b"old")
    path.chmod(0o644)
    problin.save(MODEL, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o640)
    problin.save(MODEL, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_private_file_is_never_readable_while_rewritten(tmp_path, umask, monkeypatch):
    path = tmp_path / "m.problin"
    path.write_bytes(b"old")
    path.chmod(0o600)
    seen = []
    write = zipfile.ZipFile.writestr

    def writestr(self, *args, **kwargs):  # the temporary file's mode during the write
        seen.extend(stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("*.tmp"))
        return write(self, *args, **kwargs)
    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    problin.save(MODEL, path)
    assert seen and set(seen) == {0o600}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_takes_the_umask_mode(tmp_path, umask, mask, mode):
    umask(mask)
    problin.save(MODEL, tmp_path / "m.problin")
    assert stat.S_IMODE((tmp_path / "m.problin").stat().st_mode) == mode


_CHILD = textwrap.dedent("""
    import os, signal, sys, zipfile
    import numpy as np
    import problin
    X = np.random.default_rng(0).normal(size=(30, 2))
    model = problin.LogisticRegression(alpha=1.0).fit(X, (X[:, 0] > 0).astype(int))
    write = zipfile.ZipFile.writestr
    def writestr(self, *args, **kwargs):  # SIGTERM in the middle of the write
        write(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
    zipfile.ZipFile.writestr = writestr
    def handler(signum, frame):  # first the program's own handler: it is left to run
        raise RuntimeError("handled")
    signal.signal(signal.SIGTERM, handler)
    try:
        problin.save(model, sys.argv[1])
    except RuntimeError as exc:
        print(exc, sorted(f for f in os.listdir(".") if f.endswith(".tmp")), flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # then the default action: it still ends us
    problin.save(model, sys.argv[1])
    print("not reached")
""")


def test_sigterm_during_the_write_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "m.problin"
    path.write_bytes(b"the old model")
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout == "handled []\n" and proc.returncode == -15, (proc.stdout, proc.stderr)
    assert _leftovers(tmp_path) == [] and "Traceback" not in proc.stderr, proc.stderr
    assert path.read_bytes() == b"the old model"  # neither write completed


def test_fit_refuses_a_fifo_before_fitting(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(20)))
    os.mkfifo("pipe")
    result = invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "-o", "pipe")
    assert result.exit_code == 2 and "is a FIFO" in result.output, result.output
    assert "fitted" not in result.output and "Traceback" not in result.output
    assert stat.S_ISFIFO(os.lstat("pipe").st_mode) and _leftovers(tmp_path) == []
    os.symlink("real.problin", "link.problin")
    result = invoke("fit", "d.csv", "-t", "y", "-m", "logistic", "-o", "link.problin")
    assert result.exit_code == 0 and os.path.islink("link.problin"), result.output
    assert isinstance(read_model_file("real.problin").model, problin.LogisticRegression)
