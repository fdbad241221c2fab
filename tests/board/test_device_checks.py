"""FastRPC device access for the service user, from the fake tree's passwd/group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from board.checks import ERROR, OK, Target
from board.device_checks import Accounts, DeviceAccess, can_read_write

GID = os.getgid()


def _groups(board: Path, text: str) -> None:
    (board / "etc/group").write_text(text)


def test_member_of_the_device_group_can_open_the_node(run_check, qcs8550, board):
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == OK and f.message == "hexvoice can open /dev/adsprpc-smd"


def test_user_outside_the_group_gets_usermod_and_relogin(run_check, qcs8550, board):
    _groups(board, f"system:x:{GID}:someone\nhexvoice:x:990:\n")
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == ERROR
    assert f.message.startswith(
        "hexvoice cannot read/write /dev/adsprpc-smd (-rw-rw----, group system)"
    )
    assert "openSessionForPriority failed 0x200" in f.message
    assert f.fix.startswith("sudo usermod -aG system hexvoice")
    assert "restart hexvoice" in f.fix and "log out and back in" in f.fix


def test_fix_names_the_nodes_own_group(run_check, qcs8550, board):
    # Upstream fastrpc images: /dev/fastrpc-cdsp owned by group fastrpc.
    (board / "dev/adsprpc-smd").unlink()
    (board / "dev/fastrpc-cdsp").write_text("")
    (board / "dev/fastrpc-cdsp").chmod(0o660)
    _groups(board, f"fastrpc:x:{GID}:\nhexvoice:x:990:\n")
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == ERROR and "/dev/fastrpc-cdsp" in f.message
    assert f.fix.startswith("sudo usermod -aG fastrpc hexvoice")


def test_world_accessible_node_is_fine(run_check, qcs8550, board):
    _groups(board, f"system:x:{GID}:\nhexvoice:x:990:\n")
    (board / "dev/adsprpc-smd").chmod(0o666)
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == OK


def test_no_device_node(run_check, qcs8550, board):
    (board / "dev/adsprpc-smd").unlink()
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == ERROR and f.message.startswith("no FastRPC device node")
    assert "dmesg" in f.fix


def test_missing_service_user_points_at_the_installer(run_check, qcs8550, board):
    (board / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (f,) = run_check("device-access", qcs8550, root=board)
    assert f.level == ERROR and "user 'hexvoice' does not exist" in f.message
    assert "install.sh" in f.fix


def test_user_option_checks_another_account(run_check, qcs8550, board):
    with (board / "etc/passwd").open("a") as p:
        p.write("ubuntu:x:1000:1000::/home/ubuntu:/bin/bash\n")
    (f,) = run_check("device-access", qcs8550, root=board, user="ubuntu")
    assert f.level == ERROR and f.fix.startswith("sudo usermod -aG system ubuntu")


def test_accounts_and_permission_bits(board: Path):
    acct = Accounts.read(Target(root=board))
    assert acct.users["hexvoice"] == (990, 990)
    assert acct.gids_of("hexvoice") == {990, GID}
    assert acct.group_name(GID) == "system" and acct.group_name(4242) == "4242"
    st = (board / "dev/adsprpc-smd").stat()
    assert can_read_write(st, 990, {GID}) and not can_read_write(st, 990, {990})
    assert can_read_write(st, 0, set())  # root always can


@pytest.mark.skipif(os.getuid() == 0, reason="root reaches every node anyway")
def test_stale_login_session_is_detected():
    # This very process: a group that lists us in /etc/group but that our session
    # lacks (usermod after login) is what the re-login hint is for.
    me, have = "me", os.getgroups() or [os.getgid()]
    missing = max(have) + 4242
    acct = Accounts(
        {me: (os.getuid(), os.getgid())},
        {"system": (missing, (me,)), "audio": (have[0], (me,))},
    )
    check = DeviceAccess("device-access", ("/dev/adsprpc-smd",), me, "")
    assert check._stale_session(acct, missing)
    assert not check._stale_session(acct, have[0])
