"""board/install.sh and uninstall.sh: golden --dry-run output in fake roots, input
errors, and shellcheck on every shell script of the repository.

Regenerate the golden files with ``HEXVOICE_UPDATE_GOLDEN=1 pytest tests/board``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.targets.profile import load_profile

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("HEXVOICE_UPDATE_GOLDEN") == "1"
#: Files the installer takes from systemd/ when the checkout has them.
SYSTEMD_FILES = (
    "hexvoice.service",
    "hexvoice.socket",
    "hexvoice.sysusers",
    "hexvoice.tmpfiles",
    "config.yaml",
)
#: Known shellcheck findings in files this suite does not own (strict: fixed = fail).


def shell_scripts() -> list[str]:
    """Every shell script in the checkout: *.sh, or a shebang naming a shell."""
    found = []
    for top in ("board", "scripts", "systemd", "tests"):
        for f in sorted((REPO / top).rglob("*")):
            if not f.is_file() or "__pycache__" in f.parts or f.suffix == ".py":
                continue
            with f.open("rb") as fh:
                head = fh.readline(100)
            if f.suffix == ".sh" or (
                head.startswith(b"#!") and head.rstrip().endswith((b"bash", b"sh"))
            ):
                found.append(str(f.relative_to(REPO)))
    return found


@pytest.fixture
def fake(tmp_path: Path) -> dict[str, Path]:
    """A checkout (with systemd files), a fresh board root and a QAIRT SDK tree."""
    repo, root, qairt = tmp_path / "repo", tmp_path / "root", tmp_path / "qairt"
    board = repo / "board"
    (board / "profiles").mkdir(parents=True)
    for f in ("__init__.py", "profile.py", "install.sh", "uninstall.sh", "_common.sh"):
        shutil.copy2(REPO / "board" / f, board / f)
    for f in (REPO / "daemon/targets/").glob("*.yaml"):
        shutil.copy2(f, board / "profiles" / f.name)
    (repo / "systemd").mkdir()
    for f in SYSTEMD_FILES:
        (repo / "systemd" / f).write_text(f"# {f}\n")
    (root / "etc").mkdir(parents=True)
    (root / "etc/passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (root / "etc/group").write_text("root:x:0:\nsystem:x:1000:\n")
    p = load_profile("qcs8550")
    libs = qairt / "lib" / p.qnn.flavour
    skels = qairt / "lib" / "hexagon-v73" / "unsigned"
    for d in (libs, skels, qairt / "lib/aarch64-oe-linux-gcc9.3"):
        d.mkdir(parents=True)
    for f in p.qnn.host_libs:
        (libs / f).write_text(f"host {f}\n")
    for f in (*p.qnn.skel_libs, "libqnnhtpv73.cat"):
        (skels / f).write_text(f"dsp {f}\n")
    return {"repo": repo, "root": root, "qairt": qairt}


def sh(fake: dict[str, Path], script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "bash",
            str(fake["repo"] / "board" / script),
            "--python",
            sys.executable,
            "--root",
            str(fake["root"]),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def normalised(fake: dict[str, Path], text: str) -> str:
    for key in ("root", "qairt", "repo"):  # longest paths first: all share tmp_path
        text = text.replace(str(fake[key]), f"<{key.upper()}>")
    return text.replace(sys.executable, "<PYTHON>")


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), (
        f"{name} changed (HEXVOICE_UPDATE_GOLDEN=1 to accept)"
    )


def make_installed(fake: dict[str, Path]) -> None:
    """What a finished install leaves in the root (as far as files go)."""
    root, repo, qairt = fake["root"], fake["repo"], fake["qairt"]
    p = load_profile("qcs8550")
    (root / "etc/passwd").write_text(
        "root:x:0:0::/root:/bin/sh\nhexvoice:x:990:990::/var/lib/hexvoice:/bin/false\n"
    )
    (root / "etc/group").write_text(
        "root:x:0:\nsystem:x:1000:hexvoice\nhexvoice:x:990:\n"
    )
    for d in (
        "opt/hexvoice/venv/bin",
        "var/lib/hexvoice/voices",
        "usr/local/bin",
        "etc/hexvoice",
        "etc/systemd/system",
        "etc/sysusers.d",
        "etc/tmpfiles.d",
    ):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "opt/hexvoice/venv/bin/python").symlink_to(sys.executable)
    (root / "usr/local/bin/hexvoice").symlink_to("/opt/hexvoice/venv/bin/hexvoice")
    shutil.copytree(qairt / "lib" / p.qnn.flavour, root / "opt/hexvoice/qnn/lib")
    shutil.copytree(qairt / "lib/hexagon-v73/unsigned", root / "opt/hexvoice/qnn/dsp")
    (root / "opt/hexvoice/qnn/lib/hexvoice-qnn.yaml").write_text(
        f"flavour: {p.qnn.flavour}\nqairt: {qairt}\n"
    )
    (root / "etc/hexvoice/hexvoice.env").write_text("# edited by hand\n")
    (root / "etc/hexvoice/config.yaml").write_text("voice: mine\n")
    for u in ("hexvoice.service", "hexvoice.socket"):
        shutil.copy2(repo / "systemd" / u, root / "etc/systemd/system" / u)
    for kind in ("sysusers", "tmpfiles"):
        shutil.copy2(
            repo / f"systemd/hexvoice.{kind}", root / f"etc/{kind}.d/hexvoice.conf"
        )


def test_fresh_install_dry_run(fake):
    p = sh(fake, "install.sh", "--dry-run", "--qairt", str(fake["qairt"]))
    assert p.returncode == 0, p.stderr
    assert_golden("install_fresh.txt", normalised(fake, p.stdout))
    assert sorted(x.name for x in fake["root"].rglob("*")) == ["etc", "group", "passwd"]


def test_second_install_only_repeats_idempotent_commands(fake):
    make_installed(fake)
    p = sh(fake, "install.sh", "--dry-run", "--qairt", str(fake["qairt"]))
    assert p.returncode == 0, p.stderr
    out = normalised(fake, p.stdout)
    assert_golden("install_again.txt", out)
    assert "useradd" not in out and "install -m" not in out and "+ write" not in out


def test_group_comes_from_the_device_node(fake):
    node = fake["root"] / "dev/fastrpc-cdsp0"
    node.parent.mkdir()
    node.write_text("")
    (fake["root"] / "etc/group").write_text(f"fastrpc:x:{node.stat().st_gid}:\n")
    p = sh(fake, "install.sh", "--dry-run", "--qairt", str(fake["qairt"]))
    assert p.returncode == 0, p.stderr
    assert "--groups fastrpc hexvoice" in p.stdout


@pytest.mark.parametrize(
    "prepare,args,message",
    [
        (
            lambda f: shutil.rmtree(f["qairt"] / "lib/aarch64-oe-linux-gcc11.2"),
            ["--qairt"],
            "needs lib/aarch64-oe-linux-gcc11.2; this SDK has:",
        ),
        (
            lambda f: (
                f["qairt"] / "lib/hexagon-v73/unsigned/libQnnHtpV73Skel.so"
            ).unlink(),
            ["--qairt"],
            "unsigned/libQnnHtpV73Skel.so missing",
        ),
        (lambda f: None, [], "no QNN libraries installed yet: pass --qairt"),
        (
            lambda f: (f["root"] / "etc/group").write_text("root:x:0:\n"),
            ["--qairt"],
            "group system does not exist",
        ),
    ],
)
def test_bad_input_is_refused_before_any_action(fake, prepare, args, message):
    prepare(fake)
    if args:
        args = ["--qairt", str(fake["qairt"])]
    p = sh(fake, "install.sh", "--dry-run", *args)
    assert p.returncode == 1 and message in p.stderr
    assert "+ " not in p.stdout


def test_uninstall_keeps_user_data(fake):
    make_installed(fake)
    p = sh(fake, "uninstall.sh", "--dry-run")
    assert p.returncode == 0, p.stderr
    assert_golden("uninstall.txt", normalised(fake, p.stdout))
    assert "etc/hexvoice" not in p.stdout.replace("# kept /etc/hexvoice", "")
    assert "var/lib/hexvoice" not in p.stdout.replace("# kept /var/lib/hexvoice", "")


def test_uninstall_purge(fake):
    make_installed(fake)
    p = sh(fake, "uninstall.sh", "--dry-run", "--purge")
    assert p.returncode == 0, p.stderr
    assert_golden("uninstall_purge.txt", normalised(fake, p.stdout))


@pytest.mark.parametrize(
    "script",
    shell_scripts(),
)
def test_shellcheck_clean(script):
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed: apt-get install -y shellcheck")
    p = subprocess.run(
        ["shellcheck", "-x", script], cwd=REPO, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stdout


@pytest.mark.parametrize(
    ("script", "option", "message"),
    [
        ("install.sh", "--root", "--root needs a directory"),
        ("install.sh", "--qairt", "--qairt needs a directory"),
        ("uninstall.sh", "--root", "--root needs a directory"),
    ],
)
def test_a_path_option_without_its_value_stops_before_any_action(
    fake, script, option, message
):
    # the value was checked inside $(...) once, which only stopped the
    # subshell: the script went on with an empty root, i.e. the live /
    p = sh(fake, script, "--dry-run", option)
    assert p.returncode != 0
    # that one error and nothing after it: the script stopped right there
    assert message in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "+ " not in p.stdout
