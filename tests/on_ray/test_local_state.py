"""The local setup's state folder (rnnlab.cluster.local): created private and checked before each use, so that
another user of the machine who made it first, or made it a link, cannot plant a state (pids that ``down`` would
signal), a Ray token or a proxy configuration; what is written in it is private; every Ray port is pinned."""

from __future__ import annotations

import os
import stat

import pytest

from rnnlab.cluster import local

NOBODY = 65534


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_state_folder_is_made_private_and_what_is_written_there_too(tmp_path):
    folder = local.private_folder(tmp_path / "state")
    assert mode(folder) == 0o700 and folder.stat().st_uid == os.geteuid()
    token = local.make_token(folder)
    assert mode(token) == 0o600 and len(token.read_text()) == 64 and int(token.read_text(), 16) >= 0
    assert token.read_text() != local.make_token(folder).read_text()  # a new one each time
    local.State("some-ns", local.ADDRESS).save(folder)
    assert mode(folder / "state.json") == 0o600 and local.State.load(folder).netns == "some-ns"
    assert local.auth_env(folder) == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}


@pytest.mark.parametrize("made_by", ["an open folder", "a link", "another user", "a file"])
def test_a_state_folder_someone_else_could_have_made_is_refused_and_left_alone(tmp_path, made_by):
    folder, elsewhere = tmp_path / "state", tmp_path / "theirs"
    elsewhere.mkdir(mode=0o700)
    if made_by == "an open folder":
        folder.mkdir()
        folder.chmod(0o777)
    elif made_by == "a link":
        folder.symlink_to(elsewhere)
    elif made_by == "another user":
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root")
        folder.mkdir(mode=0o700)
        os.chown(folder, NOBODY, NOBODY)
    else:
        folder.write_text("{}")
    if folder.is_dir() and not folder.is_symlink():
        planted = {"netns": "x", "address": "y", "nodes": [{"role": "head", "pid": 1, "log": "z"}]}
        (folder / "state.json").write_text(str(planted).replace("'", '"'))
    expected = {"an open folder": "open to other users", "a link": "not a folder", "another user": "belongs to user",
                "a file": "not a folder"}[made_by]
    for use in (local.private_folder, local.State.load, local.down, local.status, local.open_namespace):
        with pytest.raises(local.ClusterError, match=expected):
            use(folder)
    assert folder.exists() or folder.is_symlink()  # down did not delete it, nor signal the pids it names
    assert elsewhere.is_dir()


def test_every_ray_port_is_pinned_and_nodes_on_one_machine_do_not_collide():
    flags = [dict(f.removeprefix("--").split("=") for f in local.port_flags(i)) for i in range(3)]
    for i, given in enumerate(flags):
        assert set(local.NODE_PORTS) | {"min-worker-port", "max-worker-port"} <= set(given)
        assert ("dashboard-port" in given) == (i == 0)
    ports = [int(v) for given in flags for k, v in given.items() if not k.endswith("worker-port")]
    assert len(ports) == len(set(ports)) and str(local.PORT) not in [str(p) for p in ports]
    ranges = [(int(g["min-worker-port"]), int(g["max-worker-port"])) for g in flags]
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
    command = local.node_command("worker1", local.STATE_DIR / "ray", 1, 1)
    assert all(f in command for f in local.port_flags(1)) and f"--address={local.ADDRESS}" in command
