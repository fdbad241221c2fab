"""Target profiles: the shipped data and the reader's errors for bad ones."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from daemon.targets.profile import (
    PROFILE_DIR,
    ProfileError,
    available,
    from_dict,
    load_profile,
)


def test_qcs8550_holds_the_board_facts():
    p = load_profile("qcs8550")
    assert p.qnn.flavour == "aarch64-oe-linux-gcc11.2"
    assert (p.htp.arch, p.htp.soc_model, p.soc.soc_id) == (73, 66, 603)
    assert 43 in p.htp.binary_soc_models  # AI Hub "QCS8550 (Proxy)" = SM8550
    assert p.htp.vtcm_bytes == 8 << 20
    assert p.min_glibc == (2, 34)
    assert p.fastrpc.device_nodes == ("/dev/adsprpc-smd", "/dev/fastrpc-cdsp*")
    assert p.qnn.stub == "libQnnHtpV73Stub.so"
    # Semicolons, our skel dir first, the system DSP dirs kept.
    assert p.adsp_value.split(";")[:3] == [
        "/opt/hexvoice/qnn/dsp",
        "/usr/lib/rfsa/adsp",
        "/usr/lib/dsp/cdsp",
    ]
    assert p.adsp_value.endswith(";/dsp/cdsp;/dsp")


def test_simulator_has_no_dsp_side():
    p = load_profile("simulator")
    assert p.machine == "x86_64" and p.qnn.lib_dir is None
    assert p.fastrpc is None and p.soc is None and p.qnn.skel_libs == ()
    assert p.environment() == {}


def test_only_the_board_shares_weights_across_graphs():
    """The simulator refuses weight-shared binaries (QNN 1000), the board loads them."""
    assert load_profile("qcs8550").htp.share_weights
    assert not load_profile("simulator").htp.share_weights


def test_every_shipped_profile_loads():
    assert set(available()) >= {"qcs8550", "simulator"}
    for name in available():
        assert load_profile(name).name == name


def _data() -> dict:
    return yaml.safe_load((PROFILE_DIR / "qcs8550.yaml").read_text())


@pytest.mark.parametrize(
    "mutate,message",
    [
        (
            lambda d: d.pop("machine"),
            "machine: expected a non-empty string, found nothing (missing field)",
        ),
        (
            lambda d: d.update(machine="riscv64"),
            "machine: expected one of ['aarch64', 'x86_64'], found 'riscv64'",
        ),
        (
            lambda d: d["versions"].update(glibc="two"),
            'versions.glibc: expected a dotted version string such as "2.34", '
            "found 'two'",
        ),
        (
            lambda d: d["qnn"].update(lib_dir="opt/qnn"),
            "qnn.lib_dir: expected an absolute path or null, found 'opt/qnn'",
        ),
        (
            lambda d: d["fastrpc"].update(device_nodes=["/dev/a", "dev/b"]),
            "fastrpc.device_nodes[1]: expected an absolute path, found 'dev/b'",
        ),
        (
            lambda d: d["htp"].update(arch="73"),
            "htp.arch: expected an integer >= 0, found '73'",
        ),
        (
            lambda d: d["htp"].update(binary_soc_models=[43, True]),
            "htp.binary_soc_models[1]: expected an integer, found True",
        ),
        (
            lambda d: d["htp"].update(vtcm=8),
            "htp: expected only the fields ['arch', 'binary_soc_models', "
            "'bundle_targets', 'share_weights', 'soc_model', 'vtcm_mb'], found "
            "unknown field(s) ['vtcm']",
        ),
        (
            lambda d: d.update(adsp_library_path=["/a;/b"]),
            "adsp_library_path: expected absolute dirs without ';', found ['/a;/b']",
        ),
        (
            lambda d: d["qnn"].update(stub="libOther.so"),
            "qnn.stub: expected one of qnn.host_libs ['libQnnHtp.so', "
            "'libQnnSystem.so', 'libQnnHtpV73Stub.so'], found 'libOther.so'",
        ),
        (
            lambda d: d.update(fastrpc=[1]),
            "fastrpc: expected a mapping or null, found [1]",
        ),
        (
            lambda d: d["qnn"].update(host_libs=["libQnnHtp.so", ""]),
            "qnn.host_libs[1]: expected a non-empty string, found ''",
        ),
    ],
)
def test_malformed_profile_names_file_and_field(mutate, message):
    data = _data()
    mutate(data)
    with pytest.raises(ProfileError) as info:
        from_dict(data, Path("bad.yaml"))
    assert str(info.value) == f"bad.yaml: {message}"


def test_optional_sections_may_be_null():
    data = {**_data(), "soc": None, "fastrpc": None, "service_user": None}
    p = from_dict(data, Path("p.yaml"))
    assert p.soc is None and p.fastrpc is None and p.service_user is None


def test_unknown_profile_lists_the_known_ones(tmp_path: Path):
    with pytest.raises(ProfileError, match="available: qcs8550, simulator"):
        load_profile("qcs6490")
    bad = tmp_path / "p.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(ProfileError, match="invalid YAML"):
        load_profile(bad)
