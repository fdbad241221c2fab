"""FastRPC device access for the service user, read from the target's own
passwd(5) / group(5) so ``--root`` trees work.

Without read/write access to ``/dev/adsprpc-smd`` (usually ``crw-rw---- system
system``) or ``/dev/fastrpc-cdsp*`` (group ``fastrpc`` on upstream images) QNN
logs "createUnsignedPD ... not supported" and "openSessionForPriority failed
0x200" (docs/board.md, board setup).  Group changes reach a process only at its next
login or restart, hence the re-login hint.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .checks import Check, Finding, Target, error, ok


@dataclass(frozen=True)
class Accounts:
    """passwd(5) / group(5) of the target: name → uid/gid, group → gid/members."""

    users: Mapping[str, tuple[int, int]]
    groups: Mapping[str, tuple[int, tuple[str, ...]]]

    @classmethod
    def read(cls, t: Target) -> Accounts:
        def rows(rel: str) -> list[list[str]]:
            try:
                text = t.path(rel).read_text()
            except OSError:
                return []
            return [ln.split(":") for ln in text.splitlines() if ln.count(":") >= 3]

        users = {r[0]: (int(r[2]), int(r[3])) for r in rows("/etc/passwd")}
        groups = {
            r[0]: (int(r[2]), tuple(m for m in r[3].split(",") if m))
            for r in rows("/etc/group")
        }
        return cls(users, groups)

    def gids_of(self, user: str) -> set[int]:
        gids = {self.users[user][1]}
        return gids | {g for g, members in self.groups.values() if user in members}

    def group_name(self, gid: int) -> str:
        return next((n for n, (g, _) in self.groups.items() if g == gid), str(gid))


def can_read_write(st: os.stat_result, uid: int, gids: set[int]) -> bool:
    rw = stat.S_IRUSR | stat.S_IWUSR
    if uid == 0:
        return True
    if st.st_uid == uid:
        return st.st_mode & rw == rw
    if st.st_gid in gids:
        return st.st_mode & (rw >> 3) == rw >> 3
    return st.st_mode & (rw >> 6) == rw >> 6


@dataclass(frozen=True)
class DeviceAccess(Check):
    """The service user can open a FastRPC device node read/write."""

    patterns: tuple[str, ...]
    user: str
    symptom: str

    def run(self, t: Target) -> list[Finding]:
        acct = Accounts.read(t)
        if self.user not in acct.users:
            return [
                error(
                    f"user {self.user!r} does not exist",
                    "sudo board/install.sh (creates it), or --user NAME",
                )
            ]
        nodes = sorted(
            {Path(p) for pat in self.patterns for p in glob.glob(str(t.path(pat)))}
        )
        if not nodes:
            return [
                error(
                    f"no FastRPC device node ({', '.join(self.patterns)})",
                    "the kernel's fastrpc driver is not up or this image lacks CDSP "
                    "support: check `dmesg | grep -i fastrpc` and the BSP",
                )
            ]
        uid, gids = acct.users[self.user][0], acct.gids_of(self.user)
        shown = [f"/{n.relative_to(t.root)}" for n in nodes]
        stats = [n.stat() for n in nodes]
        usable = [s for s, st in zip(shown, stats) if can_read_write(st, uid, gids)]
        if not usable:
            group = acct.group_name(stats[0].st_gid)
            mode = stat.filemode(stats[0].st_mode)
            return [
                error(
                    f"{self.user} cannot read/write {shown[0]} ({mode}, group "
                    f"{group}); {self.symptom}",
                    f"sudo usermod -aG {group} {self.user}; then "
                    f"`sudo systemctl restart hexvoice` (a login shell must log "
                    f"out and back in)",
                )
            ]
        if t.live and self._stale_session(acct, stats[0].st_gid):
            group = acct.group_name(stats[0].st_gid)
            return [
                error(
                    f"{self.user} is in group {group}, but this login session "
                    f"started before that",
                    "log out and back in (or run `newgrp " + group + "`)",
                )
            ]
        return [ok(f"{self.user} can open {', '.join(usable)}")]

    def _stale_session(self, acct: Accounts, gid: int) -> bool:
        me = [n for n, (uid, _) in acct.users.items() if uid == os.getuid()]
        return (
            self.user in me
            and os.getuid() != 0
            and gid in acct.gids_of(self.user)
            and gid not in {*os.getgroups(), os.getgid(), os.getegid()}
        )
