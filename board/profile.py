"""``python -m board.profile NAME [--env | --shell]``: a profile, for the installer.

``--env`` prints the service environment file (``/etc/hexvoice/hexvoice.env``) and
``--shell`` the variables ``board/install.sh`` reads; the profiles themselves are
``daemon.targets.profile`` (the runtime checks bundles against them too).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from daemon.targets.profile import Profile, ProfileError, available, load_profile


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m board.profile")
    parser.add_argument("profile", help=f"one of {available()} or a .yaml path")
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--env", action="store_true", help="print the service environment file"
    )
    what.add_argument(
        "--shell", action="store_true", help="print variables for board/install.sh"
    )
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
    except ProfileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.env:
        print(f"# hexvoice service environment (profile {profile.name}); edits kept")
        for key, value in profile.environment().items():
            # Quoted: ';' ends a command when a shell sources the file, and systemd's
            # EnvironmentFile strips the quotes.
            print(f'{key}="{value}"')
    elif args.shell:
        print(shell_variables(profile))
    else:
        print(f"{profile.name}: {profile.description} ({profile.source})")
    return 0


def shell_variables(p: Profile) -> str:
    """bash assignments (arrays for lists) of what board/install.sh needs."""
    values: dict[str, str | tuple[str, ...]] = {
        "PROFILE_NAME": p.name,
        "QNN_FLAVOUR": p.qnn.flavour,
        "QNN_LIB_DIR": p.qnn.lib_dir or "",
        "QNN_DSP_DIR": p.qnn.dsp_dir or "",
        "HTP_ARCH": str(p.htp.arch),
        "HOST_LIBS": p.qnn.host_libs,
        "SKEL_LIBS": p.qnn.skel_libs,
        "DEVICE_NODES": p.fastrpc.device_nodes if p.fastrpc else (),
        "DEVICE_GROUP": p.fastrpc.device_group if p.fastrpc else "",
        "SERVICE_USER": p.service_user or "",
        "INSTALL_PREFIX": p.install_prefix,
    }
    lines = []
    for key, v in values.items():
        if isinstance(v, tuple):
            lines.append(f"{key}=({' '.join(shlex.quote(x) for x in v)})")
        else:
            lines.append(f"{key}={shlex.quote(v)}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
